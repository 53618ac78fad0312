"""A league's data: ``arena league export`` (a frozen snapshot while a run
writes), and ``arena verify``, ``report`` and ``leaderboard`` on a league's
folder, its stored matches held to its register's tables."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from inproc import arena_here
from test_league import ROOT, make_league

from arena.league.config import load_league
from arena.league.run import run_league
from arena.tournament.results.database import ResultStore
from arena.tournament.standings.leaderboard import leaderboard_rows, league_bootstrap_seed
from arena.tournament.standings.ratings import assess_matches


def _count(db: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            return int(conn.execute("SELECT count(*) FROM matches").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def _play_and_export(league: Path, out: Path) -> None:
    """Export while ``arena league run`` stores matches in another process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.Popen([sys.executable, "-m", "arena", "league", "run", str(league), "--jobs", "2",
                            "--max-matches", "60", "--idle-exit", "-q"],
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while _count(league / "results" / "results.sqlite") < 8 and run.poll() is None \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        assert run.poll() is None, "the run ended before the export; give it more matches"
        done = arena_here("league", "export", str(league), str(out))
        assert done.returncode == 0, done.stderr
        assert run.wait(300) == 0, run.stderr.read().decode() if run.stderr else ""
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        if run.stderr:
            run.stderr.close()


def test_an_export_during_a_run_is_a_whole_snapshot_read_as_a_tournament(tmp_path: Path) -> None:
    league = make_league(tmp_path / "lg")
    out = tmp_path / "published"
    _play_and_export(league, out)
    assert sorted(p.name for p in out.iterdir()) == ["results.sqlite"]     # one file: out of WAL mode
    with ResultStore(out / "results.sqlite", readonly=True) as exported, \
            ResultStore(league / "results" / "results.sqlite", readonly=True) as final:
        snapshot = {m.match_id for m in exported.matches()}
        later = final.matches()
    assert 8 <= len(snapshot) < len(later) == 60 and snapshot <= {m.match_id for m in later}
    # The league's standings at that instant: its matches then, fitted as its page fits them
    # (bootstrapped from a seed of its own, the league's seed being secret).
    then = [m for m in later if m.match_id in snapshot]
    names = sorted({b for m in then for b in m.bots})
    seed = league_bootstrap_seed(load_league(league).seed)
    standings = {r.bot: r for r in leaderboard_rows(then, assess_matches(then, names, 0.95, seed=seed))}
    shown = arena_here("leaderboard", str(out), "--format", "json")
    assert shown.returncode == 0, shown.stderr
    rows = {r["bot"]: r for r in json.loads(shown.stdout)["leaderboard"]}
    assert set(rows) == set(standings)
    for bot, row in rows.items():
        assert (row["rating"], row["low"], row["high"], row["matches"]) == _figures(standings[bot]), bot
    verify = arena_here("verify", str(out))
    assert verify.returncode == 0 and "every stored result follows from its record" in verify.stderr, \
        verify.stdout + verify.stderr
    again = arena_here("league", "export", str(league), str(out))
    assert again.returncode == 1 and again.stderr.strip() == f"Error: {out}: exists already; export into a new folder"


def _figures(row: object) -> tuple[object, ...]:
    """A leaderboard row's figures as ``--format json`` rounds them."""
    def rounded(value: float | None) -> float | None:
        return None if value is None else round(value, 3)
    return (rounded(row.rating), rounded(row.low), rounded(row.high), row.matches)   # type: ignore[attr-defined]


def _played(tmp_path: Path, matches: int = 9) -> Path:
    league = make_league(tmp_path / "lg")
    run_league(load_league(league), jobs=1, max_matches=matches, echo=lambda line: None, idle_exit=True)
    return league


def test_verify_report_and_leaderboard_read_a_league_folder(tmp_path: Path) -> None:
    league = _played(tmp_path, 7)           # two tables whole, one begun
    verify = arena_here("verify", str(league))
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "one of the league's 3 registered table(s); 2 match(es) of its tables not played yet" in verify.stderr
    board = arena_here("leaderboard", str(league))
    assert board.returncode == 0 and "house-greedy.v1" in board.stdout, board.stderr
    report = arena_here("report", str(league), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr
    assert "house-passive.v1" in (tmp_path / "report" / "index.html").read_text()
    assert len(list((tmp_path / "report" / "replays").iterdir())) == 7


def _edit_tables(db: Path, table: str, *more: str) -> None:
    """Table 1 reseated and table 0 deleted in ``table`` of ``db`` (and ``more`` statements run)."""
    conn = sqlite3.connect(db)
    with conn:
        conn.execute(f"UPDATE {table} SET seats = json_array('house-random.v1', 'house-greedy.v1', "
                     "'house-passive.v1') WHERE table_no = 1")
        conn.execute(f"DELETE FROM {table} WHERE table_no = 0")
        for statement in more:
            conn.execute(statement)
    conn.close()


def _verify_names_the_edited_tables(folder: Path) -> list[str]:
    """``arena verify`` on ``folder`` after ``_edit_tables``: exit 1, both edits named; its lines."""
    verify = arena_here("verify", str(folder))
    assert verify.returncode == 1
    lines = verify.stdout.splitlines()
    assert "match L000000-r0: not a match of any table in the league's register" in lines
    assert any(line.startswith("match L000001-r0: stored with ") and "its table seats" in line for line in lines), lines
    return lines


def test_verify_names_a_stored_match_its_register_does_not_give(tmp_path: Path) -> None:
    league = _played(tmp_path, 6)
    _edit_tables(league / "league.sqlite", "tables")
    _verify_names_the_edited_tables(league)


def test_a_folder_that_is_neither_results_nor_a_league_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    fresh = make_league(tmp_path / "fresh")
    for command in ("verify", "report", "leaderboard"):
        neither = arena_here(command, str(tmp_path / "empty"))
        assert neither.returncode == 1 and len(neither.stderr.strip().splitlines()) == 1, neither.stderr
        assert "no such results database" in neither.stderr
        unplayed = arena_here(command, str(fresh))
        assert unplayed.returncode == 1 and len(unplayed.stderr.strip().splitlines()) == 1, unplayed.stderr
        assert "is a league's folder with no match stored yet" in unplayed.stderr
    nothing = arena_here("league", "export", str(fresh), str(tmp_path / "out"))
    assert nothing.returncode == 1 and "no match stored yet, nothing to export" in nothing.stderr
    assert not (tmp_path / "out").exists()


def test_an_export_copies_the_stderr_logs_of_its_matches(tmp_path: Path) -> None:
    league = _played(tmp_path, 3)
    db = league / "results" / "results.sqlite"
    log = league / "results" / "logs" / "L000000-r0-seat0.stderr.log"
    log.write_text("thinking aloud\n")
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE seats SET stderr_log = ? WHERE match_id = 'L000000-r0' AND seat = 0", (str(log),))
    conn.close()
    out = tmp_path / "out"
    assert arena_here("league", "export", str(league), str(out)).returncode == 0
    shutil.rmtree(league)                    # the export stands alone
    with ResultStore(out / "results.sqlite", readonly=True) as exported:
        logs = exported.match("L000000-r0").stderr_logs
    assert logs[0] == str(out.resolve() / "logs" / log.name)
    assert Path(logs[0]).read_text() == "thinking aloud\n"


def test_verify_on_an_export_holds_its_matches_to_the_tables_it_carries(tmp_path: Path) -> None:
    league = _played(tmp_path, 7)           # two tables whole, one begun
    out = tmp_path / "out"
    assert arena_here("league", "export", str(league), str(out)).returncode == 0
    shutil.rmtree(league)                    # the export stands alone: no league file, no register
    verify = arena_here("verify", str(out))
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "one of the exported league's 3 table(s); 2 match(es) of its tables were not stored" in verify.stderr
    # a table edited after the export: its matches no longer follow
    _edit_tables(out / "results.sqlite", "league_tables",
                 "UPDATE matches SET seed = seed + 1 WHERE match_id = 'L000002-r0'")
    lines = _verify_names_the_edited_tables(out)
    assert any(line.startswith("match L000002-r0: stored with seed") for line in lines), lines
