"""The live leader's fit (arena.ranking.live, plain Python) gives the
ratings of the batch fit (numpy) on the same games: the progress line shows
what the final leaderboard would."""

from __future__ import annotations

import random

import pytest

from arena.ranking import Game, fit
from arena.ranking.live import ratings

AGREE = 1e-9        # measured: within 1e-12 on these sets


def random_games(seed: int) -> tuple[list[Game], list[str]]:
    """A field of 2-10 bots with hidden strengths at tables of 2-8, some ties."""
    rng = random.Random(seed)
    bots = [f"b{i}" for i in range(rng.randint(2, 10))]
    k = rng.randint(2, min(len(bots), 8))
    tie = rng.choice([0.0, 0.1, 0.5])
    strength = {b: rng.gauss(0, 1.5) for b in bots}
    games = []
    for g in range(rng.randint(1, 150)):
        table = rng.sample(bots, k)
        perf = [strength[b] + rng.gauss(0, 1) for b in table]
        order = sorted(range(k), key=lambda i: -perf[i])
        ranks, rank = [0] * k, 0
        for pos, i in enumerate(order):
            if pos and rng.random() >= tie:
                rank = pos
            ranks[i] = rank
        games.append(Game(tuple(table), tuple(ranks), f"d{g // k}", f"g{g:04d}"))
    return games, ["idle"] if seed % 3 == 0 else []      # a player with no game keeps the prior


def assert_agree(games: list[Game], players: list[str]) -> None:
    want = fit(games, players).ratings
    got = ratings(games, players)
    assert sorted(got) == sorted(want)
    for name, r in want.items():
        assert got[name].mu == pytest.approx(r.mu, abs=AGREE), name
        assert got[name].sigma == pytest.approx(r.sigma, abs=AGREE), name


@pytest.mark.parametrize("seed", range(24))
def test_the_live_fit_gives_the_batch_fits_ratings(seed: int) -> None:
    assert_agree(*random_games(seed))


def test_a_hopeless_player_and_all_ties_agree_too() -> None:
    """A player who loses every game converges slowest (hundreds of sweeps)."""
    hopeless = [Game(("a", "b", "z"), (i % 2, 1 - i % 2, 2), f"d{i}", f"h{i:03d}") for i in range(60)]
    tied = [Game(("a", "b", "c", "d"), (0, 0, 0, 0), f"t{i}", f"t{i:03d}") for i in range(5)]
    assert_agree(hopeless, [])
    assert_agree(hopeless + tied, [])
    assert_agree(tied, ["e"])
