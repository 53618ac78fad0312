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

A page that stops while the run plays (killed, out of memory, a bug) is
noticed at the next match stored or idle look (``Page.check``, a ``poll``):
the run says so in one line and starts it again after a back-off (1 s, then
twice as long each time, at most ``BACKOFF_MAX``), without waiting for it,
so no match waits for the page.  After ``RESTARTS`` stops in a row (each
within ``STABLE_SECONDS`` of its start) the run says once that it plays on
without the page, and does: the matches are what a league is for, and the
page is only a view of them, which ``arena league serve`` gives as well;
a run stopped for a page that cannot stay up would stop the league for
something it can do without.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .config import LeagueConfig, LeagueError

__all__ = ["PAGE_LOG", "Page", "served_beside"]

PAGE_LOG = "page.log"
READY_SECONDS = 120.0     # how long the page may take to listen (imports on a loaded machine)
STOP_SECONDS = 10.0       # how long it may take to stop gracefully before it is killed
PR_SET_PDEATHSIG = 1
BACKOFF_FIRST = 1.0       # seconds before the first restart of a page that stopped; doubled each time
BACKOFF_MAX = 60.0
RESTARTS = 5              # stops in a row after which the run plays on without its page
STABLE_SECONDS = 60.0     # a page up this long has stopped stopping: its count starts again


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
def served_beside(config: LeagueConfig, host: str, port: int,
                  echo: Callable[[str], None] = print) -> Iterator[Page]:
    """The league's page on ``host``:``port`` for the duration of the block
    (restarted if it stops: ``Page.check``); LeagueError if it cannot start."""
    if _listening(host, port):       # else that program's answer would pass for the page's
        raise LeagueError(f"--serve {port}: another program listens on {host}:{port} already; choose another port")
    page = Page(config, host, port, echo)
    child = page.spawn()
    try:
        _wait_ready(child, host, port, page.log)
        yield page
    finally:
        page.stop()


class Page:
    """The page's child process, started again when it stops (see the module's doc)."""

    def __init__(self, config: LeagueConfig, host: str, port: int, echo: Callable[[str], None]) -> None:
        self.config, self.host, self.port, self.echo = config, host, port, echo
        self.log = config.results / "logs" / PAGE_LOG
        self.child: subprocess.Popen[bytes] | None = None
        self.started = 0.0            # time.monotonic() of the child's start
        self.stops = 0                # stops in a row
        self.restart_at: float | None = None     # when a stopped page starts again

    def spawn(self) -> subprocess.Popen[bytes]:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        argv = [sys.executable, "-m", "arena", "league", "serve", str(self.config.dir), "--host", self.host,
                "--port", str(self.port)]
        with open(self.log, "ab") as out:
            try:
                self.child = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                              start_new_session=True, preexec_fn=_die_with_parent)
            except OSError as exc:
                raise LeagueError(f"--serve {self.port}: cannot start the page: {exc.strerror or exc}") from None
        self.started = time.monotonic()
        return self.child

    def check(self) -> None:
        """Cheap (a ``poll``): notice a page that stopped, and start it again when its back-off is over."""
        child, now = self.child, time.monotonic()
        if child is None:
            return                   # given up on
        if self.restart_at is None:
            if child.poll() is None:
                if now - self.started >= STABLE_SECONDS:
                    self.stops = 0
                return
            self._stopped(child, now)
        elif now >= self.restart_at:
            self.restart_at = None
            try:
                self.spawn()
            except LeagueError as err:
                self.echo(f"the live page: {err}; the league plays on without it")
                self.child = None

    def _stopped(self, child: subprocess.Popen[bytes], now: float) -> None:
        self.stops += 1
        code = child.returncode
        how = _how_it_ended(code)
        last = _last_line(self.log)
        said = f"the live page stopped ({how}{': ' + last if last and code >= 0 else ''})"
        if self.stops > RESTARTS:
            self.echo(f"{said}, {self.stops} times in a row; the league plays on without it "
                      f"(arena league serve {self.config.dir} --port {self.port} serves it; its log: {self.log})")
            self.child = None
            return
        delay = min(BACKOFF_MAX, BACKOFF_FIRST * 2 ** (self.stops - 1))
        self.echo(f"{said}; starting it again in {delay:g} s (its log: {self.log})")
        self.restart_at = now + delay

    def stop(self) -> None:
        if self.child is not None:
            _stop(self.child)


def _how_it_ended(code: int) -> str:
    return (f"killed by {signal.Signals(-code).name}" if code < 0 and -code in signal.valid_signals()
            else f"exit status {code}")


def _wait_ready(child: subprocess.Popen[bytes], host: str, port: int, log: Path) -> None:
    deadline = time.monotonic() + READY_SECONDS
    while not _listening(host, port):
        if child.poll() is not None:
            said = _last_line(log) or f"{_how_it_ended(child.returncode)}; see {log}"
            raise LeagueError(f"--serve {port}: the page did not start: {said}")
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
