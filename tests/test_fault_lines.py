"""Faults an organiser can act on, end to end through ``arena run``, ``arena
show`` and ``arena report``: the line a bot actually wrote is stored with its
fault (escaped and bounded, never the raw bytes) and shown; fault texts name
the request id the bot saw; and what a bot writes (its replies, its stderr)
never reaches the terminal as control characters, not even in ``-vv``'s
protocol log.  A results database of the previous schema (made here from its
DDL) still resumes, shows and reports.

The tournament: ``escapes.py`` (a stray line after its first reply, a
malformed reply full of control characters at its second, stderr and a crash
at its third), a minimal bot and a built-in player, 3 short matches.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from inproc import arena_here

from arena.report.html import replay_data
from arena.tournament.results.database import SCHEMA_VERSION, ResultStore

ROOT = Path(__file__).resolve().parent.parent
GAMEBOTS = ROOT / "tests" / "gamebots"
CONTROL = ("\x1b", "\r", "\u202e")
MALFORMED_LINE = "\\x1b[8m\\r\\u202e not json"
LAST_WORDS = "last words \\x1b[8m\\u202e"
HANG = 300      # only there to turn a hang into a failure


def tournament_file(tmp: Path) -> Path:
    path = tmp / "t.yaml"
    path.write_text(f"""
name: faulty
bots:
  - name: escapes
    command: [{json.dumps(sys.executable)}, {json.dumps(str(GAMEBOTS / "escapes.py"))}]
  - name: minimal
    command: [{json.dumps(sys.executable)}, {json.dumps(str(GAMEBOTS / "minimal.py"))}]
  - name: greedy
    builtin: greedy
players: 3
rules:
  contracts: [2S3, S3+R4]
  turn_cap_per_player: 15
