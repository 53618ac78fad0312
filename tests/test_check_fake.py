"""``arena check`` without processes (``tests/fakebot.py``): the scenarios
run in-process against bots that are Python functions, on a fake clock.

The classroom bugs of tests/checkbots/ are the same bots the real-process
tests run, imported instead of started: each is flagged at the right
scenario with a message naming the rule.  What only processes show
(start-up failures, exit codes, stderr read from a pipe, the sandbox,
PYTHONUNBUFFERED, computing between turns) stays in test_check.py.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from fakebot import Answer, FakeClock, Line, Reply, fakes, game_bot, minimal_reply, session_bot

from arena.check import FAIL, OPPONENT_PAUSE, PASS, SCENARIOS, WARN, CheckReport, CheckStep, check_bot
from arena.process import BotSpec, TimeControl
from arena.process.confine.sandbox_policy import SandboxPolicy

CHECKBOTS = Path(__file__).resolve().parent / "checkbots"
FAST = TimeControl(per_decision_seconds=0.3)
STEPS = len(SCENARIOS) + 4                      # start, the scenarios, match, turns, quit


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@functools.cache
def _common() -> ModuleType:
    return _load(CHECKBOTS / "common.py", "checkbots_common")


@functools.cache
def checkbot(name: str) -> Callable[[], Answer]:
    """tests/checkbots/<name>.py's bot, in-process: a new one per call.  Its
    ``from common import ...`` gets tests/checkbots/common.py (only while it
    loads: tests/gamebots has a ``common`` too)."""
    common = _common()
    saved = sys.modules.get("common")
    sys.modules["common"] = common
    try:
        module = _load(CHECKBOTS / f"{name}.py", f"checkbots_{name}")
    finally:
        if saved is None:
            del sys.modules["common"]
        else:
            sys.modules["common"] = saved
    (cls,) = [v for v in vars(module).values() if isinstance(v, type)
              and issubclass(v, common.Session) and v is not common.Session]
    bot = name.replace("_", "-")
    return lambda: session_bot(lambda stderr: cls(bot, stderr=stderr))


def greedy() -> Answer:
    """The checkbots' greedy bot without a bug."""
    return session_bot(lambda stderr: _common().Session("greedy", stderr=stderr))


def run_check(tmp_path: Path, bot: Callable[[], Answer], tc: TimeControl = FAST,
              clock: FakeClock | None = None) -> CheckReport:
    # Nothing is started: no sandbox to look for either.
    spec = BotSpec(("bot",), sandbox=SandboxPolicy(mode="none"))
    clock = clock or FakeClock()
    # The match step's opponent waits on the fake clock: no real 0.6 s a check.
    return check_bot(spec, time_control=tc, log_dir=str(tmp_path),
                     transport_factory=fakes({"bot": bot}, clock), pause=clock.sleep)


def step(report: CheckReport, name: str) -> CheckStep:
    return next(s for s in report.steps if s.name == name)


def test_a_correct_bot_passes_every_step(tmp_path: Path) -> None:
    report = run_check(tmp_path, greedy)
    statuses = {s.name: s.status for s in report.steps}
    assert len(report.steps) == STEPS and set(statuses.values()) == {PASS}, "\n".join(report.lines())
    assert report.ok and report.ignored_lines == 0 and report.notes == []
    assert step(report, "start").summary.startswith("answered 'ready' as 'greedy', protocol 2")
    assert step(report, "draw: stock only").request.startswith("draw, options stock;")
    assert step(report, "swap a wild: not down").summary.startswith("legal: ")
    assert step(report, "go out by laying off").summary.endswith("went out")
    assert step(report, "quit").summary == "exited with code 0 after 'quit'"
    # A rule that says the bot is down (or lays off 'once down') agrees with its request.
    for s in report.steps:
        if s.request.endswith("; not down") and "once down" in s.rule:
            assert "not down" in s.rule, (s.name, s.rule)


