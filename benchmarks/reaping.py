"""Shared by the benchmarks that make themselves a child subreaper."""

from __future__ import annotations

import os
import time


def reap_orphans(deadline: float) -> None:
    """Wait, until ``deadline`` (monotonic), for the processes left to this
    subreaper (a bot whose sandbox was killed, a resource tracker): their CPU
    counts in RUSAGE_CHILDREN only once they are reaped."""
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.02)
