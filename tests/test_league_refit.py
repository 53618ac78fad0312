"""``arena league run`` refits its matchmaking's ratings a slice at a time
(``run.fit_slice``), between the tables it chooses, instead of all at once
before a table: a fit of every match takes seconds once a league has
hundreds (4.7 CPU-s at 600 matches of 12 versions), and the workers waited
that long for their next match (a window of 10 s stored none in
benchmarks/league.py --only b).  The fit in steps gives the same ratings, to
the bit; a slice is bounded even after the run was stopped (SIGSTOP, a
suspended laptop) for an hour."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_league import make_league

from arena.league import run as league_run
from arena.league.config import load_league
from arena.league.run import FIT_SLICE_MAX, fit_slice, run_league
from arena.ranking import live
from arena.ranking.live import Tally, ratings
from arena.tournament.results.database import ResultStore
from arena.tournament.standings.ratings import games_of, rated_games


def test_a_fit_in_steps_gives_the_fit_of_every_game_bit_for_bit(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    league = make_league(tmp_path / "lg")
    run_league(load_league(league), jobs=1, max_matches=18, echo=lambda line: None, idle_exit=True)
    with ResultStore(league / "results" / "results.sqlite", readonly=True) as store:
        matches = store.matches()
    tally = Tally()
    for m in matches:
        tally.add(games_of(m.match_id, m.deal, m.bots, m.places, m.forfeited, m.hand_scores))
    monkeypatch.setattr(live, "STEP", 1)
    fitting, steps = tally.fitting(("nobody.v1",)), 0
    while True:
        try:
            next(fitting)
            steps += 1
        except StopIteration as done:
            stepped = done.value
            break
    assert steps > 10 and stepped == ratings(rated_games(matches), ("nobody.v1",)) == tally.ratings(("nobody.v1",))


def test_tables_are_chosen_while_a_refit_is_under_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[tuple[str, int]] = []
    fitting = Tally.fitting

    def watched(self: Tally, *args: object, **kwargs: object) -> live.Fitting:
        fit = len([e for e in events if e[0] == "begun"])
        events.append(("begun", fit))
        inner = fitting(self, *args, **kwargs)           # type: ignore[arg-type]
        try:
            while True:
                next(inner)
                yield
        except StopIteration as done:
            events.append(("done", fit))
            return done.value

    chosen = league_run.next_table

    def table(*args: object, **kwargs: object) -> object:
        events.append(("table", 0))
        return chosen(*args, **kwargs)                  # type: ignore[arg-type]

    monkeypatch.setattr(Tally, "fitting", watched)
    monkeypatch.setattr(league_run, "next_table", table)
    monkeypatch.setattr(league_run, "FIT_SLICE_MAX", 0.0)  # a step a table
    monkeypatch.setattr(live, "STEP", 1)
    league = make_league(tmp_path / "lg")
    run_league(load_league(league), jobs=1, max_matches=30, echo=lambda line: None, idle_exit=True)
    kinds = [kind for kind, _ in events]
    assert kinds[:3] == ["begun", "done", "table"]          # the first fit whole, before the first table
    # Later fits: tables chosen between a fit's start and its end (on the ratings before it).
    under_way, during = False, 0
    for kind in kinds:
        under_way = kind == "begun" or (under_way and kind != "done")
        during += kind == "table" and under_way
    assert during >= 2, kinds


def test_a_slice_is_a_share_of_the_time_since_the_last_and_bounded() -> None:
    assert fit_slice(0.0) == 0.0                            # tables in a hurry: a step each
    assert fit_slice(0.6) == pytest.approx(0.2)             # a third of the time since: a quarter of the run's
    assert fit_slice(3600.0) == FIT_SLICE_MAX <= 0.5        # after an hour stopped, not 20 minutes of fitting
