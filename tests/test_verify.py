"""`arena verify RESULTS`: every stored result re-derived from its record.

A tournament is played for real (built-in players, and a bot program that
crashes mid-match so that a seat is forfeited); the untouched results verify,
and each kind of tampering with the database is named, match by match.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from inproc import arena_here

ROOT = Path(__file__).resolve().parent.parent
GAMEBOTS = ROOT / "tests" / "gamebots"
PY = sys.executable


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return arena_here(*args, cwd=cwd)


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The results of a small tournament, one of whose bots crashes at its 15th request."""
    return play(tmp_path_factory.mktemp("verify"))


def play(where: Path) -> Path:
    crasher = json.dumps([PY, str(GAMEBOTS / "exit_midway.py"), "15"])
    (where / "t.yaml").write_text(
        "name: t\nbots:\n  - {name: g, builtin: greedy}\n  - {name: r, builtin: random}\n"
        f"  - {{name: crash, command: {crasher}}}\n"
        "players: 2\nrules: {contracts: [2S3, S3+R4]}\nseed: 7\nout: results\n")
    done = arena("run", "t.yaml", "--jobs", "1", "-q", cwd=where)
    assert done.returncode == 0, done.stderr
    return where / "results"


@pytest.fixture
def results(played: Path, tmp_path: Path) -> Path:
    """A copy of the played results, to tamper with."""
    copy = tmp_path / "results"
    shutil.copytree(played, copy)
    return copy


def sql(results: Path, statement: str, *params: object) -> list[tuple]:
    c = sqlite3.connect(results / "results.sqlite")
    try:
        out = c.execute(statement, params).fetchall()
        c.commit()
        return out
    finally:
        c.close()


def first_match(results: Path) -> str:
    return sql(results, "SELECT match_id FROM matches ORDER BY schedule_index LIMIT 1")[0][0]


def edit_record(results: Path, match_id: str, change) -> None:   # type: ignore[no-untyped-def]
    (blob,) = sql(results, "SELECT record FROM matches WHERE match_id = ?", match_id)[0]
    record = json.loads(zlib.decompress(blob))
    change(record)
    sql(results, "UPDATE matches SET record = ? WHERE match_id = ?", zlib.compress(json.dumps(record).encode()),
        match_id)


