"""Test bot: on the first request, forks; parent and child each allocate 150 MB and
sleep.  Each stays under a 200 MB per-process limit, together they are over it.
--setsid: the child leaves the process group (and session) first."""
import os
import sys
import time

sys.stdin.readline()
if os.fork() == 0 and "--setsid" in sys.argv:
    os.setsid()
hoard = [b"\x01" * (10 << 20) for _ in range(15)]
while True:
    time.sleep(3600)
