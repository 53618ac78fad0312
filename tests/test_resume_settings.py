"""What a resume must not change without a word: the sandbox the stored
matches ran under (``sandbox: auto`` resolves by machine), the paths a bot
was granted in it, and what the opening line says is left to play.

The commands run as real subprocesses: the exit status and the two streams
are what an organiser sees.  A machine without a working bubblewrap is one
where ``ARENA_BWRAP`` names no program.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from arena.tournament.results.database import ResultStore, StoreError

ROOT = Path(__file__).resolve().parent.parent
GAMEBOTS = ROOT / "tests" / "gamebots"
NO_BWRAP = {"ARENA_BWRAP": "/nonexistent/bwrap"}


def arena(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd, env={**os.environ, **(env or {})})


def error_line(done: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert "Traceback" not in done.stderr
    return lines[0]


def tournament(tmp: Path, extra: str = "", bot_extra: str = "") -> Path:
    """A bot program against a built-in player: 2 tables' worth of matches (4), quickly played."""
    path = tmp / "t.yaml"
    command = json.dumps([sys.executable, str(GAMEBOTS / "minimal.py")])
    path.write_text(f"name: t\nbots:\n  - {{name: m, command: {command}{bot_extra}}}\n"
                    f"  - {{name: g, builtin: greedy}}\nplayers: 2\nrules: {{contracts: [2S3]}}\n"
                    f"seed: 1\ndeals: 2\n{extra}")
    return path


def forget_one(out: Path) -> None:
    """As if the run had stopped before its last match."""
    with sqlite3.connect(out / "results.sqlite") as db:
        db.execute("PRAGMA foreign_keys = ON")
        db.execute("DELETE FROM matches WHERE schedule_index = 3")


def stored_count(out: Path) -> int:
    return len(stored(out))


def stored(out: Path) -> list[tuple]:
    with sqlite3.connect(out / "results.sqlite") as db:
        return db.execute("SELECT * FROM matches ORDER BY match_id").fetchall()


