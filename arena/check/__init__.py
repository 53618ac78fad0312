"""``arena check``: a conformance check a student (or a teacher's
autograder) runs on a bot.

Steps, each PASS / FAIL (WARN and SKIP do not fail the check):

- start      the bot answers ``start`` with ``ready`` (WARN for protocol 1);
- scenarios  fixed deals with scripted opponents (``scenarios.py``) lead the
             bot to each kind of decision and rule area; every reply in the
             hand must parse and be legal, and every line the bot writes must
             answer a request: an id the bot counted itself, a reply sent
             twice or a buy nobody asked for fail, also where a tournament
             only ignores the line (``extra.py``: a bug that repeats is named
             in full once).  Each scenario reports the rule, the request it
             is about and the reply;
- match      a short match against the built-in players, strict;
- turns      the bot computed only while it had a request to answer (WARN
             if it was caught computing between its turns, which a
             tournament stops it from doing);
- quit       after ``quit`` the bot exits by itself (WARN if it must be killed).

Everything runs on one ``BotPool``, so the bot also shows it plays match
after match on one process (or exits after ``end`` and is restarted).
"""

from __future__ import annotations

import contextlib
import os
import random
import secrets
import shlex
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ..botcommand import runs_python
from ..match import BotPool, FaultPolicy, MatchResult, MatchSpec, SeatSpec, run_match
from ..players.base import Player
from ..players.registry import make_player
from ..process import BotFailure, BotSpec, TimeControl
from ..process.confine import sandbox
from ..process.transport import PipeTransport, TransportFactory
from ..shanghai.actions import Buy, Draw, Play
from ..shanghai.game import View
from .extra import ExtraLines
from .judge import judge_scenario, log_path, match_step, quit_step, start_step, turns_step
from .report import FAIL, PASS, SKIP, WARN, CheckReport, CheckStep, not_run
from .scenarios import PLAYERS, SCENARIOS
from .transcript import Transcript

__all__ = ["check_bot", "CheckReport", "CheckStep", "PASS", "FAIL", "WARN", "SKIP", "SCENARIOS"]

MATCH_RULES = {"contracts": ["2S3", "S3+R4", "2R4"]}
MATCH_OPPONENTS = ("greedy", "random")
OPPONENT_PAUSE = 0.6      # seconds the first opponent sleeps once: the bot waits, off its turn


class _Unhurried:
    """A built-in player that sleeps (no CPU) before its first decision: the
    bot then waits off its turn for a while, long enough for the watchdog to
    see whether it computes meanwhile (the ``turns`` step)."""

    def __init__(self, player: Player, pause: Callable[[float], None]) -> None:
        self.player = player
        self.name = player.name
        self.pause = pause
        self._waited = False

    def _wait(self) -> None:
        if not self._waited:
            self._waited = True
            self.pause(OPPONENT_PAUSE)

    def draw(self, view: View) -> Draw:
        self._wait()
        return self.player.draw(view)

    def buy(self, view: View) -> Buy:
        self._wait()
        return self.player.buy(view)

    def play(self, view: View) -> Play:
        self._wait()
        return self.player.play(view)


def check_bot(bot: BotSpec, *, time_control: TimeControl | None = None,
              log_dir: str | None = None,
              transport_factory: TransportFactory = PipeTransport,
              pause: Callable[[float], None] = time.sleep) -> CheckReport:
    """Run every step on ``bot``; never raises for the bot's misbehaviour.
    ``transport_factory``: how the bot is reached (``BotPool``'s; a test
    may give a fake, so the steps run without processes); ``pause``: how the
    match step's opponent waits once, off the bot's turn (a fake transport's
    clock need not wait for real)."""
    report = CheckReport(shlex.join(bot.argv))     # as typed: a word with a space stays one
    try:
        report.containment = sandbox.resolve(bot.sandbox.mode).description
    except sandbox.SandboxUnavailable as exc:
        report.add("start", FAIL, str(exc))
        _skip_rest(report, "start")
        return report
    if (sandbox.bot_environment(os.environ, bot.env).get("PYTHONUNBUFFERED")
            and runs_python(bot.argv, bot.cwd)):
        report.notes.append(
            "PYTHONUNBUFFERED is set here and passed to the bot, so a Python bot that never flushes its "
            "output passes, and times out where it is not set; `env -u PYTHONUNBUFFERED arena check ...` "
            "checks without it")
    with contextlib.ExitStack() as stack:
        # Without a log_dir the logs live as long as the check, also when it
        # is interrupted: the report quotes the end of each failed step's log.
        where = log_dir or stack.enter_context(
            tempfile.TemporaryDirectory(prefix="arena-check-", ignore_cleanup_errors=True))
        with Transcript() as transcript, BotPool(transport_factory) as pool:
            run = _Run(report, bot, time_control or TimeControl(), where, pool, transcript, pause)
            if run.scenarios():
                run.match_and_quit()
            run.extra.word()
        # Each step's log path is known; its file exists only if the bot wrote on
        # stderr, which it may do up to its exit (the pool has closed it by now).
        report.stderr_logs = [p for p in report.stderr_logs if os.path.exists(p)]
        if log_dir is None:
            report.stderr_unkept, report.stderr_logs = bool(report.stderr_logs), []
    return report


