"""The live children of a process, from /proc: for the scripts the worker
tests run in subprocesses (they put this directory on sys.path)."""

from __future__ import annotations

import os


def children(pid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            if int(stat[stat.rfind(")") + 2:].split()[1]) == pid:   # field 4: the parent's pid
                found.append(int(name))
    return found
