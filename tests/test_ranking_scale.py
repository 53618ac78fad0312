"""Issue 34: the ranking's memory does not grow with replicas x games, and the
report's ratings over time reuse one index of the games; the same bits as
before either way (test_tournament_pinned and test_ranking_batch hold the
figures themselves)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from arena.ranking import Game, Prior, assess, fit
from arena.ranking.history import fit_prefixes
from arena.ranking.trueskill_batch import Problem, solve


def scheduled_games(seed: int, late: str | None = None) -> list[Game]:
    """Tables of 2 to 4 with ties, in a schedule order that is not the keys'
    order, 12 duplicate groups of hands; ``late`` plays only in the second half."""
    rng = random.Random(seed)
    strengths = {p: 20 + 2 * i for i, p in enumerate("abcdef")}
    out = []
    for n in range(300):
        field = [p for p in sorted(strengths) if p != late or n >= 150]
        seats = tuple(rng.sample(field, 2 + n % 3))
        perf = [round((strengths[p] + rng.gauss(0, 25 / 6)) / 4) for p in seats]
        ranks = tuple(sum(1 for q in perf if q > x) for x in perf)
        out.append(Game(seats, ranks, f"g{n % 12}", f"k{(n * 7919) % 300:04d}"))
    return out


def _exactly(a) -> list[tuple[str, float, float, float, float]]:
    return [(n, a.rows[n].mu, a.rows[n].sigma, a.rows[n].low, a.rows[n].high) for n in a.order]


@pytest.mark.long(10)
@pytest.mark.parametrize("late", [None, "f"])
def test_fits_of_prefixes_from_one_index_are_each_prefix_fit_warm_to_the_bit(late):
    games = scheduled_games(seed=1, late=late)
    cuts = [30, 60, 60, 149, 150, 151, 240, 300]
    warm = None
    expected = []
    for n in cuts:
        warm = fit(games[:n], (), warm=warm)
        expected.append((n, warm.ratings, warm.sweeps, warm.draw_probability))
    got = [(n, f.ratings, f.sweeps, f.draw_probability) for n, f in fit_prefixes(games, cuts)]
    assert got == expected


def test_a_prefix_problem_has_the_buckets_of_the_prefix():
    from arena.ranking.games import players_of
    from arena.ranking.trueskill_batch import encoded
    games = scheduled_games(seed=2)
    everyone = players_of(games)
    coded = encoded(games, everyone)
    for n in (1, 50, 299):
        made, sliced = Problem(games[:n], everyone), Problem.prefix(games, everyone, coded, n)
        assert len(made.buckets) == len(sliced.buckets)
        for a, b in zip(made.buckets, sliced.buckets):
            assert np.array_equal(a.order, b.order) and np.array_equal(a.draw, b.draw)
            assert np.array_equal(np.bincount(a.outcome), np.bincount(b.outcome))


def test_bootstrap_weights_by_group_are_the_weights_by_game():
    """solve(groups=) weighs each game by its group's count, as the
    (replicas, games) array it replaces did: the same bits."""
    games = scheduled_games(seed=3)
    problem = Problem(games)
    groups = sorted({g.group for g in problem.games})
    of_game = np.array([groups.index(g.group) for g in problem.games])
    counts = np.random.default_rng(4).integers(0, 3, size=(9, len(groups)))
    by_game = solve(problem, counts[:, of_game], Prior(), 0.05)
    by_group = solve(problem, counts, Prior(), 0.05, groups=of_game)
    assert np.array_equal(by_game[0], by_group[0]) and np.array_equal(by_game[1], by_group[1])
    assert by_game[2] == by_group[2]


def test_weights_gathered_a_few_pairs_at_a_time_give_the_same_bits(monkeypatch):
    """The (replica, pair) weights are gathered in steps of PAIR_ROWS, so their
    temporaries stay bounded: a pair at a time gives what one step gives."""
    from arena.ranking import trueskill_batch
    games = scheduled_games(seed=5)
    whole = assess(games, seed=2, replicas=30)
    monkeypatch.setattr(trueskill_batch, "PAIR_ROWS", 5)
    stepped = assess(games, seed=2, replicas=30)
    assert _exactly(stepped) == _exactly(whole)
    assert stepped.pair_margins == whole.pair_margins
