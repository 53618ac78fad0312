"""``arena check``: a conformance check a student runs on their own bot.

Steps, each PASS / FAIL (WARN and SKIP do not fail the check):

1. start    the bot starts and answers ``start`` with ``ready`` (WARN if it
            chose protocol 1: every step still runs, in protocol 1);
2. draw, 3. buy, 4. play
            in a set-up hand (fixed cards, passive opponents) the bot is
            asked each kind of decision; every reply must parse and be legal;
5. go down  its first play could go down (it holds two sets, the contract
            is two sets): an illegal attempt fails, not going down warns;
6. match    a short match against the built-in players in strict mode
            (the first fault forfeits);
7. quit     after ``quit`` the bot exits by itself (WARN if it must be killed).

All steps use one ``BotPool``, so the bot also shows it can play a second
match on the same process (or exits after ``end`` and is restarted: allowed).
"""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass, field

from .match import BotPool, Fault, FaultPolicy, MatchResult, MatchSpec, SeatSpec, run_match
from .process import BotFailure, BotSpec, TimeControl, sandbox
from .shanghai.actions import BUY, DRAW, PLAY

PASS, FAIL, WARN, SKIP = "PASS", "FAIL", "WARN", "SKIP"

BOT_SEAT = 2
# Hand 1 with 3 players: seat 0 deals, passive seat 1 moves first and passes
# on the upcard, so the bot (seat 2) is offered it to buy, then draws, then
# plays holding two sets: the contract 2S3 can be laid down at once.
SCENARIO_HAND = ["8C", "8D", "8S", "KH", "KS", "KD", "4C", "5C", "9D", "QH", "3S"]
SCENARIO_RULES = {"contracts": ["2S3"], "turn_cap_per_player": 4}
SCENARIO_DEAL = {"hands": [{"hands": [[], [], SCENARIO_HAND], "upcard": "7H"}]}
MATCH_RULES = {"contracts": ["2S3", "S3+R4", "2R4"]}
MATCH_OPPONENTS = ("greedy", "random")
LENIENT = FaultPolicy(max_strikes=1000)   # see every fault of the set-up hand
STDERR_LINES = 12


@dataclass
class CheckStep:
    name: str
    status: str
    summary: str
    details: list[str] = field(default_factory=list)


@dataclass
class CheckReport:
    bot: str
    steps: list[CheckStep] = field(default_factory=list)
    stderr_logs: list[str] = field(default_factory=list)
    containment: str = ""            # what the bot ran under (sandbox or not)

    @property
    def ok(self) -> bool:
        return all(s.status != FAIL for s in self.steps)

    def add(self, name: str, status: str, summary: str, details: list[str] | None = None) -> None:
        self.steps.append(CheckStep(name, status, summary, details or []))

    def lines(self) -> list[str]:
        out = [f"arena check: {self.bot}"]
        if self.containment:
            out.append(f"containment: {self.containment}")
        width = max(len(s.name) for s in self.steps) if self.steps else 0
        for s in self.steps:
            out.append(f"  {s.status:4}  {s.name:{width}}  {s.summary}")
            out.extend(f"  {'':4}  {'':{width}}  {d}" for d in s.details)
        failed = sum(1 for s in self.steps if s.status == FAIL)
        verdict = "PASS" if self.ok else f"FAIL ({failed} step{'s' if failed != 1 else ''} failed)"
        out.append(f"result: {verdict}")
        for path in dict.fromkeys(self.stderr_logs):
            out.append(f"bot stderr log: {path}")
        return out


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
    with BotPool() as pool:
        scenario = MatchSpec(
            f"check-{stamp}-setup", (SeatSpec.builtin("passive", "passive-0"),
                                     SeatSpec.builtin("passive", "passive-1"), SeatSpec(name, bot=bot)),
            SCENARIO_RULES, seed=1, deal=SCENARIO_DEAL, time=tc, faults=LENIENT, log_dir=log_dir)
        try:
            first = run_match(scenario, pool)
        except BotFailure as exc:          # the program cannot be executed at all
            report.add("start", FAIL, exc.detail)
            _skip_rest(report, "start")
            return report
        _log(report, first)
        start_fault = next((f for f in first.faults_of(BOT_SEAT) if f.decision is None), None)
        if start_fault is not None:
            report.add("start", FAIL, f"{start_fault.kind}: {start_fault.detail}",
                       _evidence(start_fault, first))
            _skip_rest(report, "start")
            return report
        protocol = first.protocols[BOT_SEAT]
        said = (f"answered 'ready' as {first.bot_names[BOT_SEAT]!r}, protocol {protocol} "
                f"(start-up {first.startup_seconds * 1000:.0f} ms)")
        if protocol == 1:
            report.add("start", WARN, said, [
                "protocol 1 (no \"protocol\" in 'ready', or 1) re-sends the hand's history in every "
                "request; add \"protocol\": 2 to 'ready' (docs/PROTOCOL.md, 'Protocol versions')"])
        else:
            report.add("start", PASS, said)
        for kind in (DRAW, BUY, PLAY):
            _kind_step(report, first, kind)
        _go_down_step(report, first)

        seats = (SeatSpec(name, bot=bot),) + tuple(SeatSpec.builtin(p) for p in MATCH_OPPONENTS)
        match = MatchSpec(f"check-{stamp}-match", seats, MATCH_RULES, seed=7, time=tc,
                          faults=FaultPolicy(strict=True), log_dir=log_dir)
        second = run_match(match, pool)
        _log(report, second)
        _match_step(report, second)
        if second.forfeited[0]:
            report.add("quit", SKIP, "not run: the bot forfeited the match and its process was killed")
        else:
            _quit_step(report, pool, bot, name, tc)
    return report


