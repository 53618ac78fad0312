"""``arena check``: a conformance check a student (or a teacher's
autograder) runs on a bot.

Steps, each PASS / FAIL (WARN and SKIP do not fail the check):

- start      the bot answers ``start`` with ``ready`` (WARN for protocol 1);
- scenarios  fixed deals with scripted opponents (``scenarios.py``) lead the
             bot to each kind of decision and rule area; every reply in the
             hand must parse and be legal, and every line the bot writes must
             answer a request (a reply sent twice, a buy nobody asked for, an
             id the bot counted itself: FAIL).  Each scenario reports the rule,
             the request it is about and the reply;
- match      a short match against the built-in players, strict;
- quit       after ``quit`` the bot exits by itself (WARN if it must be killed).

Everything runs on one ``BotPool``, so the bot also shows it plays match
after match on one process (or exits after ``end`` and is restarted).
"""

from __future__ import annotations

import tempfile
import time

from ..match import BotPool, FaultPolicy, MatchSpec, SeatSpec, run_match
from ..process import BotFailure, BotSpec, TimeControl, sandbox
from .judge import judge_scenario, log_path, match_step, quit_step, start_step
from .report import FAIL, PASS, SKIP, WARN, CheckReport, CheckStep
from .scenarios import SCENARIOS
from .transcript import Transcript

__all__ = ["check_bot", "CheckReport", "CheckStep", "PASS", "FAIL", "WARN", "SKIP", "SCENARIOS"]

MATCH_RULES = {"contracts": ["2S3", "S3+R4", "2R4"]}
MATCH_OPPONENTS = ("greedy", "random")


def check_bot(bot: BotSpec, *, time_control: TimeControl | None = None,
              log_dir: str | None = None) -> CheckReport:
    """Run every step on ``bot``; never raises for the bot's misbehaviour."""
    tc = time_control or TimeControl()
    log_dir = log_dir or tempfile.mkdtemp(prefix="arena-check-")
    report = CheckReport(" ".join(bot.argv))
    try:
        report.containment = sandbox.resolve(bot.sandbox.mode).description
    except sandbox.SandboxUnavailable as exc:
        report.add("start", FAIL, str(exc))
        _skip_rest(report, "start")
        return report
    stamp = time.strftime("%Y%m%d-%H%M%S")
    name = bot.display_name
    seen: set[str] = set()      # every reply so far: a late copy of one is a duplicate
    with Transcript() as transcript, BotPool() as pool:
        for i, scenario in enumerate(SCENARIOS):
            seats = tuple(SeatSpec(name, bot=bot) if s == scenario.seat
                          else SeatSpec.builtin("passive", f"scripted-{s}") for s in range(3))
            spec = MatchSpec(f"check-{stamp}-s{i:02d}", seats, scenario.rules, seed=1,
                             deal=scenario.deal, time=tc, faults=FaultPolicy(strict=True),
                             log_dir=log_dir)
            mark = transcript.mark()
            try:
                result = run_match(spec, pool, players=scenario.players())
            except BotFailure as exc:          # the program cannot be executed at all
                report.add("start", FAIL, exc.detail)
                _skip_rest(report, "start")
                return report
            lines = transcript.since(mark)
            path = log_path(result, scenario.seat)
            if path:
                report.stderr_logs.append(path)
            if i == 0 and not start_step(report, result, scenario.seat, lines):
                _skip_rest(report, "start")
                return report
            judge_scenario(report, scenario, spec, result, lines, seen)

        seats = (SeatSpec(name, bot=bot),) + tuple(SeatSpec.builtin(p) for p in MATCH_OPPONENTS)
        match = MatchSpec(f"check-{stamp}-match", seats, MATCH_RULES, seed=7, time=tc,
                          faults=FaultPolicy(strict=True), log_dir=log_dir)
        mark = transcript.mark()
        second = run_match(match, pool)
        path = log_path(second, 0)
        if path:
            report.stderr_logs.append(path)
        match_step(report, second, transcript.since(mark), MATCH_OPPONENTS, seen)
        if second.forfeited[0]:
            report.add("quit", SKIP, "not run: the bot forfeited the match and its process was killed")
        else:
            quit_step(report, pool, bot, name, tc)
    return report


def _skip_rest(report: CheckReport, after: str) -> None:
    for scenario in SCENARIOS:
        report.add(scenario.name, SKIP, f"not run: step '{after}' failed")
    for step in ("match", "quit"):
        report.add(step, SKIP, f"not run: step '{after}' failed")


def scenario_names() -> list[str]:
    return [s.name for s in SCENARIOS]

