"""At its first request, SIGKILLs its parent if that is an arena worker process
(never the arena itself), then exits: a worker dying in the middle of a match.
``--term``: SIGTERM instead, as a user's `kill PID` or a process manager sends."""
import os
import signal
import sys
from pathlib import Path

import common


def kill_worker(msg):
    parent = os.getppid()
    cmdline = Path(f"/proc/{parent}/cmdline").read_bytes()
    name = Path(f"/proc/{parent}/comm").read_text().strip()
    if b"arena.tournament.executors.worker" in cmdline or name == "arena-worker":   # exec'd or forked
        os.kill(parent, signal.SIGTERM if "--term" in sys.argv else signal.SIGKILL)
    sys.exit(5)


common.run(on_request=kill_worker)