def test_untouched_results_verify_forfeits_included(played: Path) -> None:
    assert sql(played, "SELECT count(*) FROM seats WHERE forfeited = 1")[0][0] > 0   # the crasher lost seats
    done = arena("verify", str(played), cwd=played.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == ""
    assert done.stderr.strip() == (f"6 stored matches of {played} replayed: every stored result follows from its "
                                   f"record, and the schedule's 6 matches are all stored")


def test_a_changed_total_is_named_with_what_the_replay_gives(results: Path) -> None:
    match = first_match(results)
    (total,) = sql(results, "SELECT total FROM seats WHERE match_id = ? AND seat = 0", match)[0]
    sql(results, "UPDATE seats SET total = ? WHERE match_id = ? AND seat = 0", total - 5, match)
    done = arena("verify", str(results), cwd=results.parent)
    assert done.returncode == 1
    (line,) = done.stdout.splitlines()
    assert line.startswith(f"match {match}: stored totals [{total - 5}, ") and f"the replay gives [{total}, " in line
    assert done.stderr.strip() == f"1 problem in {results} (6 stored matches replayed)"


def test_an_illegal_recorded_action_is_refused_by_the_rules(results: Path) -> None:
    match = first_match(results)

    def discard_a_card_nobody_holds(record: dict) -> None:      # type: ignore[type-arg]
        k = next(i for i, a in enumerate(record["actions"]) if a["action"]["type"] == "play")
        record["actions"][k]["action"]["discard"] = "JK" if record["actions"][k]["action"]["discard"] != "JK" else "AS"
    edit_record(results, match, discard_a_card_nobody_holds)
    done = arena("verify", str(results), cwd=results.parent)
    assert done.returncode == 1
    assert any(line.startswith(f"match {match}: action ") and "refused by the rules" in line
               for line in done.stdout.splitlines()), done.stdout


def test_another_seed_than_the_deals_came_from_is_named(results: Path) -> None:
    match = first_match(results)
    sql(results, "UPDATE matches SET seed = seed + 1 WHERE match_id = ?", match)
    done = arena("verify", str(results), cwd=results.parent)
    assert done.returncode == 1
    assert f"match {match}: the record is of a match of 2 seats dealt from seed" in done.stdout, done.stdout


def test_a_forfeit_the_record_does_not_have_is_named(results: Path) -> None:
    (match,) = sql(results, "SELECT s.match_id FROM seats s WHERE s.forfeited = 0 AND s.bot = 'g' "
                            "AND NOT EXISTS (SELECT 1 FROM seats o WHERE o.match_id = s.match_id AND o.forfeited = 1) "
                            "LIMIT 1")[0]
    sql(results, "UPDATE seats SET forfeited = 1 WHERE match_id = ? AND bot = 'g'", match)
    done = arena("verify", str(results), cwd=results.parent)
    assert done.returncode == 1
    assert f"match {match}: stored forfeited seats" in done.stdout, done.stdout


def test_a_match_dealt_under_other_rules_than_the_tournaments(results: Path) -> None:
    match = first_match(results)

    def dearer_buys(record: dict) -> None:     # type: ignore[type-arg]
        record["events"][0]["rules"]["buy_penalty"] += 1
    edit_record(results, match, dearer_buys)
    done = arena("verify", str(results), cwd=results.parent)
    assert done.returncode == 1
    lines = [line for line in done.stdout.splitlines() if line.startswith(f"match {match}:")]
    assert lines and "other rules than the tournament's (buy_penalty)" in lines[0], done.stdout


def test_not_a_results_directory_is_one_line(tmp_path: Path) -> None:
    done = arena("verify", str(tmp_path), cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and "Error:" in done.stderr and "Traceback" not in done.stderr


def test_bots_in_other_seats_than_the_schedule_gives_are_named(results: Path) -> None:
    match = first_match(results)
    bots = [b for (b,) in sql(results, "SELECT bot FROM seats WHERE match_id = ? ORDER BY seat", match)]
    for seat, bot in enumerate(reversed(bots)):                  # seat 0's bot to seat 1, and back
        sql(results, "UPDATE seats SET bot = ? WHERE match_id = ? AND seat = ?", f"tmp-{bot}", match, seat)
    for bot in bots:
        sql(results, "UPDATE seats SET bot = ? WHERE match_id = ? AND bot = ?", bot, match, f"tmp-{bot}")
    done = arena("verify", str(results), cwd=results.parent)
    assert done.returncode == 1
    assert (f"match {match}: stored with {bots[1]}, {bots[0]} in its seats; the schedule seats "
            f"{bots[0]}, {bots[1]}") in done.stdout, done.stdout


def test_a_rerun_tournament_verifies_with_its_new_deals(tmp_path: Path) -> None:
    where = play(tmp_path).parent
    done = arena("run", "t.yaml", "--jobs", "1", "-q", "--rerun", "r", cwd=where)
    assert done.returncode == 0, done.stderr
    checked = arena("verify", "results", cwd=where)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_what_verify_prints_from_the_database_is_escaped(results: Path) -> None:
    match = first_match(results)
    sql(results, "UPDATE seats SET bot = ? WHERE match_id = ? AND seat = 0", "evil\x1b[2J", match)
    done = arena("verify", str(results), cwd=results.parent)
    assert done.returncode == 1
    assert "\x1b" not in done.stdout and "evil\\x1b[2J" in done.stdout, done.stdout


def delete_match(results: Path, match_id: str) -> None:
    """Take a match out of the database as a hand would: its seats, hand scores and faults with it."""
    c = sqlite3.connect(results / "results.sqlite")
    try:
        c.execute("PRAGMA foreign_keys = ON")         # the child rows cascade
        c.execute("DELETE FROM matches WHERE match_id = ?", (match_id,))
        c.commit()
    finally:
        c.close()


def test_a_deleted_match_is_named_with_its_seats_and_seed(results: Path) -> None:
    match, seed = sql(results, "SELECT match_id, seed FROM matches ORDER BY schedule_index LIMIT 1 OFFSET 2")[0]
    bots = [b for (b,) in sql(results, "SELECT bot FROM seats WHERE match_id = ? ORDER BY seat", match)]
    delete_match(results, match)
    done = arena("verify", str(results), cwd=results.parent)
    assert done.returncode == 1
    assert done.stdout.splitlines() == [f"match {match}: missing: the schedule gives it (seats {', '.join(bots)}; "
                                        f"seed {seed}) but it is not stored"]
    assert done.stderr.strip() == (f"1 problem in {results} (5 stored matches replayed); 1 of the schedule's 6 "
                                   f"matches is not stored: the tournament is not finished (a run stopped "
                                   f"part-way, or matches were taken out of the database); running it again "
                                   f"plays it")


def test_a_failed_match_is_named_as_failed_not_as_missing(results: Path) -> None:
    match, index = sql(results, "SELECT match_id, schedule_index FROM matches ORDER BY schedule_index LIMIT 1")[0]
    bots = [b for (b,) in sql(results, "SELECT bot FROM seats WHERE match_id = ? ORDER BY seat", match)]
    delete_match(results, match)
    sql(results, "INSERT INTO failed_matches (match_id, schedule_index, bots, reason, log_path, attempts, failed_at)"
                 " VALUES (?, ?, ?, 'ZeroDivisionError: division by zero', NULL, 1, '2024-01-01')",
        match, index, json.dumps(bots))
    done = arena("verify", str(results), cwd=results.parent)
    assert done.returncode == 1
    assert done.stdout.splitlines() == [f"match {match}: failed with an arena error and not stored as a result "
                                        f"(ZeroDivisionError: division by zero); running the tournament again "
                                        f"retries it"]
    assert done.stderr.strip() == (f"1 problem in {results} (5 stored matches replayed); 1 match failed with an "
                                   f"arena error: running it again retries it")


def play_in_rounds(where: Path, extra: str, bots: int = 3) -> Path:
    names = ["greedy", "random", "passive", "greedy", "random"]
    (where / "t.yaml").write_text(
        "name: t\nbots:\n" + "".join(f"  - {{name: b{i}, builtin: {names[i]}}}\n" for i in range(bots)) +
        f"players: 2\nrules: {{contracts: [2S3]}}\nseed: 5\nout: results\n{extra}\n")
    done = arena("run", "t.yaml", "--jobs", "1", "-q", cwd=where)
    assert done.returncode == 0, done.stderr
    return where / "results"


def test_a_match_deleted_from_a_stored_round_is_named(tmp_path: Path) -> None:
    results = play_in_rounds(tmp_path, "settle: {max_matches: 12}")     # two rounds of 3 tables x 2 rotations
    ids = [m for (m,) in sql(results, "SELECT match_id FROM matches ORDER BY schedule_index")]
    assert len(ids) == 12 and ids[6].endswith("-d1")
    fine = arena("verify", str(results), cwd=tmp_path)
    assert fine.returncode == 0, fine.stdout + fine.stderr
    assert fine.stderr.strip().endswith("every match of its 2 rounds is stored")
    seed = sql(results, "SELECT seed FROM matches WHERE match_id = ?", ids[3])[0][0]
    bots = [b for (b,) in sql(results, "SELECT bot FROM seats WHERE match_id = ? ORDER BY seat", ids[3])]
    for match in (ids[3], ids[11]):                # one of the first round, one of the last
        delete_match(results, match)
    done = arena("verify", str(results), cwd=tmp_path)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0] == (f"match {ids[3]}: missing: round 0 gives it (seats {', '.join(bots)}; seed {seed}) "
                        f"but it is not stored")
    assert lines[1].startswith(f"match {ids[11]}: missing: round 1 gives it (seats ") and len(lines) == 2
    assert "2 matches of the rounds it played are not stored" in done.stderr


def test_a_swiss_round_lacking_a_rotation_or_a_table_is_named(tmp_path: Path) -> None:
    results = play_in_rounds(tmp_path, "format: swiss\nsettle: {max_matches: 10}", bots=4)
    ids = [m for (m,) in sql(results, "SELECT match_id FROM matches ORDER BY schedule_index")]
    assert ids[:4] == ["s0000-t00-r0", "s0000-t00-r1", "s0000-t01-r0", "s0000-t01-r1"]
    top = max(int(m[7:9]) for m in ids if m.startswith("s0001-"))     # round 1: decided from round 0's results
    assert top >= 1 and len(ids) == 4 + 2 * (top + 1)
    fine = arena("verify", str(results), cwd=tmp_path)
    assert fine.returncode == 0, fine.stdout + fine.stderr
    last_table = f"s0001-t{top:02d}-r0"
    for match in ("s0000-t01-r1", "s0001-t00-r0", "s0001-t00-r1", "s0001-t01-r1", last_table):
        delete_match(results, match)
    # The run stored each round's decision: every round's tables, seats and seeds are known
    done = arena("verify", str(results), cwd=tmp_path)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == [
        "match s0000-t01-r1", "match s0001-t00-r0", "match s0001-t00-r1", "match s0001-t01-r1", f"match {last_table}"]
    assert all(" gives it (seats " in line and "; seed " in line for line in lines)
    assert "5 matches of the rounds it played are not stored" in done.stderr
    # A database an older arena wrote has no decisions: later rounds are known by their ids only
    sql(results, "DROP TABLE round_decisions")
    delete_match(results, f"s0001-t{top:02d}-r1")          # the whole last table: not seen without the decision
    done = arena("verify", str(results), cwd=tmp_path)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0].startswith("match s0000-t01-r1: missing: round 0 gives it (seats ")      # dealt before any assessment
    assert lines[1:] == [
        f"match s0001-t00-r0: missing: round 1 stores tables up to {top - 1} but not table 0",
        f"match s0001-t00-r1: missing: round 1 stores tables up to {top - 1} but not table 0",
        "match s0001-t01-r1: missing: round 1 stores table 1 in other rotations but not in this one"]
    assert "4 matches of the rounds it played are not stored" in done.stderr


