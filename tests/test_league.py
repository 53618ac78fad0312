"""``arena league``: the league file, the store, a version's life, and ``run``
(resuming, and a real SIGKILL that loses nothing stored).

Cheap on purpose: the house players are built-in (in-process), the rules one
short contract, the tables of 3; the versions handed in are the tiny bots
of tests/gamebots and tests/checkbots.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from inproc import arena_here

from arena.league.config import load_league
from arena.league.register import PLAYING, REFUSED, RETIRED, Register
from arena.league.run import run_league
from arena.league.versions import check_waiting, submit
from arena.league.watch import SETTLE_SECONDS, Watcher
from arena.tournament.results.database import ResultStore

ROOT = Path(__file__).resolve().parent.parent
GAMEBOTS = ROOT / "tests" / "gamebots"
CHECKBOTS = ROOT / "tests" / "checkbots"

LEAGUE = """\
name: test-league
players: 3
rules: {contracts: [2S3]}
sandbox: none
seed: 11
command: python3 bot.py
matchmaking: {placement_matches: 3}
authors:
  - {name: house-greedy, builtin: greedy}
  - {name: house-random, builtin: random}
  - {name: house-passive, builtin: passive}
  - name: alice
  - name: bob
"""


def make_league(where: Path) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    (where / "league.yaml").write_text(LEAGUE)
    return where


def bot_folder(where: Path, bot: Path, helpers: Path) -> Path:
    """A folder as an author hands one in: ``bot.py`` and the kit it imports."""
    where.mkdir(parents=True)
    shutil.copy(bot, where / "bot.py")
    shutil.copy(helpers / "common.py", where / "common.py")
    return where


def stored_rows(league: Path) -> list[tuple]:
    """Every stored match as its rows say it, read as any reader would."""
    conn = sqlite3.connect(f"file:{league / 'results' / 'results.sqlite'}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT m.match_id, m.seed, s.seat, s.bot, s.total, s.place FROM matches m"
                            " JOIN seats s ON s.match_id = m.match_id ORDER BY m.match_id, s.seat").fetchall()
    finally:
        conn.close()


def test_init_writes_a_league_file_that_loads(tmp_path: Path) -> None:
    done = arena_here("league", "init", str(tmp_path / "lg"))
    assert done.returncode == 0, done.stderr
    config = load_league(tmp_path / "lg")
    assert [a.name for a in config.authors] == ["house-greedy", "house-random"]
    assert config.players == 3 and config.matchmaking.placement_matches == 30
    assert config.seed is None and config.key is not None and int(config.key, 16).bit_length() > 200
    again = arena_here("league", "init", str(tmp_path / "lg"))
    assert again.returncode == 1 and "exists already" in again.stderr


@pytest.mark.parametrize("change, where", [
    (("players: 3", "players: 9"), "league.yaml:2: players: expected a number of players per table 2..8, got 9"),
    (("  - name: bob\n", "  - name: bob\n    dir: /tmp\n"), "league.yaml:14: authors[4].dir: unknown key"),
    (("seed: 11\n", ""), "league.yaml:1: key: missing"),
])
def test_a_mistake_in_the_league_file_is_one_line_naming_its_line(tmp_path: Path, change: tuple[str, str],
                                                                   where: str) -> None:
    league = make_league(tmp_path / "lg")
    (league / "league.yaml").write_text(LEAGUE.replace(*change))
    done = arena_here("league", "run", str(league), "--max-matches", "1")
    assert done.returncode == 1
    assert where in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_submit_stores_a_copy_that_later_edits_do_not_change(tmp_path: Path) -> None:
    league = make_league(tmp_path / "lg")
    config = load_league(league)
    folder = bot_folder(tmp_path / "alice", GAMEBOTS / "minimal.py", GAMEBOTS)
    first = submit(config, "alice", folder)
    (folder / "bot.py").write_text("raise SystemExit('edited after it was handed in')\n")
    stored = league / "store" / str(first.digest) / "bot.py"
    assert stored.read_bytes() == (GAMEBOTS / "minimal.py").read_bytes()
    second = submit(config, "alice", folder)
    assert (first.name, second.name) == ("alice.v1", "alice.v2") and first.digest != second.digest
    (tmp_path / "alice" / "link").symlink_to("/etc/passwd")
    refused = arena_here("league", "submit", str(league), "alice", str(folder), "--no-check")
    assert refused.returncode == 1 and "link: a symbolic link" in refused.stderr
    unknown = arena_here("league", "submit", str(league), "carol", str(folder))
    assert unknown.returncode == 1 and "no author 'carol'" in unknown.stderr and "Traceback" not in unknown.stderr


def test_a_broken_version_is_refused_with_its_reasons_and_a_resubmission_retires_the_older(tmp_path: Path) -> None:
    league = make_league(tmp_path / "lg")
    config = load_league(league)
    broken = bot_folder(tmp_path / "bob", CHECKBOTS / "debug_stdout.py", CHECKBOTS)
    done = arena_here("league", "submit", str(league), "bob", str(broken))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "bob.v1 is refused" in done.stderr and "stdout is for protocol lines only" in done.stderr
    good = bot_folder(tmp_path / "alice", GAMEBOTS / "minimal.py", GAMEBOTS)
    submit(config, "alice", good)
    submit(config, "alice", good, command=("python3", "-u", "bot.py"))    # a second version: other command
    with Register(league) as register:
        checked = check_waiting(config, register, "none", echo=lambda line: None)
        assert [v.name for v in checked] == ["alice.v1", "alice.v2"]
        status = {v.name: v.status for v in register.versions()}
    assert status["bob.v1"] == REFUSED and status["alice.v1"] == RETIRED and status["alice.v2"] == PLAYING
    run_league(config, jobs=1, max_matches=9, echo=lambda line: None, idle_exit=True)
    with ResultStore(league / "results" / "results.sqlite", readonly=True) as store:
        seated = Counter(b for m in store.matches() for b in m.bots)
    assert "bob.v1" not in seated and "alice.v1" not in seated
    assert seated["alice.v2"] >= 3           # new versions first: its placement before the rest


def test_a_stopped_run_resumes_its_unfinished_table_and_stores_nothing_twice(tmp_path: Path) -> None:
    league = make_league(tmp_path / "lg")
    config = load_league(league)
    first = run_league(config, jobs=1, max_matches=4, echo=lambda line: None, idle_exit=True)
    assert (first.played, first.tables) == (4, 2)             # one table whole, one begun
    before = stored_rows(league)
    lines: list[str] = []
    second = run_league(config, jobs=1, max_matches=2, echo=lines.append, idle_exit=True)
    assert second.tables == 0 and any(line.startswith("resuming: 2 match") for line in lines)
    after = stored_rows(league)
    assert after[:len(before)] == before or set(before) <= set(after)
    ids = [r[0] for r in after if r[2] == 0]
    assert len(ids) == len(set(ids)) == 6 and {i.split("-")[0] for i in ids} == {"L000000", "L000001"}


def _stored_count(league: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{league / 'results' / 'results.sqlite'}?mode=ro", uri=True)
        try:
            return conn.execute("SELECT count(*) FROM matches").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def test_a_sigkill_loses_only_the_matches_in_progress(tmp_path: Path) -> None:
    league = make_league(tmp_path / "lg")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.Popen([sys.executable, "-m", "arena", "league", "run", str(league), "--jobs", "2"],
                           cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while _stored_count(league) < 7 and time.monotonic() < deadline and run.poll() is None:
            time.sleep(0.05)
        assert run.poll() is None, run.stderr.read().decode() if run.stderr else ""
        os.kill(run.pid, signal.SIGKILL)
        run.wait(30)
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        if run.stderr:
            run.stderr.close()
    before = stored_rows(league)
    killed_at = len({r[0] for r in before})
    assert killed_at >= 7
    again = arena_here("league", "run", str(league), "--jobs", "1", "--max-matches", "6", "--idle-exit", "-q")
    assert again.returncode == 0, again.stderr
    after = stored_rows(league)
    assert set(before) <= set(after)                                    # nothing stored is lost or changed
    ids = [r[0] for r in after if r[2] == 0]
    assert len(ids) == len(set(ids)) == killed_at + 6                   # nor stored twice
    verify = arena_here("verify", str(league / "results"))
    assert verify.returncode == 0, verify.stdout + verify.stderr


# -- the watched submissions folder ------------------------------------------------------

def test_a_folder_dropped_in_submissions_is_handed_in_once_complete(tmp_path: Path) -> None:
    """Complete: unchanged between two looks SETTLE_SECONDS apart (a clock of the test's, not the wall's)."""
    league = make_league(tmp_path / "lg")
    config = load_league(league)
    now = [0.0]
    lines: list[str] = []
    watcher = Watcher(config, lines.append, clock=lambda: now[0])
    folder = league / "submissions" / "alice"
    folder.mkdir(parents=True)
    shutil.copy(GAMEBOTS / "minimal.py", folder / "bot.py")
    with Register(league) as register:
        assert watcher.scan(register) == []                     # first seen
        shutil.copy(GAMEBOTS / "common.py", folder / "common.py")   # the copy goes on
        now[0] = SETTLE_SECONDS + 1
        assert watcher.scan(register) == []                     # changed since: seen anew
        now[0] += SETTLE_SECONDS / 2
        assert watcher.scan(register) == []                     # unchanged, but not for long enough
        now[0] += SETTLE_SECONDS
        [version] = watcher.scan(register)
        assert version.name == "alice.v1" and lines == [f"submissions/alice: handed in as alice.v1 "
                                                        f"({str(version.digest)[:12]})"]
        stored = league / "store" / str(version.digest)
        assert sorted(p.name for p in stored.iterdir()) == ["bot.py", "common.py"]
        now[0] += SETTLE_SECONDS * 2
        assert watcher.scan(register) == []                     # handled: nothing more until it changes


def test_the_watched_folder_never_hands_in_the_same_content_twice(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("arena.league.watch.SETTLE_SECONDS", 0.0)     # complete when unchanged between two looks
    league = make_league(tmp_path / "lg")
    config = load_league(league)
    drop = league / "submissions"
    bot_folder(drop / "alice", GAMEBOTS / "minimal.py", GAMEBOTS)
    bot_folder(drop / "carol", GAMEBOTS / "minimal.py", GAMEBOTS)            # no such author
    bot_folder(drop / ".bob-copying", CHECKBOTS / "debug_stdout.py", CHECKBOTS)   # not yet renamed into place
    lines: list[str] = []
    run_league(config, jobs=1, max_matches=3, echo=lines.append, idle_exit=True)
    with Register(league) as register:
        assert [(v.name, v.status) for v in register.versions() if v.builtin is None] == [("alice.v1", PLAYING)]
    # said once in the run (which looked at the folder before each of its tables), until it changes
    assert sum("submissions/carol: not handed in:" in line and "no author 'carol'" in line for line in lines) == 1
    with ResultStore(league / "results" / "results.sqlite", readonly=True) as store:
        assert all("alice.v1" in m.bots for m in store.matches())        # new versions first
    for path in (drop / "alice").iterdir():         # the same files copied again: new times, same content
        path.write_bytes(path.read_bytes())
    run_league(load_league(league), jobs=1, max_matches=3, echo=lines.append, idle_exit=True)   # a restarted run
    (drop / ".bob-copying").rename(drop / "bob")
    (drop / "alice" / "bot.py").write_bytes((CHECKBOTS / "debug_stdout.py").read_bytes())     # a new version
    run_league(load_league(league), jobs=1, max_matches=3, echo=lines.append, idle_exit=True)
    with Register(league) as register:
        assert [(v.name, v.status) for v in register.versions() if v.builtin is None] == [
            ("alice.v1", PLAYING), ("alice.v2", REFUSED), ("bob.v1", REFUSED)]
