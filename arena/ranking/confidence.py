"""How sure the ranking is: bootstrap intervals, separated ranks, pairwise tests.

The games of a tournament are not independent: the rotations of one
duplicate deal share their cards.  So the bootstrap resamples whole
duplicate groups, from all the groups of the tournament (resampling within a
table would give zero-width intervals when a table has one deal), refits
the ratings on each replica, and reads the spread of the replicas.

An adjacent pair of the order is *separated* when the ``confidence``
interval of the difference of their ratings (over the replicas) excludes
zero: the upper bot is ahead in at least ``1 - (1 - confidence) / 2`` of the
replicas.  Unseparated neighbours are chained into groups of ranks that the
games do not tell apart ("2-4").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .games import Game
from .trueskill_batch import Prior, Problem, fit, solve

__all__ = ["Assessment", "Row", "assess", "rank_groups", "sign_test"]

REPLICAS = 200


@dataclass(frozen=True)
class Row:
    name: str
    mu: float
    sigma: float
    low: float                  # the confidence interval of mu
    high: float


@dataclass(frozen=True)
class Assessment:
    order: list[str]                    # best first (by mu, then name; players without games last)
    rows: dict[str, Row]
    separated: list[bool]               # order[i] vs order[i + 1]
    confidence: float
    replicas: int
    draw_probability: float

    @property
    def settled(self) -> bool:
        return all(self.separated)

    @property
    def unsettled(self) -> int:
        """Adjacent pairs not yet separated."""
        return sum(not s for s in self.separated)

    def rank_range(self, name: str) -> tuple[int, int]:
        """The ranks (1-based) ``name`` is not told apart from: its group."""
        i = self.order.index(name)
        return rank_groups(self.separated)[i]


def rank_groups(separated: Sequence[bool]) -> list[tuple[int, int]]:
    """For each position, the first and last rank of its group of unseparated neighbours."""
    n = len(separated) + 1
    out: list[tuple[int, int]] = []
    start = 0
    for i in range(n):
        if i == n - 1 or separated[i]:
            out += [(start + 1, i + 1)] * (i - start + 1)
            start = i + 1
    return out


def assess(games: Sequence[Game], players: Sequence[str] = (), confidence: float = 0.95,
           replicas: int = REPLICAS, seed: int = 0, prior: Prior = Prior()) -> Assessment:
    """Ratings, their intervals and which neighbours are separated."""
    if not 0.5 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0.5 and 1, got {confidence}")
    full = fit(games, players, prior)
    problem = Problem(games, players)
    seen = {p for g in problem.games for p in g.players}
    # Players without a game have no rating to speak of: after the others.
    order = sorted(full.ratings, key=lambda n: (n not in seen, -full.ratings[n].mu, n))
    alpha = 1.0 - confidence
    mus = _replicas(problem, replicas, seed, prior, full.draw_probability, full.messages)
    if mus is None:     # nothing to resample: no interval is honest but "unknown"
        rows = {n: Row(n, r.mu, r.sigma, -math.inf, math.inf) for n, r in full.ratings.items()}
        return Assessment(order, rows, [False] * (len(order) - 1), confidence, 0, full.draw_probability)
    col = {n: i for i, n in enumerate(problem.players)}
    low, high = np.quantile(mus, [alpha / 2, 1 - alpha / 2], axis=0)
    rows = {n: Row(n, r.mu, r.sigma, float(low[col[n]]), float(high[col[n]]))
            for n, r in full.ratings.items()}
    separated = []
    for a, b in zip(order, order[1:]):
        ahead = float(np.mean(mus[:, col[a]] > mus[:, col[b]]))
        separated.append(ahead >= 1.0 - alpha / 2)
    return Assessment(order, rows, separated, confidence, replicas, full.draw_probability)


def _replicas(problem: Problem, replicas: int, seed: int, prior: Prior, draw_p: float,
              start: list) -> np.ndarray | None:
    """The mu of every player in each bootstrap replica, (replicas, players)."""
    groups = sorted({g.group for g in problem.games})
    if len(groups) < 2 or replicas < 1:
        return None
    index = {g: i for i, g in enumerate(groups)}
    of_game = np.array([index[g.group] for g in problem.games])
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(groups), size=(replicas, len(groups)))
    counts = np.zeros((replicas, len(groups)), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(replicas), len(groups)), picks.ravel()), 1)
    mu, _sigma, _sweeps, _messages = solve(problem, counts[:, of_game], prior, draw_p, start=start)
    return mu


def sign_test(ahead: int, behind: int) -> float:
    """Two-sided p-value of an exact sign test: ``ahead`` against ``behind``
    (ties left out), if neither side were better."""
    n = ahead + behind
    if n == 0:
        return 1.0
    k = min(ahead, behind)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2.0 ** n
    return min(1.0, 2.0 * tail)
