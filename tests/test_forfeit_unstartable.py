"""`arena run --forfeit-unstartable`: a class's run goes on past a student's bot
that cannot be started at all; that bot forfeits every match it sits in, and
a fixed program is re-played with `--rerun`.  Without the option the run
still stops before any match, naming the bot.

End to end through the CLI, with real programs: a script that does not exist,
and one that is not executable.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from inproc import arena_here

from arena.match import FaultPolicy, MatchSpec, SeatSpec

ROOT = Path(__file__).resolve().parent.parent
GAMEBOTS = ROOT / "tests" / "gamebots"
PY = sys.executable
FLAG = "--forfeit-unstartable"


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return arena_here(*args, cwd=cwd)


def a_class(tmp_path: Path) -> Path:
    """Two built-in players; ann's script is missing, bo's is not executable."""
    for name in ("ann", "bo"):
        (tmp_path / name).mkdir()
    (tmp_path / "bo" / "bot.py").write_text("print('never run')\n")
    (tmp_path / "bo" / "bot.py").chmod(0o644)
    (tmp_path / "class.yaml").write_text(
        "name: class\nbots:\n  - {name: g, builtin: greedy}\n  - {name: r, builtin: random}\n"
        f"  - {{name: ann, command: [{json.dumps(PY)}, bot.py], dir: ann}}\n"
        "  - {name: bo, command: ./bot.py, dir: bo}\n"
        "players: 2\nrules: {contracts: [2S3]}\nseed: 123456789123\nout: results\n")
    return tmp_path / "class.yaml"


def seats(tmp_path: Path) -> list[tuple[str, str, int]]:
    c = sqlite3.connect(f"file:{tmp_path / 'results' / 'results.sqlite'}?mode=ro", uri=True)
    try:
        return c.execute("SELECT match_id, bot, forfeited FROM seats ORDER BY match_id, seat").fetchall()
    finally:
        c.close()


def first_faults(tmp_path: Path) -> dict[str, str]:
    c = sqlite3.connect(f"file:{tmp_path / 'results' / 'results.sqlite'}?mode=ro", uri=True)
    try:
        rows = c.execute("SELECT s.bot, f.kind, f.decision_kind, f.detail FROM faults f JOIN seats s "
                         "ON s.match_id = f.match_id AND s.seat = f.seat ORDER BY f.id").fetchall()
    finally:
        c.close()
    out: dict[str, str] = {}
    for bot, kind, when, detail in rows:
        out.setdefault(bot, f"{kind} at {when}: {detail}")
    return out


def test_without_the_option_the_run_stops_before_any_match(tmp_path: Path) -> None:
    a_class(tmp_path)
    done = arena("run", "class.yaml", "--jobs", "1", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].startswith("Error: class.yaml:5: bots.ann.command: script ")
    assert not (tmp_path / "results" / "results.sqlite").exists() or seats(tmp_path) == []


def test_with_it_the_broken_bots_forfeit_and_everything_else_is_played(tmp_path: Path) -> None:
    a_class(tmp_path)
    done = arena("run", "class.yaml", "--jobs", "2", FLAG, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if "forfeits every match it sits in" in line]
    assert len(warned) == 2 and warned[0].startswith("warning: class.yaml:5: bots.ann.command: script 'bot.py'")
    assert "bots.bo.command: './bot.py' is not executable (chmod +x ./bot.py" in warned[1]
    stored = seats(tmp_path)
    assert len({m for m, _, _ in stored}) == 6 * 2          # 6 tables of 2, 2 rotations each
    assert all(lost == (bot in ("ann", "bo")) for _, bot, lost in stored)
    faults = first_faults(tmp_path)
    assert faults["ann"].startswith("crash at start: exited with code 2")   # its interpreter started
    assert faults["bo"] == ("crash at start: cannot start './bot.py': not executable (chmod +x ./bot.py, "
                            "or name its interpreter: python3 ./bot.py)")
    assert set(faults) == {"ann", "bo"}
    checked = arena("verify", "results", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_fixed_bot_is_rerun_and_a_still_broken_one_is_refused(tmp_path: Path) -> None:
    a_class(tmp_path)
    assert arena("run", "class.yaml", "--jobs", "1", FLAG, cwd=tmp_path).returncode == 0
    refused = arena("run", "class.yaml", "--rerun", "bo", FLAG, cwd=tmp_path)
    assert refused.returncode == 1 and "bots.bo.command" in refused.stderr
    assert "--rerun set nothing aside" in refused.stderr
    # refused before the estimate of the matches it would have re-played, as a lone line
    assert len(refused.stderr.splitlines()) == 1, refused.stderr
    without = arena("run", "class.yaml", "--rerun", "ann", cwd=tmp_path)
    assert without.returncode == 1 and without.stderr.splitlines() == [
        f"Error: class.yaml:5: bots.ann.command: script 'bot.py' not found in {tmp_path / 'ann'} "
        f"(--rerun set nothing aside)"], without.stderr
    bot = tmp_path / "bo" / "bot.py"
    bot.write_text(f"#!{PY}\n" + (GAMEBOTS / "minimal.py").read_text())
    (tmp_path / "bo" / "common.py").write_text((GAMEBOTS / "common.py").read_text())
    bot.chmod(0o755)
    done = arena("run", "class.yaml", "--rerun", "bo", FLAG, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    stored = seats(tmp_path)
    assert [lost for _, bot_name, lost in stored if bot_name == "bo"] == [0] * 6
    assert all(lost for _, bot_name, lost in stored if bot_name == "ann")


def test_the_policy_travels_with_the_match_spec() -> None:
    # Workers started with exec, and Ray actors, get the spec as JSON.
    spec = MatchSpec("m", (SeatSpec.builtin("greedy"), SeatSpec.builtin("random")),
                     faults=FaultPolicy(unstartable_forfeits=True))
    assert MatchSpec.from_json(json.loads(json.dumps(spec.to_json()))).faults.unstartable_forfeits is True


def test_the_run_summary_tells_failures_to_start_from_arena_errors() -> None:
    from arena.process import BotStartupError
    from arena.tournament.executors.outcome import MatchFailure
    from arena.tournament.standings.faults import FaultTally
    # What the runner tests a failure's reason by (a program deleted or made
    # unexecutable after the run's check, without --forfeit-unstartable).
    reason = MatchFailure.of("m", BotStartupError("cannot start './bot.py': not executable", argv=["./bot.py"], bot="bo")).reason
    assert reason.startswith("BotStartupError:")
    lines = FaultTally(failed=3, unstartable=2).lines()
    assert lines[1] == "  arena errors: 1 match failed (not a bot's fault; logs/errors.log)"
    assert lines[2].startswith("  2 matches failed because a bot's program could not be started")
    assert lines[2].endswith("run with --forfeit-unstartable to have that bot forfeit its matches instead")
    assert FaultTally(failed=2, unstartable=2).lines()[1:] == [lines[2]]
