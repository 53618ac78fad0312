"""The order-free TrueSkill (arena.ranking): agreement with TrueSkill, order
independence, stability, bootstrap intervals, separated ranks and the sign test."""

from __future__ import annotations

import dataclasses
import itertools
import math
import random

import pytest
import trueskill

from arena.ranking import Game, assess, fit, rank_ranges, sign_test


def thurstone_games(strengths: dict[str, float], rounds: int, seed: int, k: int = 4,
                    beta: float = 25 / 6) -> list[Game]:
    """Every table of ``k`` in every rotation, ``rounds`` times; results drawn from
    TrueSkill's own model, the rotations of one round of a table forming a group."""
    rng = random.Random(seed)
    out = []
    for r in range(rounds):
        for t, table in enumerate(itertools.combinations(sorted(strengths), k)):
            for rot in range(k):
                seats = table[rot:] + table[:rot]
                perf = {p: strengths[p] + rng.gauss(0, beta) for p in seats}
                ranked = sorted(seats, key=lambda p: -perf[p])
                out.append(Game(seats, tuple(ranked.index(p) for p in seats), f"t{t}-d{r}",
                                f"t{t:03d}-r{rot}-d{r}"))
    return out


def ts_env(draw: float) -> trueskill.TrueSkill:
    return trueskill.TrueSkill(mu=25, sigma=25 / 3, beta=25 / 6, tau=0, draw_probability=draw, backend=None)


@pytest.mark.parametrize("ranks", [(0, 1), (1, 0, 1, 3), (2, 1, 0), (0, 0)])
def test_one_game_matches_the_trueskill_package(ranks):
    names = tuple("abcd"[:len(ranks)])
    got = fit([Game(names, ranks, "g", "k")], draw_p=0.01).ratings
    env = ts_env(0.01)
    want = env.rate([(env.create_rating(),)] * len(ranks), ranks=list(ranks))
    for name, (r,) in zip(names, want):
        assert (got[name].mu, got[name].sigma) == pytest.approx((r.mu, r.sigma), abs=2e-3)


def test_the_order_of_the_games_changes_nothing():
    games = thurstone_games({"a": 30, "b": 27, "c": 25, "d": 23, "e": 20}, rounds=3, seed=1)
    first = fit(games).ratings
    for seed in range(3):
        shuffled = games[:]
        random.Random(seed).shuffle(shuffled)
        assert shuffled != games
        assert fit(shuffled).ratings == first          # exactly, not approximately
    # the sequential TrueSkill the tournament used before does depend on it
    env = ts_env(0.01)

    def sequential(order):
        r = {}
        for g in order:
            new = env.rate([(r.get(p, env.create_rating()),) for p in g.players], ranks=list(g.ranks))
            r.update({p: x for p, (x,) in zip(g.players, new)})
        return {p: x.mu for p, x in r.items()}
    assert sequential(games) != sequential(list(reversed(games)))


def test_the_true_order_is_found_and_the_field_averages_25():
    strengths = {"a": 31, "b": 28, "c": 25, "d": 22, "e": 19, "f": 16}
    got = fit(thurstone_games(strengths, rounds=4, seed=2)).ratings
    assert sorted(got, key=lambda p: -got[p].mu) == list("abcdef")
    assert sum(r.mu for r in got.values()) / 6 == pytest.approx(25.0, abs=1e-6)
    assert all(r.sigma < 1.5 for r in got.values())


def test_hopeless_and_tied_players_stay_finite():
    """A player that loses every game, and games that are all ties, give finite
    ratings (the tails of the truncated Gaussians are computed stably)."""
    games = []
    for i in range(200):
        games.append(Game(("loser", "a", "b", "c"), (3, 0, 1, 2), f"g{i}", f"m{i:04d}"))
        games.append(Game(("a", "b", "c", "tie"), (0, 0, 0, 0), f"h{i}", f"n{i:04d}"))
    got = fit(games).ratings
    assert all(math.isfinite(r.mu) and math.isfinite(r.sigma) and r.sigma > 0 for r in got.values())
    assert got["loser"].mu < min(got[p].mu for p in "abc")
    assert got["a"].mu > got["b"].mu > got["c"].mu


