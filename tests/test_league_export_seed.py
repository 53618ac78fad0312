"""``arena league export`` publishes no deal to come: the league's seed, from
which every table's deal follows (``plan.table_seed``), is in no form in the
export, nor is the deal seed of a table it holds no match of; ``arena verify
OUT`` holds each match to the seed its table carries, and names a carried
seed or a deal tampered with."""

from __future__ import annotations

import json
import secrets
import shutil
import sqlite3
import zlib
from pathlib import Path

import pytest
from inproc import arena_here
from test_league import LEAGUE

from arena.league.config import load_league
from arena.league.run import run_league
from arena.tournament.pairing.schedule import derive_seed

# Large and of no pattern, so that a hit in the export's bytes is this seed.
SEED = 7_316_502_941_878_065_123


def table_seed(league_seed: int, table_no: int) -> int:
    """Table ``table_no``'s deal seed, as the league deals it (written apart from ``plan``)."""
    return derive_seed(league_seed, "league", table_no)


def _forms(value: int) -> list[bytes]:
    """Every form a 63-bit number could be searched for in: decimal, hex, the 8 bytes either way round."""
    return [str(value).encode(), f"{value:x}".encode(), f"{value:X}".encode(),
            value.to_bytes(8, "big"), value.to_bytes(8, "little")]


def _everything(out: Path) -> list[tuple[str, bytes]]:
    """Every file of ``out``, and every match's record decompressed."""
    found = [(str(p), p.read_bytes()) for p in out.rglob("*") if p.is_file()]
    conn = sqlite3.connect(f"file:{out / 'results.sqlite'}?mode=ro", uri=True)
    try:
        found += [(mid, zlib.decompress(blob)) for mid, blob in
                  conn.execute("SELECT match_id, record FROM matches WHERE record IS NOT NULL")]
    finally:
        conn.close()
    return found


def _league(tmp_path: Path, seed: int = SEED) -> Path:
    """A league of 7 matches (two tables whole, one begun) dealt from ``seed``."""
    league = tmp_path / "lg"
    league.mkdir()
    (league / "league.yaml").write_text(LEAGUE.replace("seed: 11", f"seed: {seed}"))
    run_league(load_league(league), jobs=1, max_matches=7, echo=lambda line: None, idle_exit=True)
    log = league / "results" / "logs" / "L000000-r0-seat0.stderr.log"      # a log, exported too
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("thinking aloud\n")
    conn = sqlite3.connect(league / "results" / "results.sqlite")
    with conn:
        conn.execute("UPDATE seats SET stderr_log = ? WHERE match_id = 'L000000-r0' AND seat = 0", (str(log),))
    conn.close()
    return league


def _export(league: Path, out: Path) -> str:
    done = arena_here("league", "export", str(league), str(out))
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_an_export_holds_neither_the_league_seed_nor_a_deal_not_played(tmp_path: Path) -> None:
    league = _league(tmp_path)
    conn = sqlite3.connect(league / "results" / "results.sqlite")
    with conn:                # table 2 registered, its match not stored: as a run stopped between tables
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("DELETE FROM matches WHERE match_id = 'L000002-r0'")
    conn.close()
    out = tmp_path / "out"
    assert "Warning" not in _export(league, out)
    report = arena_here("report", str(out))           # published with it: out/report, every replay
    assert report.returncode == 0, report.stderr
    files = _everything(out)
    assert any(b"thinking aloud" in data for _, data in files)         # what is searched includes the log
    assert any(where.endswith(".html") and b"L000001-r2" in data for where, data in files)
    secret = {"the league's seed": SEED, **{f"table {n}'s deal": table_seed(SEED, n) for n in (2, 3, 4)}}
    for what, value in secret.items():
        hits = [where for where, data in files for form in _forms(value) if form in data]
        assert not hits, f"{what} is in {hits}"
    # The tables played carry their deals' seeds, which their matches show anyway.
    conn = sqlite3.connect(out / "results.sqlite")
    try:
        carried = dict(conn.execute("SELECT table_no, seed FROM league_tables").fetchall())
        (described, stored_seed) = conn.execute("SELECT config, seed FROM tournament").fetchone()
    finally:
        conn.close()
    assert carried == {0: table_seed(SEED, 0), 1: table_seed(SEED, 1), 2: None}
    assert stored_seed is None and "seed" not in json.loads(described)
    verify = arena_here("verify", str(out))
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_the_export_shows_the_standings_the_league_shows(tmp_path: Path) -> None:
    league = _league(tmp_path)
    out = tmp_path / "out"
    _export(league, out)
    boards = [arena_here("leaderboard", str(where), "--format", "json") for where in (league, out)]
    assert all(b.returncode == 0 for b in boards), [b.stderr for b in boards]
    assert json.loads(boards[0].stdout)["leaderboard"] == json.loads(boards[1].stdout)["leaderboard"]


