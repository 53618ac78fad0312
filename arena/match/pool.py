"""``BotPool``: bot processes kept alive between the matches one runner plays.

Starting a bot costs an interpreter start-up (20-50 ms for Python, more for
node or the JVM) and whatever the bot loads; a tournament worker plays
hundreds of matches, mostly with the same few programs, so it keeps them.

How reuse works:

* The key is the bot's name and its program's identity (``pool_key``: name,
  argv, cwd, env, limits): a process plays as one bot only, so what it
  remembers of earlier matches stays with that bot.  A match checks out one
  process per bot seat; two seats running the same program in one match get
  two processes (a process is never shared between seats, so a bot cannot
  see two hands).
* After ``end`` a process goes back to the pool if it did not fault out of
  the match (forfeited or unusable processes are killed, never reused).  The
  next match with that program gets it and sends a new ``start``.
* A bot may exit after ``end`` (the protocol allows it); the pool notices
  when the process is next needed and starts a new one without a fault.
  Because the exit may race with the next ``start``, a reused process that
  dies in the handshake is also replaced once, silently, by a fresh one.
* A CPU limit (RLIMIT_CPU) counts the whole life of a process, so a process
  is retired once it has used half its ``cpu_seconds``; otherwise CPU spent in
  earlier matches could kill it in the middle of a later one.
* Request ids keep counting up over the life of a process (``BotHandle``),
  so a late answer from an earlier match can never pass for a current one.
* A process never plays two matches dealt from the same seed (``deal``): with
  duplicate deals every rotation of a table gets the same cards, and a bot
  that remembered its hand would know an opponent's in the next rotation.
  So a process that has seen a deal stays idle for other deals, and a new
  one is started; at most ``MAX_IDLE_PER_BOT`` idle processes are kept
  per key (the oldest are stopped), which is as many as a table can need
  (one per rotation).  Keyed by program alone, six bots running one program
  at 4-seat tables needed 16 processes a deal, and with 8 kept, 120 matches
  started 248 processes where 24 do.

A pool is owned by one thread (like ``BotProcess``).  ``close()`` (or the
``with`` block) sends ``quit`` to every process and kills whatever is left,
including processes still checked out by a match that was interrupted.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Hashable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from ..process import BotFailure, BotProcess, BotSpec, DecisionStats, TimeControl
from ..process.transport import PipeTransport, TransportFactory
from .spec import pool_key

LOG = logging.getLogger(__name__)

CLOSE_GRACE = 0.5      # after quit: how long a bot may take to exit before SIGTERM
MAX_IDLE_PER_BOT = 8
_CLK_TCK = os.sysconf("SC_CLK_TCK")


@dataclass(eq=False)
class BotHandle:
    """A bot process and what outlives one match: the next request id."""

    proc: BotProcess
    key: tuple[Any, ...]
    next_id: int = 1
    matches: int = 0
    deals: set[Hashable] = field(default_factory=set)     # seeds of the matches it played
    # Its off-turn CPU (``BotProcess.off_turn_seconds``) already charged to
    # the matches it played: the next match is charged what comes after,
    # computing while it waited in the pool for that match included.
    off_turn_charged: float = 0.0
    # It answered a request in an earlier match: then a timeout at the first
    # request of a match is not the missing flush that one before any reply
    # suggests (seats.NO_REPLY_YET_HINT).
    answered_before: bool = False

    def is_stale_id(self, value: Any) -> bool:
        """An id this process was sent before: a late answer, to be ignored."""
        return (isinstance(value, int) and not isinstance(value, bool)
                and 1 <= value < self.next_id)


def _cpu_seconds(pid: int) -> float | None:
    """User plus system CPU time of one process so far, from /proc."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2:].split()
    try:
        return (int(fields[11]) + int(fields[12])) / _CLK_TCK
    except (IndexError, ValueError):
        return None