time: {{startup: 20, per_move: 5}}
sandbox: none
seed: 7
""")
    return path


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    res = arena_here(*args, cwd=ROOT)
    assert "Traceback" not in res.stdout + res.stderr, res.stderr
    return res


def assert_no_control(text: str) -> None:
    found = [c for c in CONTROL if c in text]
    assert not found, f"raw control characters {found!r} reached the terminal"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    tmp = tmp_path_factory.mktemp("faults")
    t = tournament_file(tmp)
    res = arena("run", str(t), "--out", str(tmp / "results"), "--jobs", "1", "-vv")
    assert res.returncode == 0, res.stderr
    return t, tmp / "results", res


def _faults(results: Path) -> list[dict[str, Any]]:
    with ResultStore(results / "results.sqlite", create=False) as store:
        return store.faults()


def _trace_id(results: Path, match_id: str, seat: int, decision: int) -> int:
    with ResultStore(results / "results.sqlite", create=False) as store:
        record = store.record(match_id)
    return next(d[1] for d in record["trace"][seat]["decisions"] if d[0] == decision)


def test_a_refused_reply_is_stored_with_the_line_the_bot_wrote_escaped(run) -> None:
    _, results, _ = run
    faults = _faults(results)
    malformed = [f for f in faults if f["kind"] == "malformed"]
    assert len(malformed) == 3                                        # one a match
    for f in malformed:
        assert f["excerpt"] == MALFORMED_LINE
        assert f["request_id"] == _trace_id(results, f["match_id"], f["seat"], f["decision"])
    crashes = [f for f in faults if f["kind"] == "crash"]
    assert crashes and all(f["excerpt"] is None for f in crashes)      # no line to quote
    with sqlite3.connect(results / "results.sqlite") as c:
        assert c.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_show_quotes_the_line_and_names_the_request_id(run) -> None:
    _, results, _ = run
    f = next(f for f in _faults(results) if f["kind"] == "malformed")
    res = arena("show", str(results), f["match_id"])
    assert res.returncode == 0, res.stderr
    assert_no_control(res.stdout + res.stderr)
    line = next(x for x in res.stdout.splitlines() if "malformed" in x and "seat" in x)
    assert f"request id {f['request_id']} (" in line and f"--decision {f['decision']}" in line
    assert f"    line: {MALFORMED_LINE}" in res.stdout
    shown = json.loads(arena("show", str(results), f["match_id"], "--json").stdout)
    assert any(g["excerpt"] == MALFORMED_LINE and g["request_id"] == f["request_id"] for g in shown["faults"])
    res = arena("show", str(results), f["match_id"], "--decision", str(f["decision"]))
    assert f"request id {f['request_id']}" in res.stdout.splitlines()[0]


def test_show_one_decision_escapes_the_stderr_the_bot_wrote(run) -> None:
    _, results, _ = run
    f = next(f for f in _faults(results) if f["kind"] == "crash")
    res = arena("show", str(results), f["match_id"], "--decision", str(f["decision"]))
    assert res.returncode == 0, res.stderr
    assert_no_control(res.stdout)
    assert f"    {LAST_WORDS}" in res.stdout.splitlines()
    assert f"request id {f['request_id']}" in res.stdout
    # and in the match's account, under the crash
    res = arena("show", str(results), f["match_id"])
    assert_no_control(res.stdout)
    assert f"      {LAST_WORDS}" in res.stdout.splitlines()


def test_the_protocol_log_of_vv_is_escaped(run) -> None:
    _, _, res = run
    assert "<< " in res.stderr and ">> " in res.stderr                 # -vv logged the protocol
    assert_no_control(res.stderr + res.stdout)
    assert MALFORMED_LINE in res.stderr


def test_the_report_shows_the_refused_line_and_the_request_id(run) -> None:
    _, results, _ = run
    res = arena("report", str(results), "--no-replays", "--bot", "escapes")     # no charts: quicker
    assert res.returncode == 0, res.stderr
    page = (results / "report" / "bot-escapes.html").read_text()
    section = page.split('id="bot-escapes"')[1].split("</section>")[0]
    assert MALFORMED_LINE in section
    for f in _faults(results):
        if f["kind"] == "malformed":
            assert f"request id {f['request_id']} (" in section
    assert_no_control(page)


def test_the_replay_viewer_has_the_stderr_escaped(run, tmp_path: Path) -> None:
    _, results, _ = run
    f = next(f for f in _faults(results) if f["kind"] == "crash")
    out = tmp_path / "crash.html"
    assert arena("show", str(results), f["match_id"], "--html", "--out", str(out)).returncode == 0
    (shown,) = [g for g in replay_data(out.read_text())["faults"] if g["kind"] == "crash"]
    assert shown["stderr"] == LAST_WORDS + "\n" and shown["request_id"] == f["request_id"]


# The seats table of schemas 2 and 3, as they shipped (schema 4 added off_turn_cpu).
SEATS_2 = """
CREATE TABLE seats (
    match_id TEXT NOT NULL REFERENCES matches(match_id) ON DELETE CASCADE,
    seat INTEGER NOT NULL CHECK (typeof(seat) = 'integer' AND seat >= 0),
    bot TEXT NOT NULL REFERENCES bots(name),
    total INTEGER NOT NULL CHECK (typeof(total) = 'integer'),
    place INTEGER NOT NULL CHECK (typeof(place) = 'integer' AND place >= 1),
    forfeited INTEGER NOT NULL CHECK (forfeited IN (0, 1)),
    decisions INTEGER NOT NULL CHECK (typeof(decisions) = 'integer'),
    mean_seconds REAL, p95_seconds REAL, max_seconds REAL,
    timeouts INTEGER NOT NULL CHECK (typeof(timeouts) = 'integer'),
    stderr_log TEXT, PRIMARY KEY (match_id, seat), UNIQUE (match_id, bot));
CREATE INDEX seats_by_bot ON seats(bot);
"""
# The schema of the previous version (2), as it shipped: no excerpt, no request id.
SCHEMA_2 = f"""
CREATE TABLE tournament (id INTEGER PRIMARY KEY CHECK (id = 1), name TEXT NOT NULL, config TEXT NOT NULL,
    seed INTEGER, created TEXT NOT NULL);
