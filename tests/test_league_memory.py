"""``arena league run`` keeps no stored match: its matchmaking fits a tally
of the outcomes (``ranking.live.Tally``), which gives the ratings the fit of
every game gives, bit for bit, and the run holds no match it stored or read
(so a league that runs for weeks does not grow the run with its matches;
benchmarks/league.py --only c has the MB)."""

from __future__ import annotations

import gc
from pathlib import Path

from test_league import make_league

from arena.league.config import load_league
from arena.league.run import run_league
from arena.ranking.live import Tally, ratings
from arena.tournament.results.database import ResultStore, StoredMatch
from arena.tournament.standings.ratings import games_of, rated_games


def _held() -> int:
    return sum(1 for o in gc.get_objects() if isinstance(o, StoredMatch))


def test_the_run_holds_no_match_it_stored_or_read(tmp_path: Path) -> None:
    league = make_league(tmp_path / "lg")
    config = load_league(league)
    counts: list[int] = []

    def echo(line: str) -> None:
        if line.startswith("L0"):            # a match stored: at most it, in the making, is alive
            counts.append(_held())

    gc.collect()
    before = _held()
    run_league(config, jobs=1, max_matches=15, echo=echo, idle_exit=True)
    assert len(counts) == 15 and max(counts) - before <= 1, counts
    counts.clear()
    run_league(config, jobs=1, max_matches=3, echo=echo, idle_exit=True)      # reads the 15 stored first
    assert len(counts) == 3 and max(counts) - before <= 1, counts


def test_a_tally_fits_what_the_fit_of_every_game_fits(tmp_path: Path) -> None:
    league = make_league(tmp_path / "lg")
    run_league(load_league(league), jobs=1, max_matches=18, echo=lambda line: None, idle_exit=True)
    with ResultStore(league / "results" / "results.sqlite", readonly=True) as store:
        matches = store.matches()
    tally = Tally()
    for m in reversed(matches):              # the order they come in changes nothing
        tally.add(games_of(m.match_id, m.deal, m.bots, m.places, m.forfeited, m.hand_scores))
    extra = ("nobody.v1",)                   # a version with no match yet: the prior
    assert tally.ratings(extra) == ratings(rated_games(matches), extra)
    assert len(tally.counts) < len(rated_games(matches))      # kept by distinct outcome, not by game
