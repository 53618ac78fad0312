"""Issue 10 point 3: bot commands on the command line of `play` and `check`:
unquoted commands, `check -- CMD`, the time options, the start-up hint,
and `play`'s exit status (3) when a seat is forfeited at the start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from inproc import arena_here

from arena.botcommand import is_interpreter, quoted_hint, unquoted_problem
from arena.cli import main
from arena.players.registry import BUILTIN_PLAYERS

ROOT = Path(__file__).resolve().parent.parent
GAMEBOTS = ROOT / "tests" / "gamebots"
PY = sys.executable


def cli(*args: str) -> object:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_interpreters_and_the_quoting_hint() -> None:
    assert is_interpreter("python3") and is_interpreter("python3.11") and is_interpreter("/usr/bin/node")
    assert not is_interpreter("./mybot") and not is_interpreter("greedy") and not is_interpreter("mybot.py")
    builtins = list(BUILTIN_PLAYERS)
    assert quoted_hint(["python3", "bots/a.py", "greedy", "java", "Bot.java"], builtins) == [
        '"python3 bots/a.py"', "greedy", '"java Bot.java"']
    assert unquoted_problem(["python3 bots/a.py", "greedy", "./mybot"], builtins, "play") is None


@pytest.mark.parametrize("args, expected", [
    (["python3", "tests/gamebots/minimal.py", "greedy"],
     'quote each bot\'s command as one argument, e.g. arena play "python3 tests/gamebots/minimal.py" greedy'),
    (["greedy", "node", "bots/js/bot.js"],
     'e.g. arena play greedy "node bots/js/bot.js"'),
    (["python3", "greedy"], 'give the program it runs, quoted with it as one argument'),
])
def test_play_with_an_unquoted_command_says_how_to_quote_it_and_starts_nothing(
        tmp_path: Path, args: list[str], expected: str) -> None:
    done = cli("play", *args, "--log-dir", str(tmp_path / "logs"))
    assert done.exit_code == 2 and expected in done.output, done.output
    assert len(done.output.strip().splitlines()) == 1 and done.stdout == ""
    assert not (tmp_path / "logs").exists()     # no bot was started


def test_check_with_extra_arguments_says_how_to_quote_them() -> None:
    done = cli("check", "python3", "mybot.py")
    assert done.exit_code == 2 and len(done.output.strip().splitlines()) == 1
    assert 'arena check "python3 mybot.py"' in done.output and "arena check -- python3 mybot.py" in done.output
    lone = cli("check", "python3")
    assert lone.exit_code == 2 and 'e.g. arena check "python3 mybot.py"' in lone.output
    builtin = cli("check", "greedy")
    assert builtin.exit_code == 2 and "built-in player" in builtin.output


def test_check_takes_the_command_after_dashes_with_its_own_options(tmp_path: Path) -> None:
    record = tmp_path / "seen.jsonl"
    # --per-decision after -- belongs to the bot (the recorder ignores it), not to arena
    # no sandbox: the recorder writes to this test's directory
    done = cli("check", "--sandbox", "none", "--startup", "7", "--per-decision", "0.5", "--time-bank", "3", "--",
               PY, str(GAMEBOTS / "recorder.py"), str(record), "--per-decision", "9")
    assert "PASS  start" in done.output, done.output
    starts = [json.loads(line) for line in record.read_text().splitlines() if '"start"' in line]
    assert starts and starts[0]["time"] == {"startup": 7.0, "decision": 0.5, "bank": 3.0}


def test_play_passes_the_time_options_to_the_bot(tmp_path: Path) -> None:
    record = tmp_path / "seen.jsonl"
    done = cli("play", f"{PY} {GAMEBOTS / 'recorder.py'} {record}", "passive", "--seed", "1",
               "--startup", "12", "--per-decision", "0.25", "--time-bank", "4", "--log-dir", str(tmp_path),
               "--sandbox", "none")
    assert done.exit_code == 0, done.output
    start = json.loads(record.read_text().splitlines()[0])
    assert start["type"] == "start" and start["time"] == {"startup": 12.0, "decision": 0.25, "bank": 4.0}
    for option in ("--startup", "--per-decision", "--time-bank"):
        refused = cli("play", "greedy", "random", option, "-1")
        assert refused.exit_code == 2 and option in refused.output


def arena(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return arena_here(*args, cwd=ROOT, env=env)


def test_a_slow_start_forfeits_exits_3_and_says_why_and_more_startup_time_fixes_it(tmp_path: Path) -> None:
    slow = f"{PY} {GAMEBOTS / 'slow_start.py'} 2"
    env = dict(os.environ)
    lost = arena("play", slow, "greedy", "--seed", "1", "--startup", "0.5", "--log-dir", str(tmp_path), env=env)
    assert lost.returncode == 3, lost.stderr
    error = [line for line in lost.stderr.splitlines() if line.startswith("error:")]
    assert len(error) == 1 and "seat 0 (slow_start.py) was forfeited at the start" in error[0]
    assert "precompiling or more start-up time (--startup" in error[0]
    assert "(forfeited)" in lost.stdout         # the match itself was still played and shown
    fine = arena("play", slow, "greedy", "--seed", "1", "--startup", "30", "--log-dir", str(tmp_path), env=env)
    assert fine.returncode == 0, fine.stderr


def test_an_unflushed_bot_is_told_to_flush_and_flushing_fixes_it(tmp_path: Path) -> None:
    bot = f"{PY} {GAMEBOTS / 'unflushed.py'}"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    lost = arena("play", bot, "greedy", "--seed", "1", "--startup", "2", "--log-dir", str(tmp_path), env=env)
    assert lost.returncode == 3
    assert "no reply within 2.000 s; does the bot flush stdout after each line?" in lost.stderr
    assert "PYTHONUNBUFFERED=1" in lost.stderr and "flush=True" in lost.stderr
    assert "Perl: $| = 1" in lost.stderr and "Java: System.out.flush()" in lost.stderr
    fixed = arena("play", bot, "greedy", "--seed", "1", "--startup", "2", "--log-dir", str(tmp_path),
                  env={**env, "PYTHONUNBUFFERED": "1"})
    assert fixed.returncode == 0, fixed.stderr