def _tamper(out: Path, *statements: str) -> list[str]:
    conn = sqlite3.connect(out / "results.sqlite")
    with conn:
        for statement in statements:
            conn.execute(statement)
    conn.close()
    verify = arena_here("verify", str(out))
    assert verify.returncode == 1, verify.stdout + verify.stderr
    assert "Traceback" not in verify.stderr
    return verify.stdout.splitlines()


def test_verify_on_an_export_names_a_carried_seed_or_deal_tampered_with(tmp_path: Path) -> None:
    league = _league(tmp_path)
    clean = tmp_path / "clean"
    _export(league, clean)
    shutil.rmtree(league)                    # the export stands alone
    verify = arena_here("verify", str(clean))
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "every stored match is one of the exported league's 3 table(s)" in verify.stderr

    out = tmp_path / "seed"
    shutil.copytree(clean, out)
    lines = _tamper(out, "UPDATE league_tables SET seed = seed + 1 WHERE table_no = 1")
    seed = table_seed(SEED, 1)
    assert [line for line in lines if line.startswith("match L000001")] == [
        f"match L000001-r{r}: stored with seed {seed}; its table deals seed {seed + 1}" for r in range(3)]
    assert len(lines) == 3, lines

    out = tmp_path / "none"
    shutil.copytree(clean, out)
    lines = _tamper(out, "UPDATE league_tables SET seed = NULL WHERE table_no = 2")
    assert lines == [f"match L000002-r0: stored with seed {table_seed(SEED, 2)}; its table carries no seed"]

    # A table's deal changed whole, its carried seed and its matches' alike: the records were not dealt so.
    out = tmp_path / "deal"
    shutil.copytree(clean, out)
    lines = _tamper(out, "UPDATE league_tables SET seed = 12345 WHERE table_no = 0",
                    "UPDATE matches SET seed = 12345 WHERE table_no = 0")
    assert {line.split(":")[0] for line in lines} == {f"match L000000-r{r}" for r in range(3)}, lines


def test_an_export_made_before_exports_carried_seeds_is_held_to_the_league_seed_it_holds(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _export(_league(tmp_path), out)
    conn = sqlite3.connect(out / "results.sqlite")
    with conn:                               # as an older arena wrote it
        conn.execute("ALTER TABLE league_tables DROP COLUMN seed")
        conn.execute("UPDATE tournament SET seed = ?", (SEED,))
    conn.close()
    verify = arena_here("verify", str(out))
    assert verify.returncode == 0, verify.stdout + verify.stderr
    lines = _tamper(out, "UPDATE matches SET seed = seed + 1 WHERE match_id = 'L000001-r2'")
    assert f"match L000001-r2: stored with seed {table_seed(SEED, 1) + 1}; its table deals seed " \
        f"{table_seed(SEED, 1)}" in lines, lines


def test_an_export_of_a_league_with_a_guessable_seed_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Seed 2^48 - 1 (all an older init drew) is found from table 0's deal seed by trying every seed.
    said = _export(_league(tmp_path, 2 ** 48 - 1), tmp_path / "out")
    league_file = tmp_path / "lg" / "league.yaml"
    assert [line for line in said.splitlines() if line.startswith("Warning")] == [
        f"Warning: {league_file}: seed: it is small (under 2^49), so anyone with this export can find it by "
        "trying every seed, and with it the deals of the tables to come; publish the export when the league "
        "ends, or start a public league with the key arena league init draws"]
    monkeypatch.setattr(secrets, "token_hex", lambda n: "f" * 2 * n)          # init's key, all ones
    init = arena_here("league", "init", str(tmp_path / "fresh"))
    assert init.returncode == 0, init.stderr
    assert load_league(tmp_path / "fresh").key == "f" * 64                    # 256 bits (tests/test_league_key.py)