def test_matches_set_aside_by_an_interrupted_rerun_are_named_with_their_new_deals(results: Path) -> None:
    from arena.tournament.results.setaside import set_aside

    before = dict(sql(results, "SELECT s.match_id, m.seed FROM seats s JOIN matches m ON m.match_id = s.match_id "
                               "WHERE s.bot = 'r'"))
    assert [done.matches for done in set_aside(results / "results.sqlite", ["r"], "a test")] == [len(before)]
    done = arena("verify", str(results), cwd=results.parent)         # as if the re-run had been stopped there
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert len(lines) == len(before) and all(
        line.endswith("but it is not stored; --rerun set it aside and no run has played it again yet")
        for line in lines), lines
    for match, seed in before.items():
        (line,) = [x for x in lines if x.startswith(f"match {match}: missing: the schedule gives it (seats ")]
        assert f"; seed {seed})" not in line                            # the re-play is dealt other cards
    assert f"{len(before)} of the schedule's 6 matches are not stored" in done.stderr


def test_tampered_timing_is_named_with_what_the_record_gives(results: Path) -> None:
    match, duration = sql(results, "SELECT match_id, duration_seconds FROM matches ORDER BY schedule_index LIMIT 1")[0]
    (longest,) = sql(results, "SELECT max_seconds FROM seats WHERE match_id = ? AND seat = 1", match)[0]
    sql(results, "UPDATE seats SET max_seconds = ?, off_turn_cpu = 0.25 WHERE match_id = ? AND seat = 1",
        longest + 0.5, match)
    sql(results, "UPDATE matches SET duration_seconds = 0.0 WHERE match_id = ?", match)
    done = arena("verify", str(results), cwd=results.parent)
    assert done.returncode == 1
    (bot,) = sql(results, "SELECT bot FROM seats WHERE match_id = ? AND seat = 1", match)[0]
    lines = done.stdout.splitlines()
    assert lines[:2] == [
        f"match {match}: seat 1 ({bot}): stored longest decision time {longest + 0.5:.6f} s, its record's "
        f"decision times give {longest:.6f} s",
        f"match {match}: seat 1 ({bot}): stored CPU used between its turns 0.250000 s, its record gives none"]
    assert lines[2].startswith(f"match {match}: stored duration 0.000000 s, less than its recorded decisions "
                               f"took together (") and len(lines) == 3
    assert 0 < duration                                            # what was stored did hold


