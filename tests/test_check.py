"""``arena check``: the scenarios reach every decision kind and rule area,
the shipped bots and starter kits pass, and the command line's reports.

Real bot processes, in the sandbox ``arena check`` uses by default, for
what only processes show: start-up failures and exit codes, stderr, the
environment, computing between turns, and the buggy bots of
tests/checkbots/ end to end.  Each of those bots is flagged at the right
scenario in-process, in test_check_fake.py.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.check import FAIL, PASS, SCENARIOS, SKIP, WARN, CheckReport, check_bot
from arena.check.scenarios import PLAYERS
from arena.check.transcript import IN, OUT, read
from arena.cli import main
from arena.process import BotSpec, TimeControl
from arena.shanghai.game import Game
from arena.shanghai.ruleset import Ruleset

REPO = Path(__file__).resolve().parent.parent
CHECKBOTS = REPO / "tests" / "checkbots"
FAST = TimeControl(per_decision_seconds=0.3)
NOT_DOWN = "the bot did not go down on its first turn"


def run_check(argv: list[str], tmp_path: Path, tc: TimeControl = FAST) -> CheckReport:
    return check_bot(BotSpec(tuple(argv)), time_control=tc, log_dir=str(tmp_path))


def step(report: CheckReport, name: str):
    return next(s for s in report.steps if s.name == name)


def test_every_scenario_deal_is_valid_and_named_once() -> None:
    names = [s.name for s in SCENARIOS]
    assert len(names) == len(set(names))
    for s in SCENARIOS:
        Game.seeded(Ruleset.from_mapping(s.rules), PLAYERS, 1, s.deal)   # raises on a bad deal
    shapes = {s.contract for s in SCENARIOS if s.name.startswith("go down")}
    assert shapes == {"2S3", "S3+R4", "2R4", "3S3", "2S3+R4", "S3+2R4", "3R4", "4S3", "3S3+R4", "2S3+2R4"}


def test_a_bot_that_sends_every_reply_twice_fails_once_and_exits_1(tmp_path) -> None:
    """It passed with 21 WARN lines and exit status 0, so an autograder keyed
    on the status passed it: now it fails, and the bug is named in one line;
    the steps after it say 'again' (one line of text for the run of them)."""
    res = CliRunner().invoke(main, ["check", f"{sys.executable} {CHECKBOTS / 'duplicate.py'}",
                                    "--time-per-move", "0.3", "--log-dir", str(tmp_path)])
    assert res.exit_code == 1, res.output
    failed = [line for line in res.output.splitlines() if line.startswith("  FAIL")]
    assert len(failed) == 2, res.output
    assert "every reply is sent twice: " in failed[0] and "write exactly one line per request" in failed[0]
    assert "again: every reply is sent twice (first at 'draw: upcard or stock')" in failed[1]
    assert "  WARN" not in res.output and "\nresult: FAIL (" in res.output


def test_a_request_the_bot_answered_twice_is_told_apart_from_a_miscounted_id() -> None:
    """A buy sent with the last request's id while a buy request waits, which
    the bot then answers with its own id: the extra line is a buy nobody
    asked for.  It was called a miscounted id ('do not count requests
    yourself'), the FAIL said so and only a WARN named the bug."""
    lines = [(OUT, '{"type":"request","id":3,"kind":"draw","options":["stock"]}'),
             (IN, '{"id":3,"draw":"stock"}'),
             (OUT, '{"type":"event","event":{"type":"discard","hand":1,"seat":1,"card":"QH"}}'),
             (OUT, '{"type":"request","id":4,"kind":"buy","options":[true,false]}'),
             (IN, '{"id":3,"buy":true}'),                    # wants the QH: nobody asked yet
             (IN, '{"id":4,"buy":false}'),
             (OUT, '{"type":"request","id":5,"kind":"buy","options":[true,false]}'),
             (IN, '{"id":1,"buy":true}'),                    # counts its own ids: no answer follows
             ]
    _exchanges, issues = read(lines)
    assert [i.what for i in issues] == ["unasked buy", "wrong id"]
    assert "count requests yourself" in issues[1].detail


def test_near_misses_of_the_protocols_names_get_a_did_you_mean() -> None:
    from arena.check.hints import near_misses

    assert near_misses('{"id":3,"layoff":[{"meld":0,"card":"4H"}],"discard":"QH"}') == " (did you mean 'lay_off'?)"
    assert near_misses('{"id":3,"goDown":[["8C","8D","8S"]],"discrad":"QH"}') == (
        " (did you mean 'go_down' for 'goDown', 'discard' for 'discrad'?)")
    assert near_misses('{"id":3,"draw":"Stock"}') == " (did you mean 'stock'?)"
    assert near_misses('{"id":3,"steps":[{"lay_off":{"meld":1,"card":"9H","end":"hi"}}]}') == (
        " (did you mean 'high'?)")
    assert near_misses('{"id":3,"draw":"stock","why":"it fits"}') == ""      # nothing near


def test_the_same_did_you_mean_as_the_tournament_files() -> None:
    from arena.words import did_you_mean

    assert did_you_mean("layoff", ["go_down", "lay_off", "swap"]) == " (did you mean 'lay_off'?)"
    assert did_you_mean("playerz", ["players", "rules"]) == " (did you mean 'players'?)"
    assert did_you_mean("zzz", ["players", "rules"]) == ""


def good_bots() -> list[list[str]]:
    bots = [[sys.executable, "bots/greedy_bot.py"], [sys.executable, "bots/random_bot.py"],
            [sys.executable, "examples/python/bot.py"]]
    node = shutil.which("node")
    if node:
        bots += [[node, "bots/js/bot.js"], [node, "examples/javascript/bot.js"]]
    perl = shutil.which("perl")
    if perl:
        bots.append([perl, "examples/perl/bot.pl"])
    return bots


@pytest.mark.parametrize("argv", good_bots(), ids=lambda a: a[-1])
def test_shipped_bots_and_kits_pass_every_scenario(tmp_path, argv) -> None:
    argv = [argv[0], str(REPO / argv[1])]
    report = run_check(argv, tmp_path, TimeControl())
    statuses = {s.name: s.status for s in report.steps}
    assert set(statuses.values()) == {PASS}, "\n".join(report.lines())
    assert "turns" in statuses                        # and none computed between its turns
    assert report.ignored_lines == 0
    assert step(report, "draw: stock only").request.startswith("draw, options stock;")
    assert step(report, "swap a wild: not down").summary.startswith("legal: ")
    # A rule that says the bot is down (or lays off 'once down') agrees with its request.
    for s in report.steps:
        if s.request.endswith("; not down") and "once down" in s.rule:
            assert "not down" in s.rule, (s.name, s.rule)


def test_the_rule_of_a_scenario_agrees_with_its_request() -> None:
    """'lay off: both ends of a run' said 'once down' where its request says
    'not down': the bot goes down and lays off in one turn, and the rule says so."""
    both_ends = next(s for s in SCENARIOS if s.name == "lay off: both ends of a run")
    assert "not down yet" in both_ends.rule and "in the turn it goes down" in both_ends.rule
    assert not both_ends.rule.startswith("once down")


def test_pythonunbuffered_is_noted_for_a_python_bot_only(tmp_path, monkeypatch) -> None:
    """The note says a Python bot that never flushes passes here: a bash bot
    got it too."""
    monkeypatch.setenv("PYTHONUNBUFFERED", "1")
    script = tmp_path / "bot.sh"
    script.write_text("#!/bin/bash\nexit 3\n")
    bash = run_check(["bash", str(script)], tmp_path / "a")
    assert not bash.ok and bash.notes == []
    python = run_check([sys.executable, "-c", "raise SystemExit(3)"], tmp_path / "b")
    assert [n.split(",")[0] for n in python.notes] == ["PYTHONUNBUFFERED is set here and passed to the bot"]


def test_a_python_program_is_told_by_its_interpreter_its_name_or_its_shebang(tmp_path) -> None:
    from arena.botcommand import runs_python

    (tmp_path / "bot").write_text("#!/usr/bin/env python3\nprint('hi')\n")
    (tmp_path / "bot.sh").write_text("#!/bin/bash\necho hi\n")
    for argv in (["python3", "bot.py"], [sys.executable, "-u", "bot.py"], ["pypy3", "b.py"], ["./mybot.py"],
                 ["env", "PYTHONHASHSEED=0", "python3", "bot.py"], ["uv", "run", "bot.py"], ["./bot"]):
        assert runs_python(argv, tmp_path), argv
    for argv in (["bash", "bot.sh"], ["./bot.sh"], ["node", "bot.js"], ["java", "Bot"], ["./no-such-bot"],
                 ["perl", "bot.pl"]):
        assert not runs_python(argv, tmp_path), argv


def test_c_starter_kit_passes_what_it_reaches(tmp_path) -> None:
    """The C kit never goes down (by design): the two scenarios that need a
    bot that is down are not reached, and say why; all others pass."""
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler")
    build = tmp_path / "c"
    shutil.copytree(REPO / "examples" / "c", build, ignore=shutil.ignore_patterns("bot", "*.o"))
    done = subprocess.run([cc, "-std=c99", "-O2", "-o", str(build / "bot"), str(build / "bot.c")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = run_check([str(build / "bot")], tmp_path / "logs", TimeControl())
    assert report.ok
    skipped = {s.name: s.summary for s in report.steps if s.status == SKIP}
    assert set(skipped) == {"draw: stock only", "one card left"}
    assert all(NOT_DOWN in text for text in skipped.values())
    assert {s.status for s in report.steps} == {PASS, SKIP}


def test_cli_json_report_for_autograders(tmp_path) -> None:
    res = CliRunner().invoke(main, ["check", f"{sys.executable} {CHECKBOTS / 'wild_high.py'}",
                                    "--json", "--time-per-move", "0.3", "--log-dir", str(tmp_path)])
    assert res.exit_code == 1, res.output
    data = json.loads(res.output)
    assert data["ok"] is False and data["result"].startswith("FAIL")
    by_name = {s["name"]: s for s in data["steps"]}
    assert set(by_name) >= {s.name for s in SCENARIOS} | {"start", "match", "quit"}
    wild = by_name["lay off: wild on an ace-high run"]
    assert wild["status"] == FAIL and '"end": "high"' in wild["reply"]
    assert "table [0] 9C 9D 9S, [1] JH QH KH AH" in wild["request"]
    assert data["counts"][FAIL] >= 1 and data["counts"][PASS] >= 15


def test_cli_text_report_shows_rule_request_and_reply(tmp_path) -> None:
    res = CliRunner().invoke(main, ["check", f"{sys.executable} {REPO / 'bots' / 'greedy_bot.py'}",
                                    "--log-dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    at = next(i for i, line in enumerate(lines) if "PASS  buy: offered" in line)
    assert lines[at + 1].strip().startswith("rule: seat 1 declined the upcard 7H")
    assert lines[at + 2].strip().startswith("request: buy, options true false;")
    assert lines[at + 3].strip().startswith('reply: {"id":')
    assert "lines ignored: 0" in res.output and "result: PASS" in res.output.rstrip().splitlines()[-2:]


def test_the_report_names_a_command_with_spaces_as_it_was_quoted(tmp_path) -> None:
    """A student's folder with a space in its name: the header shows the
    command as one could type it again, not as words that split elsewhere."""
    folder = tmp_path / "judy smith"
    folder.mkdir()
    shutil.copy(REPO / "examples" / "python" / "bot.py", folder / "my bot.py")
    argv = [sys.executable, str(folder / "my bot.py")]
    res = CliRunner().invoke(main, ["check", shlex.join(argv), "--log-dir", str(tmp_path / "logs")])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[0] == f"arena check: {shlex.join(argv)}"
    assert f"'{folder / 'my bot.py'}'" in res.output.splitlines()[0]


def test_the_bots_stderr_quoted_in_the_report_is_escaped(tmp_path) -> None:
    """The end of a failing bot's stderr log, shown as evidence, is one line of
    printable text per line it wrote: ESC, CR or U+202E would rewrite the terminal."""
    res = subprocess.run([sys.executable, "-m", "arena", "check", f"{sys.executable} "
                          f"{CHECKBOTS / 'stderr_escapes.py'}", "--log-dir", str(tmp_path)],
                         capture_output=True, text=True, cwd=REPO, timeout=300)
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr
    assert "| oops \\x1b[2J\\u202e\\r done" in res.stdout
    assert not [c for c in ("\x1b", "\r", "\u202e") if c in res.stdout + res.stderr]


# ------------------------------------------------------------- the transcript

def test_transcript_tells_duplicates_unasked_buys_and_wrong_ids_apart() -> None:
    start = '{"type":"start","seat":1}'
    lines = [
        (OUT, start), (IN, '{"type":"ready","name":"b"}'),
        (OUT, '{"type":"request","id":4,"kind":"draw","options":["stock"]}'),
        (IN, '{"id":4,"draw":"stock"}'), (IN, '{"id":4,"draw":"stock"}'),      # sent twice
        (OUT, '{"type":"request","id":5,"kind":"play","options":["QH"]}'),
        (IN, '{"id":1,"discard":"QH"}'),                                       # counted itself
        (IN, '{"id":5,"discard":"QH"}'),
        (IN, '{"buy":true}'),                                                  # nobody asked
        (IN, "  "),
    ]
    exchanges, issues = read(lines)
    assert [(e.kind, e.reply) for e in exchanges] == [
        ("start", '{"type":"ready","name":"b"}'), ("draw", '{"id":4,"draw":"stock"}'),
        ("play", '{"id":5,"discard":"QH"}')]
    assert [i.what for i in issues] == ["duplicate", "wrong id", "unasked buy"]
    assert "request 5 was waiting" in issues[1].detail


def test_transcript_tells_a_notice_answered_from_a_reply_without_its_id() -> None:
    """A line with neither an id nor a choice after notices answers one of
    them, also when it was taken for the reply; one with a choice is a reply
    that forgot its id; the reply read after a notice's answer is no second
    reply."""
    lines = [
        (OUT, '{"type":"event","event":{"type":"deal","hand":1}}'),
        (OUT, '{"type":"request","id":1,"kind":"draw","options":["stock"]}'),
        (IN, '{"ok":true}'), (IN, '{"id":1,"draw":"stock"}'),
        (OUT, '{"type":"error","id":1,"fault":"malformed"}'), (IN, '{"ok":true}'),
        (OUT, '{"type":"event","event":{"type":"draw","hand":1,"seat":0}}'),
        (OUT, '{"type":"request","id":2,"kind":"play","options":["QH"]}'),
        (IN, '{"discard":"QH"}'),
    ]
    exchanges, issues = read(lines)
    assert [(e.reply, e.noticed) for e in exchanges] == [
        ('{"ok":true}', True), ('{"discard":"QH"}', False)]
    assert [(i.what, i.taken) for i in issues] == [
        ("notice reply", True), ("reply behind a notice reply", False), ("notice reply", False)]
    assert "an event notice" in issues[0].detail and "an 'error' notice" in issues[2].detail


def test_a_reply_with_a_later_id_is_the_arenas_to_judge() -> None:
    """An id that was never sent is a wrong_id fault the runner records; the
    transcript does not report it a second time."""
    lines = [(OUT, '{"type":"request","id":4,"kind":"buy","options":[true,false]}'),
             (IN, '{"id":9,"buy":false}')]
    exchanges, issues = read(lines)
    assert issues == [] and exchanges[0].reply == '{"id":9,"buy":false}'


def test_a_traceback_behind_a_legal_reply_warns(tmp_path) -> None:
    """botkit answers with a safe move when the bot's code raises: legal, so
    no FAIL, but the scenario warns and shows the traceback."""
    report = run_check([sys.executable, str(CHECKBOTS / "quiet_crash.py")], tmp_path)
    assert report.ok
    warned = [s for s in report.steps if s.status == WARN]
    # The arena reads stderr on a thread of its own: on a loaded machine the
    # traceback can reach the log of the step after the one that caused it.
    assert len(warned) == 1
    assert warned[0].name in ("lay off: wild on an ace-high run", "swap a wild")
    assert "traceback" in warned[0].summary
    assert any("AttributeError" in d for d in warned[0].details)


def test_a_bot_computing_between_its_turns_warns(tmp_path) -> None:
    # Up to three checks: on a machine loaded far past its CPUs (load 12 on
    # 2, in one full-suite run) a short check can end before the spinning
    # thread gets enough CPU to be caught (arena/process/confine/turns.py
    # measured 23 of 27 matches caught at load 4-9); a guard that never
    # catches it still fails all three.
    for attempt in range(3):
        report = run_check([sys.executable, str(REPO / "tests" / "bots" / "ponder_game.py")],
                           tmp_path / str(attempt), TimeControl())
        turns = step(report, "turns")
        if turns.status == WARN:
            break
    assert turns.status == WARN and "between its turns" in turns.summary, "\n".join(report.lines())
    assert report.ok and {s.status for s in report.steps if s.name != "turns"} == {PASS}


def test_docs_list_every_scenario() -> None:
    doc = (REPO / "docs" / "CHECK.md").read_text()
    for s in SCENARIOS:
        if not s.name.startswith("go down"):
            assert f"| {s.name} |" in doc, s.name


def test_skips_after_a_failed_start_are_one_line_and_every_step_in_json(tmp_path) -> None:
    """A bot that dies at start-up: the text report says once that the 22
    remaining steps were not run (it printed 22 identical SKIP lines); the
    JSON, for autograders, still has every step."""
    dead = tmp_path / "dead.py"
    dead.write_text("import sys\nsys.exit(3)\n")
    argv = ["check", f"{sys.executable} {dead}", "--log-dir", str(tmp_path / "logs")]
    text = CliRunner().invoke(main, argv)
    assert text.exit_code == 1, text.output
    skips = [line for line in text.output.splitlines() if line.lstrip().startswith("SKIP")]
    rest = len(SCENARIOS) + 3                        # every scenario, match, turns, quit
    assert skips == [f"  SKIP  the remaining {rest} steps  not run: step 'start' failed"], text.output
    assert f"{rest} SKIP, 1 FAIL" in text.output
    data = json.loads(CliRunner().invoke(main, [*argv, "--json"]).output)
    skipped = [s["name"] for s in data["steps"] if s["status"] == SKIP]
    assert skipped == [s.name for s in SCENARIOS] + ["match", "turns", "quit"]
    assert data["counts"][SKIP] == rest


def test_a_fail_that_says_what_one_before_said_is_one_line_in_text() -> None:
    """The same fault in step after step (an unknown field in every draw
    reply) is told in full once; the JSON keeps every word of every step."""
    report = CheckReport("b")
    report.add("a", FAIL, "malformed: unknown field 'why'", ["evidence"], rule="r", reply="{}")
    report.add("b", PASS, "legal")
    for name in ("c", "d"):
        report.add(name, FAIL, "malformed: unknown field 'why'", ["evidence"], rule="r", reply="{}")
    report.add("e", FAIL, "again: every reply is sent twice (first at 'x')")
    report.add("f", FAIL, "again: every reply is sent twice (first at 'x')")
    shown = [line for line in report.lines() if line.startswith("  FAIL") or "evidence" in line]
    assert [" ".join(line.split()) for line in shown] == [
        "FAIL a malformed: unknown field 'why'", "evidence",
        "FAIL 2 steps, c to d again: the same as 'a'",
        "FAIL 2 steps, e to f again: every reply is sent twice (first at 'x')"]
    assert [s["summary"] for s in report.to_json()["steps"]][2:4] == ["malformed: unknown field 'why'"] * 2


def test_only_consecutive_skips_of_one_failed_step_are_collapsed() -> None:
    from arena.check.report import not_run

    report = CheckReport("b")
    report.add("start", PASS, "ready")
    report.add("x", FAIL, "crash")
    for name in ("a", "b", "c"):
        report.add(name, SKIP, not_run("x"))
    report.add("d", SKIP, "not reached: the bot never went down")
    report.add("e", SKIP, "not reached: the bot never went down")
    report.add("f", SKIP, not_run("x"))
    lines = [line.split()[1:] for line in report.lines() if line.startswith("  SKIP")]
    assert [" ".join(w) for w in lines] == [
        "3 steps, a to c not run: step 'x' failed",
        "d not reached: the bot never went down", "e not reached: the bot never went down",
        "f not run: step 'x' failed"]
