"""The rating model's numbers, without numpy: the prior, a rating, the draw
probability and margin, and the constants of the normal tail.

``trueskill_batch`` (numpy, every replica at once) and ``live`` (plain
Python, the one fit a running tournament's progress line shows) both take
them from here, so the two cannot drift apart.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

from .games import Game, draw_rate

__all__ = ["Rating", "Prior", "draw_probability", "shrunk_draw_rate", "draw_margin", "ERFC_COEFFS", "FIT_TOLERANCE", "FIT_SWEEPS",
           "PASSES", "FIRST_PASSES", "DAMPING"]

# Per-sweep changes below which a fit is done.  Most fits converge in 15-25
# sweeps; a player who loses nearly everything (or wins) moves slowly, so
# the tail is long: 700 sweeps to 1e-6 where 1e-5 stops within 0.01 of it.
FIT_TOLERANCE, FIT_SWEEPS = 1e-5, 1000
PASSES = 2          # within-game refinements per sweep, once warm (more gains nothing measurable)
FIRST_PASSES = 4    # the first update needs more
# Parallel updates overshoot when a player's games all move the same way at
# once; a partial step keeps them stable.
DAMPING = 0.8

# Numerical Recipes' erfc in Chebyshev form: erfc(z) = t * exp(-z^2 + P(t)),
# relative error below 1.2e-7 for every z >= 0.  Written as erfcx(z) = t * exp(P(t)).
ERFC_COEFFS = (0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807,
               -0.18628806, 0.09678418, 0.37409196, 1.00002368, -1.26551223)


@dataclass(frozen=True)
class Rating:
    mu: float
    sigma: float


@dataclass(frozen=True)
class Prior:
    """TrueSkill's usual scale: mu 25, sigma 25/3, beta 25/6."""
    mu: float = 25.0
    sigma: float = 25.0 / 3.0
    beta: float = 25.0 / 6.0


def draw_probability(games: Sequence[Game]) -> float:
    """The share of pairs of seats that tie, shrunk towards 1 % by 100 pseudo-pairs
    (so a handful of games cannot make draws impossible or common)."""
    return shrunk_draw_rate(*draw_rate(games))


def shrunk_draw_rate(ties: int, pairs: int) -> float:
    """``draw_probability`` of games with ``ties`` tied pairs of seats out of ``pairs``."""
    return min(max((ties + 1.0) / (pairs + 100.0), 1e-4), 0.5)


def draw_margin(p: float, beta: float) -> float:
    """The margin at which two equal players draw with probability ``p``."""
    return NormalDist().inv_cdf((p + 1.0) / 2.0) * math.sqrt(2.0) * beta
