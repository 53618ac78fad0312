"""``arena league run --executor ray``: a league played on a real Ray of its
own, inside a private network namespace (tests/netns.py, as tests/test_ray.py):
a version handed in as a program plays there from the league's store (the
same path on the node: ``files: shared``), its matches stored as the local
executor's are, and the run ends by its ``--max-matches``, leaving no Ray."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from test_league import GAMEBOTS, bot_folder, make_league
from test_ray import assert_no_ray_left, in_netns, netns_env, ray_tmp  # noqa: F401  (ray_tmp: a fixture)
from test_tournament import wait_gone

from arena.league.config import load_league
from arena.league.register import Register
from arena.league.versions import submit
from arena.tournament.results.database import ResultStore, StoreError


@pytest.mark.long(40)
def test_a_league_plays_on_ray_and_leaves_no_ray(tmp_path: Path, ray_tmp: Path) -> None:  # noqa: F811
    league = make_league(tmp_path / "lg")
    submit(load_league(league), "alice", bot_folder(tmp_path / "alice", GAMEBOTS / "minimal.py", GAMEBOTS))
    command = in_netns([sys.executable, "-m", "arena", "league", "run", str(league), "--executor", "ray",
                        "--jobs", "2", "--max-matches", "6", "--idle-exit"])
    done = subprocess.run(command, capture_output=True, text=True, env=netns_env(ray_tmp), timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "played 6 match(es)" in done.stderr, done.stderr
    assert list(ray_tmp.rglob("session_*")), list(ray_tmp.rglob("*"))[:20]      # played there, not locally
    with ResultStore(league / "results" / "results.sqlite", readonly=True) as store:
        matches = store.matches()
        assert not store.failures()
    assert len(matches) == 6
    seated = Counter(b for m in matches for b in m.bots)
    assert seated["alice.v1"] == 6            # checked, then placed first: every table its
    assert wait_gone(tmp_path) == []
    assert_no_ray_left(ray_tmp)


def test_a_league_on_ray_reads_its_tables_as_it_plays_them(tmp_path: Path, ray_tmp: Path) -> None:  # noqa: F811
    """With no --max-matches a league's matches never end: Ray reads them a
    table ahead of the results (the league's lookahead), as the local
    executor does, not all before the first is played (it then never played one)."""
    league = make_league(tmp_path / "lg")
    command = in_netns([sys.executable, "-m", "arena", "league", "run", str(league), "--executor", "ray",
                        "--jobs", "2"])
    log = tmp_path / "run.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=out, text=True, env=netns_env(ray_tmp))
    try:
        deadline = time.monotonic() + 600
        while _stored(league) < 9 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.5)
        assert _stored(league) >= 9, log.read_text()
        proc.send_signal(signal.SIGTERM)
        proc.wait(120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stored = _stored(league)
    with Register(league, readonly=True) as register:
        tables = register.table_count()
    # At most the tables of the matches stored, those in play (2 actors) and waiting (3: a table).
    assert 3 * tables <= stored + 2 + 3 + 2, (tables, stored)
    assert wait_gone(tmp_path) == []
    assert_no_ray_left(ray_tmp)


def _stored(league: Path) -> int:
    db = league / "results" / "results.sqlite"
    if not db.exists():
        return 0
    try:
        with ResultStore(db, readonly=True) as store:
            return len(store)
    except StoreError:            # being made
        return 0