def test_intervals_resample_duplicate_groups_and_separate_what_differs():
    strong_field = {"a": 34, "b": 26, "c": 25, "d": 16}
    games = thurstone_games(strong_field, rounds=6, seed=4)
    a = assess(games, seed=5)
    assert a.order == ["a", "b", "c", "d"]
    for _name, row in a.rows.items():
        assert row.low < row.mu < row.high
    # b and c are close; a and d are far from them
    assert a.separated[0] and a.separated[2] and not a.separated[1]
    assert [a.rank_range(n) for n in a.order] == [(1, 1), (2, 3), (2, 3), (4, 4)]
    assert not a.settled and a.unsettled == 1
    # the same games and seed give the same intervals; another seed, others
    assert assess(games, seed=5) == a
    assert assess(games, seed=6).rows != a.rows


def test_each_pair_is_separated_on_its_own_not_through_its_neighbours():
    """Three players four points apart, five duplicate deals: neither
    neighbour pair is clear, the two ends are.  Chaining unseparated
    neighbours gave all three 1-3; pairwise, only the middle one can be
    anywhere."""
    games = thurstone_games({"a": 29, "b": 25, "c": 21}, rounds=5, seed=1, k=3)
    a = assess(games, seed=1)
    assert a.order == ["a", "b", "c"] and a.groups == 5
    assert a.separated == [False, False] and not a.settled and a.unsettled == 2
    # the adjacent margins are the pairwise ones of neighbours, from the same replicas
    assert a.margins == [a.pair_margins[0][1], a.pair_margins[1][2]]
    assert a.pair_separated()[0][2] and a.pair_separated()[2][0]
    assert [a.rank_range(n) for n in a.order] == [(1, 2), (1, 3), (2, 3)]
    # an assessment that knows only its adjacent margins bounds the others by them
    bare = dataclasses.replace(a, pair_margins=[])
    assert [bare.rank_range(n) for n in a.order] == [(1, 3)] * 3


def test_one_deal_per_table_still_gets_honest_intervals():
    """Groups are resampled across the tournament: a round robin with one
    deal per table (one group per table) must not get zero-width intervals."""
    games = thurstone_games({"a": 27, "b": 25, "c": 23, "d": 21, "e": 19}, rounds=1, seed=4)
    assert len({g.group for g in games}) == 5
    a = assess(games)
    assert all(r.high - r.low > 1.0 for r in a.rows.values())


def test_identical_players_are_not_separated_and_one_group_gives_no_interval():
    games = thurstone_games({"a": 25, "b": 25, "c": 25, "d": 25}, rounds=2, seed=7)
    assert assess(games).unsettled >= 2
    one = [g for g in games if g.group == games[0].group]
    lone = assess(one)
    assert all(r.low == -math.inf and r.high == math.inf for r in lone.rows.values())
    assert lone.separated == [False] * 3


def test_rank_ranges_count_the_players_separated_above_and_below():
    def matrix(n, pairs):
        sep = [[False] * n for _ in range(n)]
        for i, j in pairs:
            sep[i][j] = sep[j][i] = True
        return sep

    # only the first and the last of three told apart: chaining gave 1-3 to all three
    assert rank_ranges(matrix(3, [(0, 2)])) == [(1, 2), (1, 3), (2, 3)]
    # every pair but the middle neighbours: as the old groups, 1, 2-3, 2-3, 4
    assert rank_ranges(matrix(4, [(0, 1), (0, 2), (0, 3), (1, 3), (2, 3)])) == [(1, 1), (2, 3), (2, 3), (4, 4)]
    assert rank_ranges(matrix(5, [])) == [(1, 5)] * 5
    assert rank_ranges([[False]]) == [(1, 1)]
    assert rank_ranges([]) == []


def test_sign_test():
    assert sign_test(0, 0) == 1.0
    assert sign_test(5, 0) == pytest.approx(2 / 32)
    assert sign_test(6, 0) == pytest.approx(2 / 64)
    assert sign_test(3, 3) == 1.0
    assert sign_test(9, 1) == sign_test(1, 9) == pytest.approx(2 * 11 / 1024)


def test_games_are_checked():
    with pytest.raises(ValueError, match="twice"):
        Game(("a", "a"), (0, 1), "g", "k")
    with pytest.raises(ValueError, match="ranks"):
        Game(("a", "b"), (0,), "g", "k")
    with pytest.raises(ValueError, match="share the key"):
        fit([Game(("a", "b"), (0, 1), "g", "k"), Game(("a", "b"), (1, 0), "g", "k")])


