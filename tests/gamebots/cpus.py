"""Plays like minimal; at each start it writes to stderr the CPUs it may run
on, and whether it could widen that to every CPU of the machine."""
import os
import sys

import common


def start(msg):
    cpus = sorted(os.sched_getaffinity(0))
    try:
        os.sched_setaffinity(0, range(os.cpu_count() or 1))
        moved = "moved"
    except OSError:
        moved = "refused"
    sys.stderr.write(f"CPUS {','.join(map(str, cpus))} {moved}\n")
    sys.stderr.flush()
    if moved == "moved":
        os.sched_setaffinity(0, cpus)   # as it was: the next match reports the arena's choice
    return common.ready(msg, "cpus")


common.run(on_start=start)