CREATE TABLE bots (name TEXT PRIMARY KEY);
CREATE TABLE matches (
    match_id TEXT PRIMARY KEY,
    schedule_index INTEGER NOT NULL UNIQUE CHECK (typeof(schedule_index) = 'integer'),
    table_no INTEGER NOT NULL CHECK (typeof(table_no) = 'integer'),
    rotation INTEGER NOT NULL CHECK (typeof(rotation) = 'integer'),
    deal INTEGER NOT NULL CHECK (typeof(deal) = 'integer'),
    seed INTEGER NOT NULL CHECK (typeof(seed) = 'integer'),
    players INTEGER NOT NULL, hands INTEGER NOT NULL, fault_count INTEGER NOT NULL,
    duration_seconds REAL NOT NULL, started_at TEXT NOT NULL, stored_at TEXT NOT NULL,
    record BLOB, record_path TEXT);
{SEATS_2}CREATE TABLE hand_scores (
    match_id TEXT NOT NULL, hand INTEGER NOT NULL CHECK (hand >= 1), seat INTEGER NOT NULL,
    score INTEGER NOT NULL CHECK (typeof(score) = 'integer'), won INTEGER NOT NULL CHECK (won IN (0, 1)),
    PRIMARY KEY (match_id, hand, seat),
    FOREIGN KEY (match_id, seat) REFERENCES seats(match_id, seat) ON DELETE CASCADE);
CREATE TABLE faults (
    id INTEGER PRIMARY KEY, match_id TEXT NOT NULL, seat INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('timeout', 'crash', 'malformed', 'wrong_id', 'illegal')),
    hand INTEGER, decision INTEGER, decision_kind TEXT, detail TEXT,
    FOREIGN KEY (match_id, seat) REFERENCES seats(match_id, seat) ON DELETE CASCADE);
CREATE INDEX faults_by_match ON faults(match_id);
CREATE TABLE failed_matches (
    match_id TEXT PRIMARY KEY,
    schedule_index INTEGER NOT NULL CHECK (typeof(schedule_index) = 'integer'),
    bots TEXT NOT NULL, reason TEXT NOT NULL, log_path TEXT,
    attempts INTEGER NOT NULL CHECK (attempts >= 1), failed_at TEXT NOT NULL);
PRAGMA user_version = 2;
"""

OLD_COLUMNS = {
    "tournament": "id, name, config, seed, created", "bots": "name",
    "matches": "match_id, schedule_index, table_no, rotation, deal, seed, players, hands, fault_count,"
               " duration_seconds, started_at, stored_at, record, record_path",
    "seats": "match_id, seat, bot, total, place, forfeited, decisions, mean_seconds, p95_seconds, max_seconds,"
             " timeouts, stderr_log",
    "hand_scores": "match_id, hand, seat, score, won",
    "faults": "id, match_id, seat, kind, hand, decision, decision_kind, detail",
}


def test_a_database_of_the_previous_schema_shows_reports_and_resumes(run, tmp_path: Path) -> None:
    """The old file holds the first match, as the previous version stored it:
    shown and reported as it is (no line to quote), then resumed: the matches
    played now keep their lines, the old one stays as it was."""
    t, results, _ = run
    old = tmp_path / "old"
    old.mkdir()
    db = old / "results.sqlite"
    c = sqlite3.connect(db)
    c.executescript(SCHEMA_2)
    c.execute("ATTACH DATABASE ? AS new", (str(results / "results.sqlite"),))
    first = c.execute("SELECT match_id FROM new.matches ORDER BY schedule_index LIMIT 1").fetchone()[0]
    for table, cols in OLD_COLUMNS.items():
        where = "" if table in ("tournament", "bots") else " WHERE match_id = ?"
        c.execute(f"INSERT INTO {table} ({cols}) SELECT {cols} FROM new.{table}{where}",
                  () if not where else (first,))
    c.commit()
    c.execute("DETACH DATABASE new")
    c.close()

    res = arena("show", str(old), first)
    assert res.returncode == 0, res.stderr
    assert re.search(r"seat \d \(escapes\): malformed in hand \d+, request id \d+", res.stdout)  # from the trace
    res = arena("report", str(old), "--no-replays", "--bot", "escapes")
    assert res.returncode == 0, res.stderr

    res = arena("run", str(t), "--out", str(old), "--jobs", "1")
    assert res.returncode == 0, res.stderr
    with ResultStore(db, create=False) as store:
        faults = store.faults()
        assert len(store.matches()) == 3 and store.verify() == []
    malformed = [f for f in faults if f["kind"] == "malformed"]
    assert [f["excerpt"] for f in malformed if f["match_id"] == first] == [None]
    assert [f["excerpt"] for f in malformed if f["match_id"] != first] == [MALFORMED_LINE] * 2
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
