"""Judging what a bot did in each step of ``arena check``."""

from __future__ import annotations

import os

from ..match import BotPool, Fault, MatchResult, MatchSpec
from ..match.spec import fault_place
from ..process import BotSpec, TimeControl
from ..process.errors import escaped
from ..shanghai.actions import Action, Buy, Draw, GoDown, LayOff, Play, Swap, action_from_json
from ..shanghai.game import Decision, Game, View
from .extra import ExtraLines, caused_by
from .hints import fault_summary
from .report import FAIL, PASS, SKIP, WARN, CheckReport
from .scenarios import PLAYERS, Scenario
from .transcript import Exchange, Issue, read

STDERR_LINES = 12
REQUEST_CHARS = 300


def log_path(result: MatchResult, seat: int) -> str | None:
    return result.stderr_logs[seat] if result.stderr_logs else None


def start_step(report: CheckReport, result: MatchResult, seat: int,
               lines: list[tuple[str, str]]) -> bool:
    """The handshake of the first match; False if it failed."""
    fault = next((f for f in result.faults_of(seat) if f.decision is None), None)
    exchanges, _issues = read(lines)
    ready = next((e.reply for e in exchanges if e.kind == "start"), None)
    if fault is not None:
        report.add("start", FAIL, f"{fault.kind}: {fault.detail}",
                   evidence(fault, result, with_line=not ready),
                   rule="answer 'start' with one 'ready' line within the start-up time "
                        "(docs/PROTOCOL.md, 'start')", reply=ready or "")
        return False
    protocol = result.protocols[seat]
    said = (f"answered 'ready' as {result.bot_names[seat]!r}, protocol {protocol} "
            f"(start-up {result.startup_seconds * 1000:.0f} ms)")
    if protocol == 1:
        report.add("start", WARN, said, [
            "protocol 1 (no \"protocol\" in 'ready', or 1) re-sends the hand's history in every "
            "request; add \"protocol\": 2 to 'ready' (docs/PROTOCOL.md, 'Protocol versions')"],
            reply=ready or "")
    else:
        report.add("start", PASS, said, reply=ready or "")
    return True


def _replay(scenario: Scenario, spec: MatchSpec, result: MatchResult
            ) -> list[tuple[int, Decision, View, Action]]:
    """(record index, decision, view, action) of each of the bot's decisions."""
    game = Game.seeded(spec.ruleset(), PLAYERS, spec.seed, spec.deal)
    out = []
    for index, entry in enumerate(result.record["actions"]):
        action = action_from_json(entry["action"])
        if entry["seat"] == scenario.seat:
            d = game.decision()
            assert d is not None
            out.append((index, d, game.view(scenario.seat), action))
        game.apply(action, entry["seat"])
    return out


def judge_scenario(report: CheckReport, scenario: Scenario, spec: MatchSpec,
                   result: MatchResult, lines: list[tuple[str, str]], extra: ExtraLines) -> None:
    exchanges, issues = extra.read(lines)
    requests = [e for e in exchanges if e.kind != "start"]
    report.ignored_lines += sum(1 for i in issues if not i.taken)
    decisions = _replay(scenario, spec, result)
    faults = result.faults_of(scenario.seat)
    rule = scenario.rule

    def shown(n: int | None) -> tuple[str, str]:
        if n is None or n >= len(decisions):
            return "", ""
        _, d, view, _ = decisions[n]
        reply = requests[n].reply if n < len(requests) else None
        return describe_request(d, view), reply or "(none)"

    if issues and (not faults or caused_by(faults[0].kind, faults[0].excerpt, issues)):
        issue = issues[0]
        n = _asked_before(issue, requests)
        request = shown(n)[0] if n is not None else "start (the handshake)"
        step = report.add(scenario.name, FAIL, f"{issue.what}: {issue.detail}",
                          _extra_evidence(issues, faults), rule=rule, request=request, reply=issue.line)
        extra.flag(step, issues)
        return
    if faults:
        f = faults[0]
        n = next((k for k, (i, *_rest) in enumerate(decisions) if i == f.decision), None)
        where = "the handshake" if f.decision is None else f"its {f.decision_kind} reply"
        report.add(scenario.name, FAIL, fault_summary(f, where),
                   evidence(f, result, with_line=False) + _also(issues), rule=rule,
                   request=shown(n)[0], reply=f.excerpt or "(none)")
        return
    key = next((n for n, (_, d, view, _a) in enumerate(decisions)
                if scenario.key(d, view, n)), None)
    if key is None:
        report.add(scenario.name, SKIP, f"not reached: {scenario.needs or 'the bot was never asked'}",
                   rule=rule)
        return
    request, reply = shown(key)
    _, d, view, action = decisions[key]
    _report_legal(report, scenario, result, f"legal: {describe_action(action, view)}", request, reply)


def _extra_evidence(issues: list[Issue], faults: list[Fault]) -> list[str]:
    """The extra lines of a step (and the fault they led to)."""
    more = [f"line: {issues[0].line}"] + [f"also: {i.what}: {i.line}" for i in issues[1:4]]
    if faults:
        more.append(f"then: {faults[0].kind}: {faults[0].detail}")
    return more


def _also(issues: list[Issue]) -> list[str]:
    """The extra lines of a step that failed for something else."""
    return [f"also: {i.what}: {i.line}" for i in issues[:4]]


def _report_legal(report: CheckReport, scenario: Scenario, result: MatchResult, said: str,
                  request: str, reply: str) -> None:
    """The scenario's key request got a legal reply: a pass, or a warning if
    the bot's stderr ends in a traceback."""
    rule = scenario.rule
    path = log_path(result, scenario.seat)
    trace = _traceback(path) if path else []
    if trace:
        report.add(scenario.name, WARN, f"{said}; but the bot's stderr shows a traceback: its "
                   "code failed, and what it sent may be a helper's safe move (botkit sends one); "
                   "stderr can lag, so the failure may be in the step before",
                   [f"stderr (end of {os.path.basename(str(path))}):", *(f"  | {line}" for line in trace)],
                   rule=rule, request=request, reply=reply)
        return
    report.add(scenario.name, PASS, said, rule=rule, request=request, reply=reply)


