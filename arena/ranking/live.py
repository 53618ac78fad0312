"""The batch TrueSkill fit of ``trueskill_batch.fit`` in plain Python: the
leader a running tournament's progress line shows.

That line is refitted while the workers play, in the arena's own process.
numpy there costs about 14 MB of memory the workers do not share, and
OpenBLAS's thread besides, which makes the arena unsafe to fork a
replacement worker from.  This is the same model, the same equations and the
same stopping rule, one game outcome at a time instead of all in arrays: on
the same games its ratings agree with ``fit``'s to about 1e-9 (a test holds
them to that), far below the one decimal the line shows.  It is slower on
a large field; the progress line refits less often when a fit takes long.

Only the fit of all games (one replica, no bootstrap) is here: intervals
and the final tables keep numpy.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Generator, Iterable, Sequence

from .games import Game, canonical, draw_rate, players_of
from .model import (
    DAMPING,
    ERFC_COEFFS,
    FIRST_PASSES,
    FIT_SWEEPS,
    FIT_TOLERANCE,
    PASSES,
    Prior,
    Rating,
    draw_margin,
    draw_probability,
    shrunk_draw_rate,
)

__all__ = ["Fitting", "Tally", "ratings"]

Matrix = list[list[float]]

_SQRT2 = math.sqrt(2.0)
_SQRT2PI = math.sqrt(2.0 * math.pi)


def ratings(games: Sequence[Game], players: Sequence[str] = (), prior: Prior = Prior()) -> dict[str, Rating]:
    """What ``trueskill_batch.fit(games, players, prior).ratings`` gives."""
    ordered = canonical(games)
    names = players_of(ordered, players)
    index = {p: i for i, p in enumerate(names)}
    eps = draw_margin(draw_probability(ordered), prior.beta)
    return _fit(names, _outcomes(ordered, index), eps, prior)


class Tally:
    """Games as the fit reads them, for a fit again and again as games come
    (``arena league run``'s matchmaking): each distinct outcome (the players
    in rank order, which neighbours tied) with its count, the tied pairs of
    seats and every player named.  ``ratings`` then gives exactly what
    ``ratings`` of every game added gives, and what is kept grows with the
    distinct outcomes (a league's tables repeat), not with the games: a
    league's run no longer holds every match it knows.  Each game is added
    once (the caller's match ids are unique; ``canonical`` checks the keys
    of a list, which this does not keep)."""

    def __init__(self) -> None:
        self.counts: dict[tuple[tuple[str, ...], tuple[int, ...]], int] = {}
        self.named: set[str] = set()
        self.ties = self.pairs = 0

    def add(self, games: Iterable[Game]) -> None:
        for g in games:
            k = len(g.players)
            ties, pairs = draw_rate((g,))
            self.ties, self.pairs = self.ties + ties, self.pairs + pairs
            self.named.update(g.players)
            if k < 2:
                continue
            seats = sorted(range(k), key=lambda s: (g.ranks[s], s))
            ranks = [g.ranks[s] for s in seats]
            key = (tuple(sys.intern(g.players[s]) for s in seats), tuple(int(ranks[j] == ranks[j + 1])
                                                                         for j in range(k - 1)))
            self.counts[key] = self.counts.get(key, 0) + 1

    def ratings(self, players: Sequence[str] = (), prior: Prior = Prior()) -> dict[str, Rating]:
        return _drained(self.fitting(players, prior))

    def fitting(self, players: Sequence[str] = (), prior: Prior = Prior()) -> Fitting:
        """``ratings`` a step at a time: a generator that yields after each
        ``STEP`` outcomes it refines and returns the ratings (the same bits),
        of the games added before it began.  A league's run advances it a
        slice of time per table it chooses, so that a fit of seconds (4.7
        CPU-s at 120 outcomes of 12 versions) never stops its matches."""
        names = sorted(self.named | set(players))
        index = {p: i for i, p in enumerate(names)}
        eps = draw_margin(shrunk_draw_rate(self.ties, self.pairs), prior.beta)
        rows = {(*(index[p] for p in order), *draws): count for (order, draws), count in self.counts.items()}
        return _fitting(names, _sorted_outcomes(rows), eps, prior)


# A fit in steps: None after each step, its ratings as the generator's value.
Fitting = Generator[None, None, dict[str, Rating]]
STEP = 32           # outcomes refined between two steps of a ``Tally.fitting``


def _drained(fitting: Fitting) -> dict[str, Rating]:
    while True:
        try:
            next(fitting)
        except StopIteration as done:
            return done.value


def _fit(names: list[str], outcomes: list[_Outcome], eps: float, prior: Prior) -> dict[str, Rating]:
    return _drained(_fitting(names, outcomes, eps, prior))


def _fitting(names: list[str], outcomes: list[_Outcome], eps: float, prior: Prior) -> Fitting:
    n = len(names)
    pi0, eta0 = 1.0 / prior.sigma ** 2, prior.mu / prior.sigma ** 2
    played = [False] * n
    for o in outcomes:
        for p in o.order:
            played[p] = True
    counted = max(sum(played), 1)
    level = [0.0] * n
    sigma = [prior.sigma] * n
    for sweep in range(1, FIT_SWEEPS + 1):
        pi, eta = [pi0] * n, [eta0] * n
        for size in sorted({len(o.order) for o in outcomes}):
            # Summed per table size, then added, in the order of the arrays' sums.
            acc_pi, acc_eta = [0.0] * n, [0.0] * n
            for o in outcomes:
                if len(o.order) == size:
                    for j, p in enumerate(o.order):
                        acc_pi[p] += o.weight * o.tau[j]
                        acc_eta[p] += o.weight * o.rho[j]
            pi = [a + b for a, b in zip(pi, acc_pi)]
            eta = [a + b for a, b in zip(eta, acc_eta)]
        mu = [e / q for e, q in zip(eta, pi)]
        centre = sum(m for m, on in zip(mu, played) if on) / counted
        new_level = [m - centre if on else 0.0 for m, on in zip(mu, played)]
        new_sigma = [math.sqrt(1.0 / q) for q in pi]
        change = max(max(abs(a - b) for a, b in zip(new_level, level)),
                     max(abs(a - b) for a, b in zip(new_sigma, sigma)))
        level, sigma = new_level, new_sigma
        if sweep > 1 and change < FIT_TOLERANCE:
            break
        for i, o in enumerate(outcomes, start=1):
            o.update(pi, eta, prior.beta, eps)
            if i % STEP == 0:
                yield
        yield
    return {name: Rating(prior.mu + level[i], sigma[i]) for i, name in enumerate(names)}


class _Outcome:
    """One distinct outcome of a table size (players in rank order, which
    neighbours tied), counted as often as it occurs, with its messages."""

    def __init__(self, order: tuple[int, ...], draw: tuple[bool, ...], weight: int) -> None:
        k = len(order)
        self.order, self.draw, self.weight = order, draw, float(weight)
        self.tau, self.rho = [0.0] * k, [0.0] * k
        self.d_tau, self.d_rho = [0.0] * (k - 1), [0.0] * (k - 1)
        self.passes = FIRST_PASSES

    def update(self, pi: list[float], eta: list[float], beta: float, eps: float) -> None:
        cav_pi = [pi[p] - t for p, t in zip(self.order, self.tau)]
        cav_eta = [eta[p] - r for p, r in zip(self.order, self.rho)]
        m = [e / q for e, q in zip(cav_eta, cav_pi)]
        v = [1.0 / q for q in cav_pi]
        post_mean, post_var = self._tilted(m, v, beta, eps)
        for j in range(len(self.order)):
            new_tau = max(1.0 / post_var[j] - cav_pi[j], 0.0)
            new_rho = post_mean[j] / post_var[j] - cav_eta[j]
            self.tau[j] += DAMPING * (new_tau - self.tau[j])
            self.rho[j] += DAMPING * (new_rho - self.rho[j])
        self.passes = PASSES

    def _tilted(self, m: list[float], v: list[float], beta: float, eps: float) -> tuple[list[float], list[float]]:
        """Skill means and variances given the cavity ``N(m, v)`` and this outcome."""
        k = len(m)
        d = k - 1
        c = [x + beta * beta for x in v]                    # performance variances
        d_mean = [m[j] - m[j + 1] for j in range(d)]        # prior of the differences
        s0 = [[0.0] * d for _ in range(d)]
        for j in range(d):
            s0[j][j] = c[j] + c[j + 1]
            if j + 1 < d:
                s0[j][j + 1] = s0[j + 1][j] = -c[j + 1]
        s0_inv = _inverse(s0)
        cov = _inverse([[s0_inv[i][j] + (self.d_tau[i] if i == j else 0.0) for j in range(d)] for i in range(d)])
        rhs = [sum(s0_inv[i][j] * d_mean[j] for j in range(d)) + self.d_rho[i] for i in range(d)]
        mean = [sum(cov[i][j] * rhs[j] for j in range(d)) for i in range(d)]
        for _ in range(self.passes):
            for f in range(d):
                self._refine(f, mean, cov, eps)
        # Back from the differences to the performances, then to the skills.
        gain = [[0.0] * d for _ in range(k)]               # c_dt @ s0_inv
        for i in range(k):
            for j in range(d):
                gain[i][j] = (c[i] * s0_inv[i][j] if i < d else 0.0) - (c[i] * s0_inv[i - 1][j] if i > 0 else 0.0)
        step = [x - y for x, y in zip(mean, d_mean)]
        rest = [[s0[i][j] - cov[i][j] for j in range(d)] for i in range(d)]
        out_mean, out_var = [], []
        for i in range(k):
            g = gain[i]
            x_mean = m[i] + sum(g[j] * step[j] for j in range(d))
            x_var = c[i] - sum(g[j] * rest[j][n] * g[n] for j in range(d) for n in range(d))
            shrink = v[i] / c[i]
            out_mean.append(m[i] + shrink * (x_mean - m[i]))
            out_var.append(v[i] - shrink * shrink * (c[i] - x_var))
        return out_mean, out_var

    def _refine(self, f: int, mean: list[float], cov: Matrix, eps: float) -> None:
        """One EP step of the factor on difference ``f`` (``mean`` and ``cov`` in place)."""
        var_f = cov[f][f]
        cav_pi = max(1.0 / var_f - self.d_tau[f], 1e-12)
        cav_m = (mean[f] / var_f - self.d_rho[f]) / cav_pi
        new_m, new_v = (_draw_moments if self.draw[f] else _win_moments)(cav_m, 1.0 / cav_pi, eps)
        tau = max(1.0 / new_v - cav_pi, 0.0)
        rho = new_m / new_v - cav_pi * cav_m
        dt, dr = tau - self.d_tau[f], rho - self.d_rho[f]
        self.d_tau[f], self.d_rho[f] = tau, rho
        denom = 1.0 + dt * var_f
        col = [row[f] for row in cov]
        move = (dr - dt * mean[f]) / denom
        scale = dt / denom
        for i, ci in enumerate(col):
            mean[i] += ci * move
            row = cov[i]
            for j, cj in enumerate(col):
                row[j] -= scale * ci * cj


def _outcomes(games: list[Game], index: dict[str, int]) -> list[_Outcome]:
    """The distinct outcomes, by table size and then in sorted order (as
    ``trueskill_batch.Problem`` buckets them), each with its count."""
    counts: dict[tuple[int, ...], int] = {}
    for g in games:
        k = len(g.players)
        if k < 2:
            continue
        seats = sorted(range(k), key=lambda s: (g.ranks[s], s))
        ranks = [g.ranks[s] for s in seats]
        row = (*(index[g.players[s]] for s in seats), *(int(ranks[j] == ranks[j + 1]) for j in range(k - 1)))
        counts[row] = counts.get(row, 0) + 1
    return _sorted_outcomes(counts)


def _sorted_outcomes(counts: dict[tuple[int, ...], int]) -> list[_Outcome]:
    """Each row (players' indices in rank order, then the neighbours' ties) as an outcome, in sorted order."""
    out = []
    for row in sorted(counts, key=lambda r: ((len(r) + 1) // 2, r)):
        k = (len(row) + 1) // 2
        out.append(_Outcome(row[:k], tuple(bool(x) for x in row[k:]), counts[row]))
    return out


def _inverse(a: Matrix) -> Matrix:
    """The inverse of a small symmetric positive definite matrix (Gauss-Jordan;
    positive definite, so without pivoting)."""
    n = len(a)
    work = [[*row, *(1.0 if i == j else 0.0 for j in range(n))] for i, row in enumerate(a)]
    for col in range(n):
        lead_row = work[col]
        lead = lead_row[col]
        lead_row = work[col] = [x / lead for x in lead_row]
        for r in range(n):
            factor = work[r][col]
            if r != col and factor != 0.0:
                work[r] = [x - factor * y for x, y in zip(work[r], lead_row)]
    return [row[n:] for row in work]


def _erfcx(z: float) -> float:
    """``exp(z**2) * erfc(z)`` for ``z >= 0`` (``gaussian.erfcx``, one value)."""
    t = 1.0 / (1.0 + 0.5 * z)
    poly = 0.0
    for c in ERFC_COEFFS:
        poly = poly * t + c
    return t * math.exp(poly)


def _upper_tail_scaled(x: float) -> float:
    return 0.5 * _erfcx(x / _SQRT2)


def _cdf(x: float) -> float:
    q = 0.5 * math.exp(-0.5 * min(x * x, 1400.0)) * _erfcx(abs(x) / _SQRT2)
    return 1.0 - q if x >= 0 else q


def _pdf(x: float) -> float:
    return math.exp(-0.5 * x * x) / _SQRT2PI


def _win_moments(m: float, v: float, eps: float) -> tuple[float, float]:
    """Mean and variance of ``N(m, v)`` conditioned on ``d > eps`` (``gaussian.win_moments``)."""
    s = math.sqrt(v)
    t = (m - eps) / s
    ratio = _pdf(t) / _cdf(t) if t >= 0 else 1.0 / (_SQRT2PI * _upper_tail_scaled(-t))
    w = ratio * (ratio + t)
    return m + s * ratio, v * min(max(1.0 - w, 1e-12), 1.0)


def _draw_moments(m: float, v: float, eps: float) -> tuple[float, float]:
    """Mean and variance of ``N(m, v)`` conditioned on ``-eps <= d <= eps`` (``gaussian.draw_moments``)."""
    s = math.sqrt(v)
    sign = -1.0 if m > 0 else 1.0           # symmetric: work with m <= 0, flip the mean back
    mm = m * sign
    a = (-eps - mm) / s
    b = (eps - mm) / s
    if a > 0:
        # Interval (a, b) with 0 < a: numerator and denominator scaled by exp(a^2/2).
        shrink = math.exp(-0.5 * (b * b - a * a))
        z = _upper_tail_scaled(a) - shrink * _upper_tail_scaled(b)
        num_v = (1.0 - shrink) / _SQRT2PI
        num_w = (b * shrink - a) / _SQRT2PI
    else:
        z = _cdf(b) - _cdf(a)
        num_v = _pdf(a) - _pdf(b)
        num_w = b * _pdf(b) - a * _pdf(a)
    z = max(z, 1e-300)
    ratio = num_v / z
    w = ratio * ratio + num_w / z
    return sign * (mm + s * ratio), v * min(max(1.0 - w, 1e-12), 1.0)
