"""What a Ray actor does on its node that knows matches and bot processes:
move a spec's paths to the node's copy of the shipped files (``Relocation``),
send the stderr logs written there back with the outcome and at the end
(``LogShipper``),
check that the node can sandbox (``worker.unplayable``) and run ``arena
check`` there (``check_here``), start every bot there before the first match
(``start_problems``), and how long a match's result may take (``bounds``).

The Ray executor (``executors.ray``) calls these and knows nothing of bot
specs, sandboxes or the game: it moves specs and outcomes as opaque values.
"""

from __future__ import annotations

import dataclasses
import os
import socket
from dataclasses import dataclass
from typing import Any

from ...check import check_bot
from ...match import MatchResult, MatchSpec, SeatSpec
from ...match.probe import probe_bot
from ...process import BotSpec, TimeControl
from ...process.confine import sandbox
from .outcome import Outcome

__all__ = ["Relocation", "LogShipper", "check_here", "start_problems", "start_seconds", "bounds"]

PLAY_MARGIN = 30.0      # seconds on top of a match's worst case: worker and bot processes, Ray's own calls
ARRIVAL_FLOOR = 10.0    # seconds a result ready on its node may take to reach the arena, at least


@dataclass(frozen=True)
class Relocation:
    """Paths under ``head`` (the arena's shipped directory) and their places
    under ``here`` (its copy on this node)."""

    head: str
    here: str

    def there(self, path: str) -> str:
        return _move(path, self.head, self.here)

    def back(self, path: str) -> str:
        return _move(path, self.here, self.head)

    def spec(self, spec: MatchSpec) -> MatchSpec:
        """``spec`` with every path under ``head`` moved to ``here``."""
        log_dir = None if spec.log_dir is None else self.there(spec.log_dir)
        return dataclasses.replace(spec, seats=tuple(self._seat(s) for s in spec.seats), log_dir=log_dir)

    def _seat(self, seat: SeatSpec) -> SeatSpec:
        return seat if seat.bot is None else dataclasses.replace(seat, bot=self.bot(seat.bot))

    def bot(self, bot: BotSpec) -> BotSpec:
        """``bot`` on this node's copy.  Its sandbox is built here from the
        same allow-list as on a local worker: the copy of its folder, its
        grants, the system; the originals of what it must not see (on a
        node that holds the tournament's files too) are not mounted at all,
        and their copies are left out as ``hide`` paths."""
        box = bot.sandbox.replace(read=tuple(map(self.there, bot.sandbox.read)),
                                  write=tuple(map(self.there, bot.sandbox.write)),
                                  hide=tuple(map(self.there, bot.sandbox.hide)),
                                  scratch=None if bot.sandbox.scratch is None else self.there(bot.sandbox.scratch))
        argv = tuple(self._program(a) for a in bot.argv)
        cwd = None if bot.cwd is None else self.there(os.fspath(bot.cwd))
        return dataclasses.replace(bot, argv=argv, cwd=cwd, sandbox=box)

    def _program(self, arg: str) -> str:
        """An absolute argument's copy if it was shipped; an interpreter in a
        virtual environment under the directory is not (nor needed: the
        nodes have their own, at the same path or not at all)."""
        if not os.path.isabs(arg):
            return arg
        there = self.there(arg)
        return there if there != arg and os.path.lexists(there) else arg


def _move(path: str, old: str, new: str) -> str:
    if path == old:
        return new
    prefix = old.rstrip("/") + "/"
    return new.rstrip("/") + "/" + path[len(prefix):] if path.startswith(prefix) else path


