"""The truncated-Gaussian moments of the batch solver (arena.ranking.gaussian)
against the textbook formulas and against the scalar ones of arena.ranking.live,
written apart: deep in the tails, where the textbook ratios are 0/0, and near 0."""

from __future__ import annotations

import math

import numpy as np
import pytest

from arena.ranking import live
from arena.ranking.gaussian import draw_moments, win_moments

MEANS = [-40.0, -12.0, -3.0, -0.5, -1e-9, 0.0, 1e-9, 0.4, 2.0, 9.0, 35.0, 300.0]
VARIANCES = [0.05, 1.0, 17.0]
EPS = [0.0, 0.3, 2.5]


def grid(eps_values: list[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    m, v, e = zip(*[(m, v, e) for m in MEANS for v in VARIANCES for e in eps_values])
    return np.array(m), np.array(v), np.array(e)


def textbook_win(m: float, v: float, eps: float) -> tuple[float, float]:
    s = math.sqrt(v)
    t = (m - eps) / s
    pdf, cdf = math.exp(-t * t / 2) / math.sqrt(2 * math.pi), 0.5 * math.erfc(-t / math.sqrt(2))
    ratio = pdf / cdf
    return m + s * ratio, v * (1 - ratio * (ratio + t))


@pytest.mark.parametrize("kind", ["win", "draw"])
def test_the_batch_moments_agree_with_the_scalar_ones_everywhere(kind):
    m, v, e = grid(EPS if kind == "win" else EPS[1:])
    batch = (win_moments if kind == "win" else draw_moments)(m, v, e)
    scalar = live._win_moments if kind == "win" else live._draw_moments
    for i in range(len(m)):
        want = scalar(float(m[i]), float(v[i]), float(e[i]))
        assert batch[0][i] == pytest.approx(want[0], rel=1e-9, abs=1e-12), (kind, m[i], v[i], e[i])
        assert batch[1][i] == pytest.approx(want[1], rel=1e-9, abs=1e-12), (kind, m[i], v[i], e[i])
        assert 0 < batch[1][i] <= v[i]


def test_the_win_moments_are_the_textbook_ones_where_those_are_exact():
    m, v, e = grid(EPS)
    mean, var = win_moments(m, v, e)
    for i in range(len(m)):
        if (m[i] - e[i]) / math.sqrt(v[i]) > -6:      # beyond, the textbook ratio is 0/0
            want = textbook_win(float(m[i]), float(v[i]), float(e[i]))
            # Numerical Recipes' erfc is good to about 1e-7; 1 - w loses digits.
            assert mean[i] == pytest.approx(want[0], rel=1e-4, abs=1e-9)
            assert var[i] == pytest.approx(want[1], rel=1e-4, abs=1e-9)