def test_at_most_twenty_absent_matches_are_named_then_a_count() -> None:
    from arena.tournament.results.verify import Verified

    absent = tuple(f"match t{i:03d}-r0-d0: missing: ..." for i in range(25))
    checked = Verified(100, ("database: a problem",), absent, missing=25, scheduled=125)
    lines = checked.lines()
    assert lines[:21] == ["database: a problem", *absent[:20]]
    assert lines[21:] == ["and 5 more matches not stored as results"]
    assert checked.summary("R").startswith("26 problems in R (100 stored matches replayed); 25 of the schedule's "
                                           "125 matches are not stored")


def _counted_pools(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The worker count of every pool started from now on, started however few matches it gets."""
    from concurrent.futures import ProcessPoolExecutor
    from typing import Any

    from arena.tournament.results import parallel

    pools: list[int] = []

    class Counted(ProcessPoolExecutor):
        def __init__(self, workers: int, **kw: Any) -> None:
            pools.append(workers)
            super().__init__(workers, **kw)

    monkeypatch.setattr(parallel, "ProcessPoolExecutor", Counted)
    monkeypatch.setattr(parallel, "MIN_PER_WORKER", 1)
    return pools


def test_verify_on_two_processes_says_what_it_says_on_one(results: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--jobs 2 replays the matches in two worker processes: the same lines, in
    the same order, the same summary and exit status as --jobs 1, untouched
    and with a match missing, a total changed and a record that cannot be read."""
    pools = _counted_pools(monkeypatch)

    def both() -> tuple[tuple[int, str, str], ...]:
        one, two = (arena("verify", str(results), "--jobs", jobs, cwd=results.parent) for jobs in ("1", "2"))
        return tuple((d.returncode, d.stdout, d.stderr) for d in (one, two))

    untouched = both()
    assert untouched[0] == untouched[1] and untouched[0][0] == 0
    ids = [m for (m,) in sql(results, "SELECT match_id FROM matches ORDER BY schedule_index")]
    delete_match(results, ids[1])
    sql(results, "UPDATE seats SET total = total + 3 WHERE match_id = ? AND seat = 1", ids[3])
    sql(results, "UPDATE matches SET record = ? WHERE match_id = ?", b"not zlib", ids[4])
    tampered = both()
    assert tampered[0] == tampered[1]
    code, out, err = tampered[0]
    assert code == 1 and "Traceback" not in err
    lines = out.splitlines()
    assert [line.split(":")[0] for line in lines] == [f"match {ids[3]}", f"match {ids[4]}", f"match {ids[1]}"]
    assert pools == [2, 2]


def test_verify_jobs_must_be_a_positive_number(played: Path) -> None:
    done = arena("verify", str(played), "--jobs", "0", cwd=played.parent)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "Invalid value for '--jobs': 0 is not in the range x>=1." in done.stderr
