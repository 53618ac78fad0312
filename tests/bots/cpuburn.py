"""Test bot: on the first request, burns CPU forever."""
import sys

sys.stdin.readline()
n = 0
while True:
    n += 1