def _traceback(path: str) -> list[str]:
    """The end of a stderr log that shows a Python traceback, else nothing."""
    try:
        with open(path, "rb") as f:
            data = f.read(1 << 20)
    except OSError:
        return []
    if b"Traceback (most recent call last)" not in data:
        return []
    return _tail(path, max_lines=6)


def _asked_before(issue: Issue, requests: list[Exchange]) -> int | None:
    """The index of the request the ignored line followed (or answered twice)."""
    if '"ready"' in issue.line:
        return None
    for n in range(len(requests) - 1, -1, -1):
        if (requests[n].reply or "").strip() == issue.line.strip():
            return n
    return len(requests) - 1 if requests else None


def describe_request(d: Decision, view: View) -> str:
    parts = [f"{d.kind}, options {' '.join(_opt(o) for o in d.options)}",
             f"hand {' '.join(c.text for c in view.hand)}"]
    if view.upcard is not None:
        parts.append(f"upcard {view.upcard.text}")
    elif view.pile_top is not None:
        parts.append(f"pile top {view.pile_top.text} (not takeable)")
    if view.melds:
        parts.append("table " + ", ".join(f"[{m.id}] {' '.join(c.text for c in m.meld.cards)}"
                                          for m in view.melds))
    parts.append("down" if view.down[view.seat] else "not down")
    text = "; ".join(parts)
    return text if len(text) <= REQUEST_CHARS else text[:REQUEST_CHARS - 3] + "..."


def _opt(option: object) -> str:
    text = getattr(option, "text", None)
    return text if isinstance(text, str) else str(option).lower()


def describe_action(action: Action, view: View) -> str:
    if isinstance(action, Draw):
        return f"drew from the {action.source}"
    if isinstance(action, Buy):
        return "bought" if action.want else "did not buy"
    assert isinstance(action, Play)
    said = []
    for step in action.steps:
        if isinstance(step, GoDown):
            said.append("went down with " + " + ".join(" ".join(c.text for c in m.cards)
                                                      for m in step.melds))
        elif isinstance(step, LayOff):
            said.append(f"laid off {step.card.text} on meld {step.meld}"
                        + (f" ({step.end} end)" if step.end else ""))
        elif isinstance(step, Swap):
            said.append(f"swapped {step.card.text} into meld {step.meld}")
    said.append(f"discarded {action.discard.text}" if action.discard is not None else "went out")
    return ", ".join(said)


def match_step(report: CheckReport, result: MatchResult, lines: list[tuple[str, str]],
               opponents: tuple[str, ...], extra: ExtraLines) -> None:
    hands = len(result.hand_scores)
    what = f"{hands} hands against {' and '.join(opponents)}, strict"
    _exchanges, issues = extra.read(lines)
    report.ignored_lines += sum(1 for i in issues if not i.taken)
    faults = result.faults_of(0)
    if issues and (not faults or caused_by(faults[0].kind, faults[0].excerpt, issues)):
        step = report.add("match", FAIL, f"{what}: {issues[0].what}: {issues[0].detail}",
                          _extra_evidence(issues, faults))
        extra.flag(step, issues)
        return
    if faults:
        f = faults[0]
        where = "handshake" if f.decision is None else \
            fault_place(f.hand, f.decision, f.decision_kind, f.request_id)
        report.add("match", FAIL, f"{what}: {fault_summary(f, where)}", evidence(f, result) + _also(issues))
        return
    s = result.stats[0]
    timing = f"; {s.count} decisions, mean {_ms(s.mean)}, max {_ms(s.max)}" if s.count else ""
    report.add("match", PASS, f"{what}: no faults; total {result.totals[0]}, place {result.places[0]} "
                              f"of {len(result.names)}{timing}")


def turns_step(report: CheckReport, played: list[tuple[MatchResult, int]]) -> None:
    """Whether the bot was caught computing between its turns in any step
    (``arena.process.confine.turns``): no fault, so a WARN."""
    caught: list[float] = []
    for result, seat in played:
        traces = result.record.get("trace") or []
        used = traces[seat].get("off_turn_cpu") if seat < len(traces) else None
        if used is not None:
            caught.append(used)
    if not caught:
        report.add("turns", PASS, "computed only while it had a request to answer")
        return
    report.add("turns", WARN,
               f"used {max(caught):.2f} s of CPU between its turns (in a thread, a child process, or its "
               "runtime's compiler or garbage collector): in a tournament it is stopped between its turns "
               "from then on, which is no fault (docs/PROTOCOL.md, 'Time limits')")


def quit_step(report: CheckReport, pool: BotPool, bot: BotSpec, name: str,
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


def evidence(fault: Fault, result: MatchResult, with_line: bool = True) -> list[str]:
    """The offending line and the end of the bot's stderr log."""
    out = []
    if fault.excerpt and with_line:
        out.append(f"line: {fault.excerpt}")
    path = result.stderr_logs[fault.seat]
    tail = _tail(path) if path else []
    if tail:
        out.append(f"stderr (end of {os.path.basename(str(path))}):")
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
    # Lines end at a newline only, and each is escaped: a CR, an escape
    # sequence or U+202E of the bot's would rewrite the report on a terminal.
    lines = data.decode("utf-8", errors="replace").split("\n")
    return [escaped(line.rstrip("\r"))[:200] for line in lines if line.strip()][-max_lines:]


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.1f} ms"