def test_games_with_one_outcome_are_solved_once_and_count_as_often_as_they_occur():
    from arena.ranking.trueskill_batch import Problem
    games = thurstone_games({"a": 30, "b": 27, "c": 25, "d": 23, "e": 20}, rounds=4, seed=2)
    problem = Problem(games)
    distinct = {(tuple(sorted(g.players, key=lambda p: (g.ranks[g.players.index(p)], g.players.index(p)))),
                 tuple(sorted(g.ranks))) for g in games}
    assert len(problem.buckets[0].order) == len(distinct) < len(games)
    # one game's outcome entered twice more, under new keys and groups: the
    # same as that game counting three times
    extra = [Game(games[0].players, games[0].ranks, f"x{i}", f"zz{i}") for i in range(2)]
    tripled = fit(games + extra).ratings
    assert fit(games + extra[::-1]).ratings == tripled
    lonely = Game(("a", "e"), (1, 0), "u", "u1")
    assert fit(games + [lonely]).ratings != fit(games).ratings


def test_few_duplicate_groups_need_a_wider_margin_and_three_give_no_interval():
    from arena.ranking.confidence import DESIGN_EFFECT, PAIR_EFFECT, critical, pair_critical
    assert DESIGN_EFFECT > 1.0
    assert critical(0.95, None) == pytest.approx(1.95996, abs=1e-4)
    assert critical(0.95, 4) == pytest.approx(3.182 * math.sqrt(4 / 3), abs=0.01)    # t with 3 dof
    assert critical(0.95, 10) == pytest.approx(2.262 * math.sqrt(10 / 9), abs=0.01)
    # many groups: the measured design effect, not the bare normal quantile
    assert critical(0.95, 100_000) == pytest.approx(1.96 * DESIGN_EFFECT, abs=1e-3)
    assert critical(0.95, 100) == pytest.approx(1.96 * DESIGN_EFFECT, abs=1e-3)
    assert critical(0.95, 20) > 1.96 * DESIGN_EFFECT    # t factor still the larger
    assert critical(0.95, 3) == math.inf
    # a clear field seen in 4 groups: intervals wider than the replicas' own
    # percentiles (the t factor), and a difference of 3 sd no longer separates
    four = thurstone_games({"a": 40, "b": 25, "c": 24, "d": 10}, rounds=4, seed=3)
    a = assess(four)
    assert a.groups == 4
    assert a.separated_at(0.95) == [m >= critical(0.95, 4) * PAIR_EFFECT for m in a.margins]
    # a pair test asks more than an interval's widening: PAIR_EFFECT on top
    assert PAIR_EFFECT > 1.0 and a.needed(0.95) == pytest.approx(critical(0.95, 4) * PAIR_EFFECT)
    assert pair_critical(0.95, None) == critical(0.95, None)
    between = [[critical(0.95, 4) <= m < critical(0.95, 4) * PAIR_EFFECT for m in row] for row in a.pair_margins]
    assert all(not a.pair_separated()[i][j] for i, row in enumerate(between) for j, b in enumerate(row) if b)
    three = assess([g for g in four if g.group != four[0].group])
    assert three.groups == 3 and not any(three.separated)
    assert all(r.low == -math.inf for r in three.rows.values())


def test_a_fit_warm_started_from_a_prefix_reaches_the_same_ratings_in_fewer_sweeps():
    """The report's ratings-over-time chart fits every prefix of a tournament,
    each from the one before (``fit(warm=)``): outcomes they share keep their
    messages, new ones (and a new table size) start from nothing."""
    strengths = {"a": 30.0, "b": 27.0, "c": 25.0, "d": 22.0, "e": 20.0}
    games = thurstone_games(strengths, rounds=4, seed=3)
    games += [Game(("a", "e"), (0, 1), "two", "two-0")]       # a bucket the prefix does not have
    prefix = fit(games[:40])
    cold = fit(games)
    warm = fit(games, warm=prefix)
    assert warm.sweeps < cold.sweeps
    for name, r in cold.ratings.items():
        assert warm.ratings[name].mu == pytest.approx(r.mu, abs=0.01)
        assert warm.ratings[name].sigma == pytest.approx(r.sigma, abs=0.01)
    again = fit(games, warm=cold)        # from its own fixed point: there already
    assert again.sweeps <= 3
    assert fit(games, warm=None).ratings == cold.ratings


