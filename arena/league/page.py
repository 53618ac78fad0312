"""``arena league run --serve PORT``: the live page, served beside the run by a child process it owns.

The child is ``arena league serve`` itself (the same page, the same
``--host``), exec'd rather than a thread of the run, because the run forks
its match workers: a thread's listening socket, event loop and web stack
would be copied into every worker, and the page's renders (a bootstrap fit
per change) would take the run's interpreter lock from the matches.

Nothing is left listening once the run ends, however it ends:

- the run stops the child when it returns, raises, or is stopped by Ctrl-C
  or SIGTERM (a SIGTERM, then a SIGKILL after ``STOP_SECONDS``);
- a run killed outright (SIGKILL) takes the child with it: Linux sends it a
  SIGTERM when the run dies (``PR_SET_PDEATHSIG``);
- a Ctrl-C at the terminal reaches the run alone (the child has a session
  of its own), so the run says in one line what it kept, and stops the page.

The child's output goes to ``RESULTS/logs/page.log``; a page that cannot start
(the port taken, the league extra not installed) stops the run before it
plays, in one line quoting that log's last line.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .config import LeagueConfig, LeagueError

__all__ = ["PAGE_LOG", "served_beside"]

PAGE_LOG = "page.log"
READY_SECONDS = 120.0     # how long the page may take to listen (imports on a loaded machine)
STOP_SECONDS = 10.0       # how long it may take to stop gracefully before it is killed
PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    # In the child, before exec: SIGTERM it when the run dies, even by SIGKILL (kept across exec).
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass        # not Linux: the run's own stop still ends it


def _listening(host: str, port: int) -> bool:
    # A wildcard address is reached on loopback.
    target = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)
    try:
        with socket.create_connection((target, port), timeout=1.0):
            return True
    except OSError:
        return False


def _last_line(log: Path) -> str:
    try:
        lines = [" ".join(line.split()) for line in log.read_text(encoding="utf-8", errors="replace").splitlines()]
    except OSError:
        return ""
    lines = [line for line in lines if line]
    return lines[-1] if lines else ""


@contextmanager
def served_beside(config: LeagueConfig, host: str, port: int) -> Iterator[subprocess.Popen[bytes]]:
    """The league's page on ``host``:``port`` for the duration of the block; LeagueError if it cannot start."""
    log = config.results / "logs" / PAGE_LOG
    log.parent.mkdir(parents=True, exist_ok=True)
    if _listening(host, port):       # else that program's answer would pass for the page's
        raise LeagueError(f"--serve {port}: another program listens on {host}:{port} already; choose another port")
    argv = [sys.executable, "-m", "arena", "league", "serve", str(config.dir), "--host", host, "--port", str(port)]
    with open(log, "ab") as out:
        try:
            child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                     start_new_session=True, preexec_fn=_die_with_parent)
        except OSError as exc:
            raise LeagueError(f"--serve {port}: cannot start the page: {exc.strerror or exc}") from None
    try:
        _wait_ready(child, host, port, log)
        yield child
    finally:
        _stop(child)


def _wait_ready(child: subprocess.Popen[bytes], host: str, port: int, log: Path) -> None:
    deadline = time.monotonic() + READY_SECONDS
    while not _listening(host, port):
        if child.poll() is not None:
            raise LeagueError(f"--serve {port}: the page did not start: {_last_line(log) or 'see ' + str(log)}")
        if time.monotonic() > deadline:
            raise LeagueError(f"--serve {port}: the page did not listen on {host}:{port} within "
                              f"{READY_SECONDS:.0f} s (see {log})")
        time.sleep(0.1)


def _stop(child: subprocess.Popen[bytes]) -> None:
    """SIGTERM, a graceful stop (its open event streams closed), else SIGKILL; reaped either way."""
    if child.poll() is not None:
        return
    try:
        os.kill(child.pid, signal.SIGTERM)
        child.wait(STOP_SECONDS)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()
    except KeyboardInterrupt:          # a second Ctrl-C while the page stops: stop it at once
        child.kill()
        child.wait()
        raise
