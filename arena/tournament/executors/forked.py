"""A worker process forked from the arena, and when forking one is safe.

``ForkedWorker`` gives a forked child the calls of ``subprocess.Popen`` that
the executor uses, so that it holds forked and exec'd workers alike
(``WorkerProcess``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from typing import Protocol

__all__ = ["WorkerProcess", "ForkedWorker", "thread_count", "can_fork"]


class WorkerProcess(Protocol):
    """What the executor uses of a worker process: ``subprocess.Popen``'s
    calls (an exec'd worker is one; a forked one is a ``ForkedWorker``)."""

    pid: int

    def poll(self) -> int | None: ...

    def wait(self, timeout: float | None = None) -> int: ...

    def send_signal(self, sig: int) -> None: ...

    def kill(self) -> None: ...


class ForkedWorker:
    """A worker forked from this process, seen as ``subprocess.Popen`` sees
    its child: ``returncode`` is the exit code, or minus the signal that
    killed it."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:   # reaped by someone else: its status is lost
                self.returncode = 0
                return self.returncode
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        pause = 0.001
        while (code := self.poll()) is None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout or 0.0)
            time.sleep(pause if left is None else min(pause, left))
            pause = min(pause * 2, 0.05)
        return code

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass  # it ended just now: the next poll reaps it

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def thread_count() -> int:
    """This process's threads, as the kernel counts them (those of C
    libraries too, which ``threading`` does not see); 0 if unknown."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Threads:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def can_fork(wait: float = 0.0) -> bool:
    """Whether a worker forked from this process now is safe: Linux, and no
    thread but this one (a fork copies only the thread that forks).
    ``wait``: seconds to give threads Python has let go (the bots' watchdog,
    joined once its last bot has gone) to be gone from the kernel's count
    too.  Threads still running (an application's own) are not waited for:
    the worker is exec'd at once."""
    if sys.platform != "linux" or not hasattr(os, "fork"):
        return False
    deadline = time.monotonic() + wait
    while thread_count() != 1:
        if time.monotonic() >= deadline or thread_count() <= threading.active_count():
            return False
        time.sleep(0.01)
    return True