class BotPool:
    """Keeps bot processes alive between consecutive matches (see module doc)."""

    def __init__(self, transport_factory: TransportFactory = PipeTransport) -> None:
        # How a new bot is reached: its process (a test may give a fake).
        self.transport_factory = transport_factory
        self._idle: dict[tuple[Any, ...], list[BotHandle]] = {}
        self._out: list[BotHandle] = []     # checked out by a running match
        self.started = 0                    # processes started
        self.reuses = 0                     # matches served by a kept process
        self._closed = False

    def __enter__(self) -> BotPool:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    @property
    def idle(self) -> int:
        return sum(len(v) for v in self._idle.values())

    def acquire(self, spec: BotSpec, *, name: str, stderr_log: str | None,
                time_control: TimeControl, deal: Hashable | None = None,
                label: str | None = None) -> tuple[BotHandle, bool]:
        """A started process for ``spec`` that has not played ``deal`` (the
        match's seed): ``(handle, reused)``.  ``label`` names it in log lines
        (its seat; ``name`` by default).  Raises ``BotStartupError`` if a
        new process cannot be started."""
        if self._closed:
            raise RuntimeError("the bot pool is closed")
        key = pool_key(name, spec)
        idle = self._idle.get(key, [])
        for handle in reversed(idle):             # the most recently used first
            if deal is not None and deal in handle.deals:
                continue
            idle.remove(handle)
            if not self._usable(handle):
                LOG.debug("%s: pid %s not reusable, replacing it", name, handle.proc.pid)
                handle.proc.kill()
                continue
            proc = handle.proc
            proc.unpark()
            proc.name = name
            proc.relabel(label or name)
            proc.set_stderr_log(stderr_log)
            handle.answered_before = handle.answered_before or bool(proc.stats.times)
            self._reset(proc, time_control)
            handle.matches += 1
            if deal is not None:
                handle.deals.add(deal)
            self._out.append(handle)
            self.reuses += 1
            return handle, True
        return self.start(spec, name=name, stderr_log=stderr_log, time_control=time_control,
                          deal=deal, label=label), False

    def start(self, spec: BotSpec, *, name: str, stderr_log: str | None,
              time_control: TimeControl, deal: Hashable | None = None,
              label: str | None = None) -> BotHandle:
        """Always a new process (checked out)."""
        proc = BotProcess(spec, name=name, stderr_log=stderr_log, time_control=time_control,
                          label=label, transport=self.transport_factory)
        proc.start()
        self.started += 1
        handle = BotHandle(proc, pool_key(name, spec), matches=1)
        if deal is not None:
            handle.deals.add(deal)
        self._out.append(handle)
        return handle

    @staticmethod
    def _reset(proc: BotProcess, tc: TimeControl) -> None:
        # Time and statistics are per match, not per process.
        proc.time_control = tc
        proc.bank_remaining = tc.bank_seconds
        proc.stats = DecisionStats()

    @staticmethod
    def _usable(handle: BotHandle) -> bool:
        proc = handle.proc
        if proc.failure is not None or not proc.alive:
            return False
        cpu_limit = proc.spec.cpu_seconds
        if cpu_limit is not None and proc.pid is not None:
            used = _cpu_seconds(proc.pid)
            if used is None or used >= cpu_limit / 2:
                return False
        return True

    def release(self, handle: BotHandle, *, keep: bool) -> None:
        """Give a process back after its match: kept for the next match if
        ``keep`` and still healthy, else killed."""
        if handle in self._out:
            self._out.remove(handle)
        if keep and not self._closed and self._usable(handle):
            handle.proc.park()        # others play on its CPU meanwhile (turns.py)
            idle = self._idle.setdefault(handle.key, [])
            idle.append(handle)
            if len(idle) > MAX_IDLE_PER_BOT:
                self._stop([idle.pop(0)])
        else:
            self._stop([handle])

    def discard(self, handle: BotHandle) -> None:
        """Kill a checked-out process at once (forfeited, or a failed reuse)."""
        if handle in self._out:
            self._out.remove(handle)
        handle.proc.kill()

    def close(self) -> None:
        """Quit and kill every process, idle or checked out.  Idempotent."""
        self._closed = True
        handles = [h for hs in self._idle.values() for h in hs] + self._out
        self._idle.clear()
        self._out = []
        self._stop(handles)

    @staticmethod
    def _stop(handles: list[BotHandle]) -> None:
        """quit to all first, then wait for each: the grace periods overlap."""
        for h in handles:
            proc = h.proc
            proc.unpark()        # no longer the watchdog's to stop: it must be free to quit
            if proc.failure is None and proc.alive:
                try:
                    proc.send({"type": "quit"}, timeout=0.2, own_time=True)
                except (BotFailure, RuntimeError) as exc:   # dead or closed meanwhile
                    LOG.debug("%s: could not send quit: %s", proc.name, exc)
        try:
            for h in handles:
                h.proc.close(quit_message=None, grace=CLOSE_GRACE)
        except BaseException:
            # Interrupted while waiting (Ctrl-C): no process may outlive us.
            # close() kills even when interrupted, and kill() of a closed
            # process is a no-op, so this reaches exactly the ones not yet closed.
            for h in handles:
                h.proc.kill()
            raise
