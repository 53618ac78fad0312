"""A stand-in for ``arena.ranking.assess`` until it lands on main (delete it then).

Same call and result shape as the planned API: a bootstrap over whole
duplicate groups, refitting the batch TrueSkill on every replica.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from arena.ranking import Game, Prior
from arena.ranking.trueskill_batch import Problem, draw_probability, solve


@dataclass(frozen=True)
class Row:
    mu: float
    sigma: float
    low: float
    high: float


@dataclass(frozen=True)
class Assessment:
    order: list[str]
    rows: dict[str, Row]
    separated: list[bool]

    @property
    def settled(self) -> bool:
        return all(self.separated)


def assess(games: Sequence[Game], players: Sequence[str] = (), confidence: float = 0.95,
           replicas: int = 200, seed: int = 0) -> Assessment:
    problem = Problem(games, players)
    p = draw_probability(problem.games)
    one = np.ones((1, len(problem.games)), dtype=np.int64)
    mu0, sigma0, _, start = solve(problem, one, Prior(), p)
    groups = sorted({g.group for g in problem.games})
    group_of = np.array([groups.index(g.group) for g in problem.games])
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(len(groups), [1.0 / len(groups)] * len(groups), size=replicas)
    # Replicas start from the fit's messages; at solve's default tolerance (1e-6)
    # weighted replicas take 100-300 sweeps, at 1e-3 about 5, and mu moves < 1e-3.
    mu, _, _, _ = solve(problem, counts[:, group_of], Prior(), p, tolerance=1e-3, start=start)
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(mu, [alpha, 1.0 - alpha], axis=0)
    names = problem.players
    rows = {n: Row(float(mu0[0, i]), float(sigma0[0, i]), float(low[i]), float(high[i])) for i, n in enumerate(names)}
    order = sorted(names, key=lambda n: (-rows[n].mu, n))
    idx = {n: i for i, n in enumerate(names)}
    separated = [float(np.mean(mu[:, idx[a]] > mu[:, idx[b]])) >= 1.0 - alpha for a, b in zip(order, order[1:])]
    return Assessment(order, rows, separated)
