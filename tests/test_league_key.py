"""A league's deals derive from its key (``key:``, 128-256 bits, which ``arena
league init`` draws), each table's seed a SHA-256 of it and the table's
number; a league file of an older arena, with a 63-bit ``seed:``, deals
exactly as it did.  The key is in no form in the league's results nor in
its export, and the page's intervals are the export's."""

from __future__ import annotations

import hashlib
import sqlite3
import zlib
from pathlib import Path

import pytest
from inproc import arena_here
from test_league import LEAGUE

from arena.league.config import load_league
from arena.league.register import Register
from arena.league.run import run_league
from arena.league.standings import board
from arena.tournament.results.database import ResultStore
from arena.tournament.standings.leaderboard import leaderboard

KEY = "9f4c2a7be1d05386c4f1a2b3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f607"


def deal_seed(secret: str, table_no: int) -> int:
    """Table ``table_no``'s deal seed, written apart from ``plan``: 63 bits of a SHA-256."""
    text = f"arena-schedule:{secret}:league:{table_no}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def _league(tmp_path: Path, secret_line: str, matches: int = 6) -> Path:
    league = tmp_path / "lg"
    league.mkdir()
    (league / "league.yaml").write_text(LEAGUE.replace("seed: 11\n", secret_line))
    run_league(load_league(league), jobs=1, max_matches=matches, echo=lambda line: None, idle_exit=True)
    return league


def _stored_seeds(league: Path) -> dict[str, int]:
    conn = sqlite3.connect(league / "results" / "results.sqlite")
    try:
        return dict(conn.execute("SELECT match_id, seed FROM matches"))
    finally:
        conn.close()


def test_init_draws_a_key_of_256_bits_and_no_seed(tmp_path: Path) -> None:
    keys = []
    for name in ("a", "b"):
        done = arena_here("league", "init", str(tmp_path / name))
        assert done.returncode == 0, done.stderr
        text = (tmp_path / name / "league.yaml").read_text()
        assert "\nseed:" not in text
        keys.append(load_league(tmp_path / name).key)
    assert all(k is not None and len(k) == 64 for k in keys) and keys[0] != keys[1]


def test_a_key_deals_each_table_from_its_sha256(tmp_path: Path) -> None:
    league = _league(tmp_path, f"key: {KEY}\n")
    seeds = _stored_seeds(league)
    assert len(seeds) == 6
    assert seeds == {mid: deal_seed(f"key:{KEY}", int(mid[1:7])) for mid in seeds}


def test_an_older_file_with_a_seed_deals_as_it_did(tmp_path: Path) -> None:
    league = _league(tmp_path, "seed: 11\n")
    seeds = _stored_seeds(league)
    assert seeds == {mid: deal_seed("11", int(mid[1:7])) for mid in seeds}
    with ResultStore(league / "results" / "results.sqlite", readonly=True) as store:
        stored = store.tournament()
    assert stored is not None and stored["seed"] == 11 and "bootstrap_seed" not in stored["config"]


def test_a_key_is_in_neither_the_results_nor_the_export_and_the_intervals_agree(tmp_path: Path) -> None:
    league = _league(tmp_path, f"key: {KEY.upper()}\n", matches=15)     # either case: one key
    assert load_league(league).key == KEY
    out = tmp_path / "out"
    done = arena_here("league", "export", str(league), str(out))
    assert done.returncode == 0 and "Warning" not in done.stderr, done.stderr
    found = [p.read_bytes() for where in (league / "results", out) for p in where.rglob("*") if p.is_file()]
    for db in (league / "results" / "results.sqlite", out / "results.sqlite"):
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        found += [zlib.decompress(b) for (b,) in conn.execute("SELECT record FROM matches WHERE record IS NOT NULL")]
        conn.close()
    assert len(found) > 15
    for data in found:
        for form in (KEY.encode(), KEY.upper().encode(), bytes.fromhex(KEY)):
            assert form not in data
    config = load_league(league)
    with ResultStore(league / "results" / "results.sqlite", readonly=True) as store, \
            Register(league, readonly=True) as register:
        shown = {r["version"]: (r["low"], r["high"]) for r in board(config, store, register).leaderboard}
    with ResultStore(out / "results.sqlite", readonly=True) as store:
        exported = {r.bot: (r.low, r.high) for r in leaderboard(store)}
    assert shown and all(shown[v] == exported[v] for v in shown)
    assert arena_here("verify", str(league)).returncode == 0


@pytest.mark.parametrize("line, said", [
    ("key: 0123abcd\n", "league.yaml:5: key: expected 32 to 64 hex digits"),
    (f"key: {KEY}00\n", "league.yaml:5: key: expected 32 to 64 hex digits"),
    (f"key: {KEY[:-1]}g\n", "league.yaml:5: key: expected 32 to 64 hex digits"),
    (f"key: {KEY}\nseed: 11\n", "league.yaml:6: seed: give 'key' or 'seed', not both"),
])
def test_a_key_that_is_not_one_is_one_line(tmp_path: Path, line: str, said: str) -> None:
    league = tmp_path / "lg"
    league.mkdir()
    (league / "league.yaml").write_text(LEAGUE.replace("seed: 11\n", line))
    done = arena_here("league", "run", str(league), "--max-matches", "1")
    assert done.returncode == 1 and said in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_a_key_of_digits_alone_is_read_as_text(tmp_path: Path) -> None:
    digits = "1234567890" * 4                      # YAML would read it as a number
    league = tmp_path / "lg"
    league.mkdir()
    (league / "league.yaml").write_text(LEAGUE.replace("seed: 11\n", f"key: {digits}\n"))
    assert load_league(league).key == digits