@dataclass
class _Run:
    report: CheckReport
    bot: BotSpec
    tc: TimeControl
    log_dir: str
    pool: BotPool
    transcript: Transcript
    pause: Callable[[float], None]
    # Names the matches and so the stderr logs: unique to this check, even
    # for two started in one second.
    stamp: str = field(default_factory=lambda: f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}")
    extra: ExtraLines = field(default_factory=ExtraLines)   # lines that answered no request
    played: list[tuple[MatchResult, int]] = field(default_factory=list)   # every step's match, the bot's seat

    def _play(self, spec: MatchSpec, seat: int, players: Mapping[int, Player] | None = None
              ) -> tuple[MatchResult, list[tuple[str, str]]]:
        mark = self.transcript.mark()
        result = run_match(spec, self.pool, players=players)
        self.played.append((result, seat))
        path = log_path(result, seat)
        if path:
            self.report.stderr_logs.append(path)
        return result, self.transcript.since(mark)

    def scenarios(self) -> bool:
        """Every scenario; False if the bot did not even start."""
        report, name = self.report, self.bot.display_name
        for i, scenario in enumerate(SCENARIOS):
            seats = tuple(SeatSpec(name, bot=self.bot) if s == scenario.seat
                          else SeatSpec.builtin("passive", f"scripted-{s}") for s in range(PLAYERS))
            spec = MatchSpec(f"check-{self.stamp}-s{i:02d}", seats, scenario.rules, seed=1,
                             deal=scenario.deal, time=self.tc, faults=FaultPolicy(strict=True),
                             log_dir=self.log_dir)
            try:
                result, lines = self._play(spec, scenario.seat, scenario.players())
            except BotFailure as exc:          # the program cannot be executed at all
                report.add("start", FAIL, exc.detail)
                _skip_rest(report, "start")
                return False
            if i == 0 and not start_step(report, result, scenario.seat, lines):
                _skip_rest(report, "start")
                return False
            judge_scenario(report, scenario, spec, result, lines, self.extra)
            if result.forfeited[scenario.seat]:
                self.extra.new_process()
        return True

    def match_and_quit(self) -> None:
        name = self.bot.display_name
        seats = (SeatSpec(name, bot=self.bot),) + tuple(SeatSpec.builtin(p) for p in MATCH_OPPONENTS)
        spec = MatchSpec(f"check-{self.stamp}-match", seats, MATCH_RULES, seed=7, time=self.tc,
                         faults=FaultPolicy(strict=True), log_dir=self.log_dir)
        first = _Unhurried(make_player(MATCH_OPPONENTS[0], random.Random("7/1")), self.pause)
        result, lines = self._play(spec, 0, {1: first})
        match_step(self.report, result, lines, MATCH_OPPONENTS, self.extra)
        turns_step(self.report, self.played)
        if result.forfeited[0]:
            self.report.add("quit", SKIP, "not run: the bot forfeited the match and its process was killed")
        else:
            quit_step(self.report, self.pool, self.bot, name, self.tc)


def _skip_rest(report: CheckReport, after: str) -> None:
    for scenario in SCENARIOS:
        report.add(scenario.name, SKIP, not_run(after))
    for step in ("match", "turns", "quit"):
        report.add(step, SKIP, not_run(after))