# The classroom bugs of test_check.py's BUGGY, none of which needs a
# process: (bot, the first scenario it must fail at, a fragment of the
# message naming the bug).
BUGGY = [
    ("upcard_after_buy", "draw: stock only", "there is no upcard to take now"),
    ("wild_high", "lay off: wild on an ace-high run", "nothing goes above AH"),
    ("duplicate", "draw: upcard or stock", "every reply is sent twice"),
    ("unknown_field", "draw: upcard or stock", "unknown field(s) ['why'] in a draw reply"),
    ("unasked_buy", "buy: not offered", "a buy nobody asked for"),
    ("bids_with_last_id", "draw: upcard or stock", "a buy nobody asked for"),    # answers a notice
    ("counts_ids", "buy: offered", "wrong id: a buy reply carried id 1 while request"),
    ("swap_not_down", "swap a wild: not down", "a player who is not down must go down in the turn they swap"),
    ("layoff_typo", "go down: 2S3", "unknown field(s) ['layoff'] in a play reply; expected id, type, go_down, "
                                    "lay_off, swap, steps, discard (did you mean 'lay_off'?)"),
    ("lays_off_first", "go down: 2S3", "lay-offs come only after going down"),
    ("discard_going_out", "go out by laying off", "your plays empty your hand, so you go out: send no discard"),
    ("discards_last", "one card left", "discarding your last card is not going out"),
    ("debug_stdout", "draw: upcard or stock", "stdout is for protocol lines only; write logs to stderr"),
    ("buy_yes", "draw: upcard or stock", "'buy' must be true or false, got 'no'"),
    ("answers_notices", "draw: upcard or stock", "notice reply: it replied to an event notice, which "
                                                 "bots must never answer"),
]


@pytest.mark.parametrize("name,scenario,message", BUGGY, ids=[b[0] for b in BUGGY])
def test_buggy_bots_are_flagged_at_the_right_scenario(tmp_path: Path, name: str, scenario: str,
                                                      message: str) -> None:
    report = run_check(tmp_path, checkbot(name))
    assert not report.ok
    failed = [s for s in report.steps if s.status == FAIL]
    first = failed[0]
    assert first.name == scenario, report.lines()
    assert message in first.summary, first.summary
    assert "timeout" not in first.summary
    # The report shows the rule, and the line the bot wrote.
    assert first.rule and "docs/RULES.md" in first.rule
    assert first.reply.startswith("{") or name == "debug_stdout", first
    if name != "counts_ids":             # a buy nobody asked for is not a miscounted id
        assert not [s for s in failed if "count requests yourself" in s.summary], report.lines()


def test_a_bot_that_sends_every_reply_twice_fails_once(tmp_path: Path) -> None:
    """The bug is named in full at its first step; the later ones say 'again'."""
    report = run_check(tmp_path, checkbot("duplicate"))
    failed = [s for s in report.steps if s.status == FAIL]
    assert failed[0].summary.startswith("every reply is sent twice: ")
    assert "write exactly one line per request" in failed[0].summary
    assert {s.summary for s in failed[1:]} == {
        "again: every reply is sent twice (first at 'draw: upcard or stock')"}
    assert not [s for s in report.steps if s.status == WARN]


def test_the_scenario_before_the_bug_passes(tmp_path: Path) -> None:
    """A bot is failed for its bug, not for the other scenarios."""
    report = run_check(tmp_path, checkbot("upcard_after_buy"))
    failed = {s.name for s in report.steps if s.status == FAIL}
    assert failed <= {"draw: stock only", "match"}, report.lines()
    assert step(report, "go down: 2R4").status == PASS


def test_warnings_are_not_printed_when_logging_is_not_set_up(tmp_path: Path, capfd: Any) -> None:
    run_check(tmp_path, checkbot("unasked_buy"))
    assert "ignoring" not in capfd.readouterr().err


