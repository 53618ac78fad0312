"""Holding back SIGINT and SIGTERM while a bot is being started.

A start is a few system calls the arena must not be interrupted between:
``subprocess.Popen`` has forked bwrap but not yet returned (an interrupt
there loses the only handle that could kill it), and bwrap has told the
sandbox's pid but not yet let that process go on (an arena that dies then
leaves it waiting for ever; see ``sandbox.Gates``).  Inside
``interrupts_deferred()`` the two signals are only recorded; on leaving, the
handlers that were there are put back and each recorded signal is handed to
them, so a Ctrl-C still interrupts, a few milliseconds later, at a point
where the caller can clean up.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["interrupts_deferred"]

DEFERRED = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield           # signal handlers live in the main thread only
        return
    caught: list[int] = []

    def record(signum: int, frame: FrameType | None) -> None:
        caught.append(signum)

    before = {s: signal.getsignal(s) for s in DEFERRED}
    held = [s for s in DEFERRED if before[s] != signal.SIG_IGN]
    for s in held:
        signal.signal(s, record)
    try:
        yield
    finally:
        for s in held:
            signal.signal(s, before[s])
        for signum in dict.fromkeys(caught):
            handler = before[signal.Signals(signum)]
            if callable(handler):
                handler(signum, None)
            elif handler == signal.SIG_DFL:
                os.kill(os.getpid(), signum)    # the default action: now