def _skip_rest(report: CheckReport, after: str) -> None:
    for step in ("draw", "buy", "play", "go down", "match", "quit"):
        report.add(step, SKIP, f"not run: step '{after}' failed")


def _log(report: CheckReport, result: MatchResult) -> None:
    path = result.stderr_logs[0 if result.stderr_logs[0] else BOT_SEAT]
    if path:
        report.stderr_logs.append(path)


def _actions_of(result: MatchResult, seat: int) -> list[tuple[int, str]]:
    """(decision index, kind) of each decision the bot itself was asked for:
    after a forfeit the arena plays the fallback without asking."""
    faults = result.faults_of(seat)
    end = next((f.decision for f in faults if f.forfeit), None)
    if end is None and faults and faults[-1].forfeit:
        return []                              # forfeited in the handshake
    return [(i, a["action"]["type"]) for i, a in enumerate(result.record["actions"])
            if a["seat"] == seat and (end is None or i <= end)]


def _kind_step(report: CheckReport, result: MatchResult, kind: str) -> None:
    asked = sum(1 for _, k in _actions_of(result, BOT_SEAT) if k == kind)
    faults = [f for f in result.faults_of(BOT_SEAT) if f.decision_kind == kind]
    plural = "s" if asked != 1 else ""
    if not asked and any(f.forfeit for f in result.faults_of(BOT_SEAT)):
        report.add(kind, SKIP, f"never asked for a {kind}: the bot was forfeited before")
    elif not asked:
        report.add(kind, FAIL, f"the set-up hand never asked for a {kind} (an arena bug)")
    elif faults:
        report.add(kind, FAIL, f"{len(faults)} of {asked} {kind} request{plural} failed: "
                               f"{faults[0].kind}: {faults[0].detail}", _evidence(faults[0], result))
    else:
        report.add(kind, PASS, f"{asked} {kind} request{plural} answered legally")


def _go_down_step(report: CheckReport, result: MatchResult) -> None:
    plays = [i for i, k in _actions_of(result, BOT_SEAT) if k == PLAY]
    if not plays:
        report.add("go down", SKIP, "never asked to play: the bot was forfeited before")
        return
    first = plays[0]
    fault = next((f for f in result.faults_of(BOT_SEAT) if f.decision == first), None)
    if fault is not None:
        report.add("go down", FAIL, f"the play that could go down was refused: {fault.kind}: "
                                    f"{fault.detail}", _evidence(fault, result))
        return
    went_down = any(e["type"] == "go_down" and e.get("seat") == BOT_SEAT and e["hand"] == 1
                    for e in result.record["events"])
    contract = "two sets of 3 (8C 8D 8S and KH KS KD in hand)"
    if went_down:
        report.add("go down", PASS, f"went down when it could: {contract}")
    else:
        report.add("go down", WARN, f"legal, but did not go down although it could: {contract}")


def _match_step(report: CheckReport, result: MatchResult) -> None:
    hands = len(result.hand_scores)
    what = f"{hands} hands against {' and '.join(MATCH_OPPONENTS)}, strict"
    faults = result.faults_of(0)
    if faults:
        f = faults[0]
        where = "handshake" if f.decision is None else f"hand {f.hand}, decision {f.decision} ({f.decision_kind})"
        report.add("match", FAIL, f"{what}: {f.kind} at {where}: {f.detail}", _evidence(f, result))
        return
    s = result.stats[0]
    timing = f"; {s.count} decisions, mean {_ms(s.mean)}, max {_ms(s.max)}" if s.count else ""
    report.add("match", PASS, f"{what}: no faults; total {result.totals[0]}, place "
                              f"{result.places[0]} of {len(result.names)}{timing}")


def _quit_step(report: CheckReport, pool: BotPool, bot: BotSpec, name: str,
               tc: TimeControl) -> None:
    if pool.idle == 0:
        report.add("quit", SKIP, "the bot exited after 'end' (allowed); nothing left to quit")
        return
    handle, _ = pool.acquire(bot, name=name, stderr_log=None, time_control=tc)
    code = handle.proc.close(grace=1.0)
    pool.release(handle, keep=False)
    if code == 0:
        report.add("quit", PASS, "exited with code 0 after 'quit'")
    elif code is not None and code > 0:
        report.add("quit", WARN, f"exited with code {code} after 'quit' (expected 0)")
    else:
        report.add("quit", WARN, f"did not exit within 1 s of 'quit' and was killed "
                                 f"({handle.proc.exit_description})")


def _evidence(fault: Fault, result: MatchResult) -> list[str]:
    """The offending line and the end of the bot's stderr log."""
    out = []
    if fault.excerpt:
        out.append(f"line: {fault.excerpt}")
    path = result.stderr_logs[fault.seat]
    tail = _tail(path) if path else []
    if tail:
        out.append(f"stderr (end of {path}):")
        out.extend(f"  | {line}" for line in tail)
    return out


def _tail(path: str, max_lines: int = STDERR_LINES, max_bytes: int = 4096) -> list[str]:
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            f.seek(max(0, size - max_bytes))
            data = f.read()
    except OSError:
        return []
    lines = data.decode("utf-8", errors="replace").splitlines()
    return [line[:200] for line in lines if line.strip()][-max_lines:]


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.1f} ms"