def test_a_traceback_behind_a_legal_reply_warns(tmp_path: Path) -> None:
    """botkit answers with a safe move when the bot's code raises: legal,
    but the scenario warns and shows the traceback.  In-process its stderr
    is in the log before the next request, so the step is exact (a
    process's stderr may reach the next step's log)."""
    report = run_check(tmp_path, checkbot("quiet_crash"))
    assert report.ok
    (warned,) = [s for s in report.steps if s.status == WARN]
    assert warned.name == "lay off: wild on an ace-high run"
    assert "traceback" in warned.summary
    assert any("AttributeError" in d for d in warned.details)


def test_a_bot_that_answers_notices_is_told_so_not_that_its_reply_has_no_id(tmp_path: Path) -> None:
    """A bot that acknowledges every notice: the notices come in the write of
    the request, so its acknowledgement is read as the reply.  The FAIL line
    names that bug, not the missing id; the copies of it in later steps are
    'again', not replies sent twice."""
    inner = game_bot()

    def acknowledges(msg: dict[str, Any]) -> list[Reply]:
        if msg.get("type") == "event":
            return [Line(json.dumps({"ok": True}))]
        return inner(msg)

    report = run_check(tmp_path, lambda: acknowledges)
    failed = [s for s in report.steps if s.status == FAIL]
    first = failed[0]
    assert first.name == "draw: upcard or stock" and first.reply == '{"ok": true}', first
    assert first.summary.startswith("notice reply: it replied to an event notice, which bots must "
                                    "never answer: only 'start' and 'request' are answered"), first
    assert "such lines in" in first.summary and "has no" not in first.summary
    # The tournament's fault (the 'then:' line) names the bug too.
    (then,) = [d for d in first.details if d.startswith("then: ")]
    assert then.startswith("then: malformed: it replied to an event notice"), then
    # Its own reply, read after, is no 'second reply' to an answered request.
    assert 'also: reply behind a notice reply: {"id": 1, "draw": "stock"}' in first.details
    assert {s.summary for s in failed[1:]} == {
        "again: it replies to notices (first at 'draw: upcard or stock')"}, report.lines()
    assert not [s for s in failed if "sent twice" in s.summary]


def late_by(delay: float, first: int = 1) -> Callable[[], Answer]:
    """The minimal bot, answering its requests from the ``first``-th on ``delay`` s late."""
    def on_request(msg: dict[str, Any]) -> list[Reply]:
        return [Line(json.dumps(minimal_reply(msg)), delay if msg["count"] >= first else 0.0)]
    return lambda: game_bot(on_request)


def test_a_reply_past_the_time_limit_times_out_on_the_fake_clock(tmp_path: Path) -> None:
    """0.31 s for a 0.3 s limit: the first request times out, exactly at
    the limit of the fake clock, with no second slept."""
    clock = FakeClock()
    report = run_check(tmp_path, late_by(0.31), clock=clock)
    first = step(report, "draw: upcard or stock")
    assert first.status == FAIL and first.summary.startswith("timeout"), first
    assert "no reply within 0.300 s" in first.summary
    # Each scenario and the match forfeited the bot at its first request,
    # after its 0.3 s; the match's first opponent paused once, on this clock.
    assert clock.now() - 1000.0 == pytest.approx(0.3 * (len(SCENARIOS) + 1) + OPPONENT_PAUSE)


def test_the_time_bank_pays_for_late_replies_until_it_is_spent(tmp_path: Path) -> None:
    """0.5 s replies against 0.3 s and a 0.25 s bank: the first draws on the
    bank (0.05 s left), the second is over its 0.35 s; on the fake clock
    the limits are exact."""
    tc = TimeControl(per_decision_seconds=0.3, bank_seconds=0.25)
    report = run_check(tmp_path, late_by(0.5), tc=tc)
    first = step(report, "draw: upcard or stock")
    assert first.status == FAIL and "its play reply" in first.summary, first
    assert "no reply within 0.350 s" in first.summary
    # 0.29 s replies never touch the bank.
    assert run_check(tmp_path / "b", late_by(0.29), tc=tc).ok