def mixed_games(seed: int) -> list[Game]:
    """Tables of 2 to 5, many ties (performances rounded), 8 duplicate
    groups: every kind of row the solver has."""
    rng = random.Random(seed)
    strengths = {p: 20 + 2 * i for i, p in enumerate("abcdefg")}
    out = []
    for n in range(240):
        seats = tuple(rng.sample(sorted(strengths), 2 + n % 4))
        perf = [round((strengths[p] + rng.gauss(0, 25 / 6)) / 4) for p in seats]
        ranks = tuple(sum(1 for q in perf if q > x) for x in perf)      # equal performances tie
        out.append(Game(seats, ranks, f"g{n % 8}", f"k{n:04d}"))
    assert sum(len(set(g.ranks)) < len(g.ranks) for g in out) > 40
    return out


def _exactly(a) -> list[tuple[str, float, float, float, float]]:
    return [(n, a.rows[n].mu, a.rows[n].sigma, a.rows[n].low, a.rows[n].high) for n in a.order]


def test_rows_updated_a_slice_at_a_time_give_the_same_bits(monkeypatch):
    """The solver updates its rows in slices (so its temporaries stay small in
    a large tournament): slices of 7 rows give what one slice gives, bit for
    bit, ties and every table size included."""
    from arena.ranking import trueskill_batch
    games = mixed_games(seed=4)
    # 24 replicas, not 200: slices of 7 rows make a Python loop of every
    # slice, which took 107 s of a full-suite run with 200; the slicing is the same.
    whole = assess(games, seed=3, replicas=24)
    monkeypatch.setattr(trueskill_batch, "CHUNK_ROWS", 7)
    sliced = assess(games, seed=3, replicas=24)
    assert _exactly(sliced) == _exactly(whole)
    assert sliced.margins == whole.margins and sliced.pair_margins == whole.pair_margins


def test_the_bootstrap_solves_its_replicas_in_batches_of_bounded_rows(monkeypatch):
    """200 replicas at once would hold (replica, outcome) rows that grow with
    the tournament; batches keep each solve within REPLICA_ROWS rows, and each
    batch converges to within the tolerance of solving them all at once."""
    from arena.ranking import confidence
    games = mixed_games(seed=5)
    rows: list[int] = []
    real = confidence.solve

    def counting(problem, weights, *args, **kwargs):
        rows.append(weights.shape[0] * sum(len(b.order) for b in problem.buckets))
        return real(problem, weights, *args, **kwargs)

    monkeypatch.setattr(confidence, "solve", counting)
    whole = assess(games, seed=3)
    assert len(rows) == 1                       # small: one batch, as before
    outcomes = rows[0] // confidence.REPLICAS
    rows.clear()
    monkeypatch.setattr(confidence, "REPLICA_ROWS", 3 * outcomes + 1)
    batched = assess(games, seed=3)
    assert len(rows) == math.ceil(confidence.REPLICAS / 3) and max(rows) <= 3 * outcomes + 1
    assert batched.order == whole.order
    for n in whole.order:
        assert batched.rows[n].mu == whole.rows[n].mu          # the fit itself is not resampled
        assert batched.rows[n].low == pytest.approx(whole.rows[n].low, abs=2e-3)
        assert batched.rows[n].high == pytest.approx(whole.rows[n].high, abs=2e-3)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 6])
def test_the_small_inverses_agree_with_lapack(n):
    """Tables of up to 4 seats invert their (k-1) x (k-1) matrices by
    cofactors, larger ones through numpy: both give the inverse."""
    import numpy as np

    from arena.ranking.trueskill_batch import inverse
    rng = np.random.default_rng(n)
    x = rng.normal(size=(500, n, n))
    a = x @ x.transpose(0, 2, 1) + 0.5 * np.eye(n)      # symmetric positive definite, as the solver's
    got = inverse(a)
    assert np.allclose(got, np.linalg.inv(a), rtol=1e-9, atol=0)
    assert np.allclose(a @ got, np.eye(n), atol=1e-9)
