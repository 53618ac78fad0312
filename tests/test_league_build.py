"""A league's per-version ``build:`` step: run in the sandbox the version's
matches have (bubblewrap where it works), in a writable copy of its folder,
with its own limits; what it leaves is played; a build that fails or runs
over its time refuses the version with the last lines it printed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from inproc import arena_here

from arena.league.config import load_league
from arena.league.register import PLAYING, REFUSED, Register
from arena.league.run import run_league
from arena.league.standings import board
from arena.league.versions import check_waiting, submit
from arena.process.confine import sandbox
from arena.tournament.results.database import ResultStore

ROOT = Path(__file__).resolve().parent.parent
GAMEBOTS = ROOT / "tests" / "gamebots"

LEAGUE = """\
name: build-league
players: 3
rules: {{contracts: [2S3]}}
sandbox: auto
seed: 3
command: python3 bot.py
matchmaking: {{placement_matches: 3}}
build:
  command: {build}
  seconds: 300
authors:
  - {{name: house-greedy, builtin: greedy}}
  - {{name: house-random, builtin: random}}
  - name: alice
  - name: bob
    build: {{command: "echo compiling bob; sleep 30; echo never", seconds: 1}}
"""
# The league's build: the bot is made from its source, and (in the sandbox) the league's file is hidden.
BUILD = ("'cp bot.src bot.py && cp common.src common.py && echo built >> made.txt"
         " && if [ -n \"$HIDDEN\" ]; then test ! -s \"$HIDDEN\"; fi'")


def quiet(line: str) -> None:
    pass


@pytest.fixture()
def mode() -> str:
    return sandbox.resolve("auto").mode


def league_with(where: Path, build: str, mode: str) -> Path:
    where.mkdir(parents=True)
    text = LEAGUE.format(build=build)
    if mode == sandbox.BWRAP:     # the league's file is hidden from a build as from a bot (an empty file shows)
        text = text.replace("  - name: alice\n", f"  - name: alice\n    env: {{HIDDEN: {where / 'league.yaml'}}}\n")
    (where / "league.yaml").write_text(text)
    return where


def source_folder(where: Path) -> Path:
    """A version whose bot is made by the build: only its sources are handed in."""
    where.mkdir(parents=True)
    shutil.copy(GAMEBOTS / "minimal.py", where / "bot.src")
    shutil.copy(GAMEBOTS / "common.py", where / "common.src")
    return where


def test_a_build_that_succeeds_makes_the_bot_that_is_played(tmp_path: Path, mode: str) -> None:
    league = league_with(tmp_path / "lg", BUILD, mode)
    config = load_league(league)
    version = submit(config, "alice", source_folder(tmp_path / "alice"))
    with Register(league) as register:
        [checked] = check_waiting(config, register, mode, echo=quiet)
    assert checked.status == PLAYING, checked.reasons
    assert checked.built is not None and checked.built != version.digest
    built = league / "store" / checked.built
    assert sorted(p.name for p in built.iterdir()) == ["bot.py", "bot.src", "common.py", "common.src", "made.txt"]
    assert (built / "bot.py").read_bytes() == (GAMEBOTS / "minimal.py").read_bytes()
    assert not (league / "store" / str(version.digest) / "bot.py").exists()     # what was handed in stays so
    assert not [p for p in (league / "store").iterdir() if p.name.startswith(".")]
    run_league(config, jobs=1, max_matches=3, echo=quiet, idle_exit=True)
    with ResultStore(league / "results" / "results.sqlite", readonly=True) as store:
        assert all("alice.v1" in m.bots and not m.faults for m in store.matches()) and len(store) == 3


def test_a_build_that_fails_refuses_the_version_with_its_last_lines(tmp_path: Path, mode: str) -> None:
    league = league_with(tmp_path / "lg", "'echo compiling; echo \"error: no bot.c\" >&2; exit 2'", mode)
    config = load_league(league)
    submit(config, "alice", source_folder(tmp_path / "alice"))
    done = arena_here("league", "run", str(league), "--max-matches", "1", "--idle-exit")
    assert done.returncode == 0, done.stderr
    assert "alice.v1 refused: build: echo compiling;" in done.stderr and "Traceback" not in done.stderr
    with Register(league) as register:
        version = register.version("alice.v1")
    assert version.status == REFUSED and version.built is None
    assert version.reasons[0].startswith("build: echo compiling") and "2" in version.reasons[0]
    assert version.reasons[1:] == ("build output: compiling", "build output: error: no bot.c")
    status = arena_here("league", "status", str(league))
    assert "build output: error: no bot.c" in status.stderr
    # the public page says why, but not what the build printed (a compiler's errors quote the source)
    with Register(league) as register:
        [author] = [a for a in board(config, None, register).authors if a["author"] == "alice"]
    assert author["versions"][0]["reasons"] == [version.reasons[0]]


def test_a_build_over_its_time_is_stopped_and_refuses_the_version(tmp_path: Path, mode: str) -> None:
    league = league_with(tmp_path / "lg", BUILD, mode)
    config = load_league(league)
    submit(config, "bob", source_folder(tmp_path / "bob"))
    with Register(league) as register:
        [checked] = check_waiting(config, register, mode, echo=quiet)
    assert checked.status == REFUSED
    assert checked.reasons[0] == "build: ran over its 1 s and was stopped: echo compiling bob; sleep 30; echo never"
    # what it printed by then (on a loaded machine, perhaps not yet its first line): never its last
    assert checked.reasons[1:] in ((), ("build output: compiling bob",))
    assert not [p for p in (league / "store").iterdir() if p.name.startswith(".")]


def test_a_build_step_in_the_league_file_is_checked(tmp_path: Path) -> None:
    league = league_with(tmp_path / "lg", "''", sandbox.NONE)
    done = arena_here("league", "status", str(league))
    assert done.returncode == 1 and "build.command: expected a shell command, got an empty string" in done.stderr
    (league / "league.yaml").write_text(LEAGUE.format(build="make").replace(
        "  - {name: house-random, builtin: random}", "  - {name: house-random, builtin: random, build: make}"))
    done = arena_here("league", "status", str(league))
    assert done.returncode == 1 and "authors[1].build: not used with 'builtin'" in done.stderr


def test_a_register_from_before_builds_is_read_and_then_given_the_column(tmp_path: Path) -> None:
    import sqlite3

    conn = sqlite3.connect(tmp_path / "league.sqlite")
    conn.executescript("""
        CREATE TABLE versions (name TEXT PRIMARY KEY, author TEXT NOT NULL, number INTEGER NOT NULL, digest TEXT,
            builtin TEXT, command TEXT, status TEXT NOT NULL, reasons TEXT NOT NULL DEFAULT '[]',
            submitted_at TEXT NOT NULL, checked_at TEXT, retired_at TEXT, UNIQUE (author, number));
        INSERT INTO versions VALUES ('alice.v1', 'alice', 1, 'ab', NULL, '["python3", "bot.py"]', 'playing', '[]',
                                     '2026-01-01T00:00:00', NULL, NULL);
    """)
    conn.commit()
    conn.close()
    with Register(tmp_path, readonly=True) as page:        # the page, before any writer opened it
        [old] = page.versions()
    assert (old.name, old.built, old.played) == ("alice.v1", None, "ab")
    with Register(tmp_path) as register:
        register.set_built("alice.v1", "cd")
        assert register.version("alice.v1").played == "cd"
