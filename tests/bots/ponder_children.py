"""Test bot: answers each line at once with {"id": ..., "spun": N, "cpu": S},
and computes between its turns in short-lived child processes, one after
another, each computing MS ms of CPU (``--children MS``, default 5) and
exiting, one every ``--every MS`` ms (default 25; with ``--autoreap``).
N counts their work and S sums their CPU seconds (shared memory).

With ``--autoreap`` the bot ignores SIGCHLD, so the kernel reaps the children
at once and adds their CPU time to no process (POSIX: the times of children
never waited for are lost): a child that lives a few ms between two 0.25 s
scans of the watchdog is never seen, nor is its CPU anywhere to be read
afterwards.  Without it the bot waits for each child, whose CPU then counts
in the bot's own (its children's times in /proc/PID/stat)."""
import json
import mmap
import os
import signal
import struct
import sys
import threading
import time

shared = mmap.mmap(-1, 16)          # work count, CPU seconds: written by the children
MS = float(sys.argv[sys.argv.index("--children") + 1]) if "--children" in sys.argv else 5.0
EVERY = float(sys.argv[sys.argv.index("--every") + 1]) if "--every" in sys.argv else 25.0
AUTOREAP = "--autoreap" in sys.argv

if AUTOREAP:
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)


def child() -> None:
    start = time.process_time()
    n = 0
    while time.process_time() - start < MS / 1000:
        n += 1
    done, cpu = struct.unpack("qd", shared[:16])
    shared[:16] = struct.pack("qd", done + n, cpu + time.process_time() - start)
    os._exit(0)


def spawn_forever() -> None:
    parent = os.getpid()
    while True:
        pid = os.fork()
        if pid == 0:
            child()
        if AUTOREAP:
            time.sleep(EVERY / 1000)        # one child at a time, and few forks: forking is the bot's CPU
        else:
            os.waitpid(pid, 0)
        if os.getpid() != parent:
            os._exit(0)


threading.Thread(target=spawn_forever, daemon=True).start()

for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") == "quit":
        break
    if msg.get("type") == "end":
        continue
    spun, cpu = struct.unpack("qd", shared[:16])
    sys.stdout.write(json.dumps({"id": msg.get("id"), "spun": spun, "cpu": cpu}) + "\n")
    sys.stdout.flush()