class LogShipper:
    """Sends the stderr logs written on this node's copy back to the arena
    (arena path -> bytes): a match's logs with its outcome, and at the end
    (``late``) every log that has grown since.  A bot may write after its
    last decision: on 'end', or as it quits, which a pooled process does
    when its worker closes, long after its match's outcome was sent."""

    def __init__(self, relocation: Relocation) -> None:
        self.relocation = relocation
        self.sent: dict[str, int] = {}      # node path -> bytes sent so far

    def sent_back(self, outcome: Outcome) -> tuple[Outcome, tuple[tuple[str, bytes], ...]]:
        """``outcome`` on the arena's paths, with its logs; a log that is not
        there (its bot has written nothing yet) is sent later if it comes."""
        if not isinstance(outcome, MatchResult):
            return outcome, ()
        logs = []
        for path in outcome.stderr_logs:
            if path is not None:
                self.sent[path] = 0
                logs.extend(self._read(path))
        back = tuple(None if p is None else self.relocation.back(p) for p in outcome.stderr_logs)
        return dataclasses.replace(outcome, stderr_logs=back), tuple(logs)

    def late(self) -> tuple[tuple[str, bytes], ...]:
        """Every log whose size changed since it was sent, whole (call once
        the worker is closed: its bots have exited)."""
        logs = []
        for path, size in self.sent.items():
            try:
                grown = os.path.getsize(path) != size
            except OSError:
                continue            # never written
            if grown:
                logs.extend(self._read(path))
        return tuple(logs)

    def _read(self, path: str) -> list[tuple[str, bytes]]:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            return []               # a bot that never started, or wrote nothing, has no log
        self.sent[path] = len(data)
        return [(self.relocation.back(path), data)]


def check_here(bot: BotSpec, head_root: str | None, time_control: TimeControl | None) -> Any:
    """Runs on the node: the check of ``bot`` moved to this node's copy of its files."""
    if head_root is not None:
        bot = Relocation(head_root, os.getcwd()).bot(bot)
    if bot.sandbox.mode == sandbox.BWRAP:
        sandbox.resolve(sandbox.BWRAP)  # SandboxUnavailable: one line, on the arena's screen
    report = check_bot(bot, time_control=time_control)
    report.containment = f"{report.containment}; on Ray node {socket.gethostname()}".lstrip("; ")
    return report


def start_problems(specs: list[MatchSpec], head_root: str | None) -> list[tuple[str, str]]:
    """Runs on the node: each bot program of ``specs`` started as its first
    match there would start it (its sandbox, limits and time to start) at a
    table of built-in players, and asked one decision; (bot, why) for each
    that does not start."""
    first: dict[str, tuple[MatchSpec, SeatSpec]] = {}
    for spec in specs:
        for seat in spec.seats:
            if seat.bot is not None:
                first.setdefault(seat.name, (spec, seat))
    relocation = None if head_root is None else Relocation(head_root, os.getcwd())
    problems = []
    for name, (spec, seat) in first.items():
        others = tuple(SeatSpec.builtin("greedy") for _ in spec.seats[1:])
        alone = dataclasses.replace(spec, match_id=f"start-check-{name}", seats=(seat, *others), log_dir=None,
                                    faults=dataclasses.replace(spec.faults, unstartable_forfeits=True))
        probe = probe_bot(alone if relocation is None else relocation.spec(alone), 0, decisions=1)
        if not probe.ready:
            problems.append((name, probe.problem or "it did not start"))
    return problems


def start_seconds(specs: list[MatchSpec]) -> float:
    """How long ``start_problems`` of ``specs`` may take: each bot's start
    and one decision, one bot after another."""
    first = {s.name: spec.time for spec in specs for s in spec.seats if s.bot is not None}
    return sum(tc.startup_seconds + tc.per_decision_seconds for tc in first.values())


def bounds(spec: MatchSpec) -> tuple[float, float]:
    """How long ``spec``'s result may take, in seconds: to be played (its
    worst case under its time control: every bot takes its whole start-up
    time and bank, and every hand runs to the turn cap with every decision
    at its limit, buys included), and to reach the arena once it is ready
    on its node (a transfer: at least ``ARRIVAL_FLOOR``, or a bot's start)."""
    rules, tc, players = spec.ruleset(), spec.time, len(spec.seats)
    decisions = rules.hands * players * rules.turn_cap_per_player * (players + 1)   # draw, play, the others' buys
    worst = players * (tc.startup_seconds + (tc.bank_seconds or 0.0)) + decisions * tc.per_decision_seconds
    return worst + PLAY_MARGIN, max(ARRIVAL_FLOOR, tc.startup_seconds)
