"""Test bot: on the first request, allocates (and touches) 10 MB blocks without end."""
import sys

sys.stdin.readline()
hoard = []
while True:
    hoard.append(b"\x01" * (10 << 20))