@pytest.mark.long(20)
def test_a_resume_where_auto_is_no_sandbox_is_refused(tmp_path: Path) -> None:
    """Played in the sandbox (auto resolved to bwrap), resumed on a machine
    where auto is no sandbox: the last match would have run unsandboxed, in
    the same table, without a word."""
    tournament(tmp_path)
    assert arena("run", "t.yaml", "--out", "res", cwd=tmp_path).returncode == 0
    forget_one(tmp_path / "res")
    db = tmp_path / "res" / "results.sqlite"
    before = stored(tmp_path / "res")
    done = arena("run", "t.yaml", "--out", "res", cwd=tmp_path, env=NO_BWRAP)
    assert error_line(done) == (
        f"Error: {db}: its 3 stored matches were played in the bubblewrap sandbox (sandbox: auto resolved to bwrap), "
        f"but here sandbox: auto resolves to none; refusing to mix matches with and without the sandbox: resume "
        f"where bubblewrap runs (set 'sandbox: bwrap' to make sure), or use another output directory (--out) to "
        f"start over")
    assert stored_count(tmp_path / "res") == 3
    dry = arena("run", "t.yaml", "--out", "res", "--dry-run", cwd=tmp_path, env=NO_BWRAP)
    assert "resolves to none; refusing to mix" in error_line(dry)
    assert stored(tmp_path / "res") == before
    # Naming the mode the stored matches ran under is no change of the file.
    (tmp_path / "t.yaml").write_text((tmp_path / "t.yaml").read_text() + "sandbox: bwrap\n")
    again = arena("run", "t.yaml", "--out", "res", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert stored_count(tmp_path / "res") == 4


def test_a_resume_where_auto_is_the_sandbox_is_refused_and_sandbox_none_goes_on(tmp_path: Path) -> None:
    tournament(tmp_path)
    assert arena("run", "t.yaml", "--out", "res", cwd=tmp_path, env=NO_BWRAP).returncode == 0
    forget_one(tmp_path / "res")
    done = arena("run", "t.yaml", "--out", "res", cwd=tmp_path)
    assert error_line(done).endswith(
        "its 3 stored matches were played without a sandbox (sandbox: auto resolved to none), but here sandbox: "
        "auto resolves to bwrap; refusing to mix matches with and without the sandbox: set 'sandbox: none' in the "
        "file to go on as they were played, or use another output directory (--out) to start over with the sandbox")
    assert stored_count(tmp_path / "res") == 3
    # The way out the line gives: the last match is played as the others were.
    tournament(tmp_path, extra="sandbox: none\n")
    again = arena("run", "t.yaml", "--out", "res", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert stored_count(tmp_path / "res") == 4
    # ... and the stored matches hold a file saying bwrap to the sandbox they ran under
    forget_one(tmp_path / "res")
    tournament(tmp_path, extra="sandbox: bwrap\n")
    assert 'sandbox: was "auto", now "bwrap"' in error_line(arena("run", "t.yaml", "--out", "res", cwd=tmp_path))


def test_a_resume_with_another_grant_of_a_bot_is_refused(tmp_path: Path) -> None:
    """A bot's sandbox grants (read, write, scratch) change what it can see
    and keep: a resume without the opening book it read, or with a folder
    it could not read before, ranks two bots under one name."""
    book = tmp_path / "book"
    book.mkdir()
    tournament(tmp_path, bot_extra=f", sandbox: {{read: [{json.dumps(str(book))}]}}")
    assert arena("run", "t.yaml", "--out", "res", cwd=tmp_path).returncode == 0
    forget_one(tmp_path / "res")
    tournament(tmp_path)
    done = arena("run", "t.yaml", "--out", "res", cwd=tmp_path)
    line = error_line(done)
    assert '(bots.m.sandbox.read: was ["' in line and ', now [])' in line
    tournament(tmp_path, bot_extra=f", sandbox: {{read: [{json.dumps(str(book))}], scratch: true}}")
    done = arena("run", "t.yaml", "--out", "res", cwd=tmp_path)
    assert "(bots.m.sandbox.scratch: was false, now true)" in error_line(done)
    assert stored_count(tmp_path / "res") == 3


def test_results_stored_before_the_grants_and_the_resolved_sandbox_still_resume(tmp_path: Path) -> None:
    """Stored by a version that kept neither a bot's grants nor what auto
    resolved to: compared without them, and held to the sandbox of the
    first resume from then on."""
    bot = {"name": "m", "command": ["./m"], "dir": "/x"}
    old = {"name": "t", "bots": [bot, {"name": "g", "builtin": "greedy"}], "sandbox": "auto"}
    now = {**old, "bots": [{**bot, "sandbox": {"read": ["/b"], "write": [], "scratch": False}}, old["bots"][1]]}
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.init_tournament("t", old, seed=1)
        store._conn.execute("INSERT INTO matches VALUES ('m1', 0, 0, 0, 0, 1, 0, 0, 0, 0, 'x', 'x', NULL, NULL)")
        store.init_tournament("t", now, seed=1)                 # no error
        store.settle_sandbox("auto", "none")                    # no error: recorded
        with pytest.raises(StoreError, match="auto resolved to none\\), but here sandbox: auto resolves to bwrap"):
            store.settle_sandbox("auto", "bwrap")
        # a grant stored is compared from then on; a run with none stored yet records it afresh
        store.init_tournament("t", now, seed=1)
    with ResultStore(tmp_path / "new.sqlite") as store:
        store.init_tournament("t", now, seed=1)
        # a failed match holds the file to the tournament, and played under no sandbox
        store._conn.execute("INSERT INTO failed_matches VALUES ('m1', 0, '[]', 'x', NULL, 1, 'x')")
        with pytest.raises(StoreError, match=r'bots\.m\.sandbox\.read: was \["/b"\], now \[\]'):
            store.init_tournament("t", {**now, "bots": [{**bot, "sandbox": {"read": [], "write": [],
                                                                            "scratch": False}}, old["bots"][1]]},
                                  seed=1)
        store.settle_sandbox("auto", "bwrap")
        store.settle_sandbox("auto", "none")    # no match stored: nothing was played under bwrap


def test_affinity_is_not_stored_with_the_results(tmp_path: Path) -> None:
    """Where a match plays (its CPU, like --jobs and --executor) changes how
    fast it runs, not what the table means: a resume may change it."""
    from arena.tournament.config.load import load_config

    config = load_config(tournament(tmp_path))
    assert config.with_overrides(affinity=False).to_mapping() == config.with_overrides(affinity=True).to_mapping()


@pytest.mark.long(18)
def test_the_opening_estimate_of_a_resume_counts_the_matches_left(tmp_path: Path) -> None:
    """It counted every match of the schedule: a run stopped at 140 of 200
    announced the whole tournament's time again."""
    (tmp_path / "t.yaml").write_text("name: t\nbots: [{name: a, builtin: greedy}, {name: b, builtin: random}]\n"
                                     "players: 2\nrules: {contracts: [2S3]}\nseed: 1\ndeals: 100\n")
    first = arena("run", "t.yaml", "--out", "res", "--jobs", "1", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "200 matches (round_robin, 2 players per table, 2 bots), 1 in parallel; estimated " in first.stderr
    with sqlite3.connect(tmp_path / "res" / "results.sqlite") as db:
        db.execute("PRAGMA foreign_keys = ON")
        db.execute("DELETE FROM matches WHERE schedule_index >= 140")
        took = db.execute("SELECT avg(duration_seconds) FROM matches").fetchone()[0]
    # timed by the 140 stored: 60 such matches, one at a time
    left = f"60 left to play, estimated {60 * took / 60:.1f} min"
    dry = arena("run", "t.yaml", "--out", "res", "--jobs", "1", "--dry-run", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert f"200 matches (round_robin, 2 players per table, 2 bots), 1 in parallel; {left}" in dry.stderr
    done = arena("run", "t.yaml", "--out", "res", "--jobs", "1", cwd=tmp_path)
    assert f"; {left}" in done.stderr and "played 60 matches" in done.stderr
    again = arena("run", "t.yaml", "--out", "res", "--jobs", "1", cwd=tmp_path)
    assert "1 in parallel; all stored already" in again.stderr


def test_a_hand_edited_resolved_sandbox_holds_nothing_and_shows_nothing(tmp_path: Path) -> None:
    """What the store reads back goes into the refusal's line: a value no
    arena stores is taken for none stored (and never printed)."""
    config = {"name": "t", "bots": [{"name": "m", "command": ["./m"]}], "sandbox": "\x1b[2J"}
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.init_tournament("t", config, seed=1)
        store._conn.execute("INSERT INTO matches VALUES ('m1', 0, 0, 0, 0, 1, 0, 0, 0, 0, 'x', 'x', NULL, NULL)")
        store._conn.execute("UPDATE tournament SET config = ?",
                            (json.dumps({**config, "sandbox_resolved": "\x1b[2J"}),))
        store.settle_sandbox("auto", "bwrap")               # no error: recorded in its place
        with pytest.raises(StoreError) as refused:
            store.settle_sandbox("auto", "none")
    assert "\x1b" not in str(refused.value) and "(sandbox: bwrap)" in str(refused.value)


def test_a_rerun_the_sandbox_would_refuse_sets_nothing_aside(tmp_path: Path) -> None:
    """``--rerun`` sets a bot's matches aside before it resumes: a resume the
    sandbox check refuses must be refused before that, not after."""
    tournament(tmp_path)
    assert arena("run", "t.yaml", "--out", "res", cwd=tmp_path).returncode == 0
    before = stored(tmp_path / "res")
    done = arena("run", "t.yaml", "--out", "res", "--rerun", "m", cwd=tmp_path, env=NO_BWRAP)
    assert "resolves to none; refusing to mix" in error_line(done)
    assert stored(tmp_path / "res") == before
    with sqlite3.connect(tmp_path / "res" / "results.sqlite") as db:
        archive = db.execute("SELECT name FROM sqlite_master WHERE name = 'superseded_matches'").fetchall()
        assert not archive or db.execute("SELECT count(*) FROM superseded_matches").fetchone()[0] == 0


def test_results_stored_before_seating_resume_only_with_seating_rotate(tmp_path: Path) -> None:
    """Results stored before 'seating' existed were seated by rotating the
    listed order: resumed with today's default they would get differently
    seated matches beside them, so the refusal says how to go on."""
    from arena.tournament.config.load import load_config

    path = tournament(tmp_path)
    old = load_config(path).to_mapping()
    assert old.pop("seating") == "balanced"
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.init_tournament("t", old, seed=1)
        store._conn.execute("INSERT INTO matches VALUES ('m1', 0, 0, 0, 0, 1, 0, 0, 0, 0, 'x', 'x', NULL, NULL)")
        with pytest.raises(StoreError, match=r"seating: was \"rotate\", now \"balanced\"\).*seated with 'seating: "
                                             "rotate', as results stored before the setting existed were: give "
                                             "that in the file to go on with them"):
            store.init_tournament("t", load_config(path).to_mapping(), seed=1)
        path.write_text(path.read_text() + "seating: rotate\n")
        rotate = load_config(path)
        assert rotate.seating == "rotate" and "seating" not in rotate.to_mapping()
        store.init_tournament("t", rotate.to_mapping(), seed=1)     # no error: goes on as stored
        # another difference besides: the hint would not help, so it is not given
        with pytest.raises(StoreError) as refused:
            store.init_tournament("t", {**load_config(tmp_path / "t.yaml").to_mapping(), "deals": 9,
                                        "seating": "balanced"}, seed=1)
        assert "deals: was 2, now 9" in str(refused.value) and "seated with" not in str(refused.value)
