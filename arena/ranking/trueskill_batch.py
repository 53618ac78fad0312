"""TrueSkill fitted to all games at once, so that their order does not matter.

The model is TrueSkill's: each player has a skill ``s ~ N(mu0, sigma0**2)``;
in a game each plays a performance ``x = s + N(0, beta**2)``; the finishing
order says that the performance of each rank beats the next one's by more
than the draw margin ``eps``, or that equal ranks are within ``eps``.  No
drift: bots do not change during a tournament.

The usual TrueSkill updates the ratings one game at a time, so the result
depends on the order of the games, and old games fade.  Here the posterior
is found by expectation propagation over every game together (as TrueSkill
Through Time does within one time step): each game keeps its own Gaussian
message to each of its players, and the messages are refined, all games in
parallel, until none changes.  The fixed point does not depend on the order,
and the games are summed in the order of their keys, so not one bit does.

Games can carry integer weights (a game drawn twice in a bootstrap
replica counts twice), and many replicas are solved in one pass: arrays
have a row per (replica, game) with a non-zero weight.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
from numpy.typing import NDArray

from .games import Game, canonical, players_of
from .gaussian import draw_moments, win_moments
from .model import DAMPING, FIRST_PASSES, FIT_SWEEPS, FIT_TOLERANCE, PASSES, Prior, Rating, draw_margin, draw_probability

__all__ = ["Rating", "Prior", "Fit", "fit", "solve", "Problem", "code", "draw_probability"]

Array = NDArray[np.float64]
Outcome = tuple[tuple[str, ...], tuple[bool, ...]]     # players in rank order, which neighbours tied

# Bootstrap replicas need less than a fit (``model.FIT_TOLERANCE``): their
# spread is what counts, and they start from the full fit; a capped replica
# leaves a hopeless player's level a little short of its own fixed point (its
# interval a little narrow), but a hopeless player is far from its neighbours
# anyway.
REPLICA_TOLERANCE, REPLICA_SWEEPS = 1e-4, 60
# Within-game refinements per sweep of a replica.  A replica starts from the
# full fit's messages, and its factors' second pass changes nothing its next
# sweep would not: one pass took as many sweeps to the same margins (spreads
# of every pair within 3e-4 of two passes', tables of 3 to 6, and a 12-bot
# Swiss run's) for 15-35 % less CPU.
REPLICA_PASSES = 1
# Rows updated at once: enough for numpy's loops to pay, few enough that
# the temporaries (about 60 floats a row at 4 seats) stay near 10 MB.
CHUNK_ROWS = 1 << 14
# (replica, pair) weights gathered at once in ``outcome_weights``: 16 MB.
PAIR_ROWS = 1 << 21


@dataclass(frozen=True)
class Fit:
    ratings: dict[str, Rating]
    draw_probability: float
    sweeps: int
    messages: list[Messages]      # to start replicas of the same games from (``solve``)
    # Per bucket, the outcome of each row of ``messages`` by the players'
    # names: a fit of other games that share outcomes starts from them (``fit(warm=)``).
    outcomes: tuple[tuple[Outcome, ...], ...] = ()


@dataclass
class _Bucket:
    """The distinct outcomes of the games of one table size: players in rank
    order and which neighbours tied.  Games with the same outcome are one
    factor counted as often as they occur (in a bootstrap replica: the sum of
    their groups' counts).  That is exact, not an approximation: identical
    factors that start alike get identical messages at every sweep, and it
    makes a Swiss tournament's hands, which repeat the same tables, several
    times cheaper to solve."""
    order: NDArray[np.int64]     # (U, k) player index by rank position
    draw: NDArray[np.bool_]      # (U, k-1) rank position j ties with j+1
    games: NDArray[np.int64]     # (G,) position of each game of this size in the problem
    outcome: NDArray[np.int64]   # (G,) the row of order/draw of each of those games
    # (G,) how many games each position stands for (``counted``: a match's equal hands
    # are one position); None: one each.
    times: NDArray[np.int64] | None = None


class Problem:
    """The games, indexed once, ready to be solved with any weights."""

    def __init__(self, games: Sequence[Game], players: Sequence[str] = ()) -> None:
        self.games = canonical(games)
        self.players = players_of(self.games, players)
        self.size = len(self.games)        # positions a row of weights has (``solve``)
        self.buckets = [b for c in encoded(self.games, self.players).values() if (b := c.bucket(len(c.members)))]

    @classmethod
    def counted(cls, players: Sequence[str], coded: Encoded, size: int) -> Problem:
        """The problem of games given as outcomes, not as ``Game``s
        (``arena.ranking.counted``): ``coded`` made by ``code``, each of its
        ``size`` positions standing for its ``times`` games.  No ``games``:
        what needs them (``draw_probability``, the groups) is given apart."""
        problem = cls.__new__(cls)
        problem.games = []
        problem.players = list(players)
        problem.size = size
        problem.buckets = [b for c in coded.values() if (b := c.bucket(len(c.members)))]
        return problem

    @classmethod
    def prefix(cls, games: Sequence[Game], players: Sequence[str], coded: Encoded, n: int) -> Problem:
        """The problem of ``games[:n]``, ``coded`` being ``encoded(games, players)``
        and ``players`` those of ``games[:n]`` too (``players_of``): the same
        buckets as ``Problem(games[:n], players)``, without encoding the games
        again.  Its games are in the order given, not the keys' (the weights,
        all one, and the outcomes' order do not depend on it)."""
        problem = cls.__new__(cls)
        problem.games = list(games[:n])
        problem.players = list(players)
        problem.size = n
        problem.buckets = [b for c in coded.values() if (b := c.bucket(int(np.searchsorted(c.members, n))))]
        return problem

    def outcomes(self) -> tuple[tuple[Outcome, ...], ...]:
        """Per bucket, each distinct outcome as (players by rank, ties): by
        name, as another problem's player indices differ."""
        return tuple(tuple((tuple(self.players[i] for i in order), tuple(bool(t) for t in draw))
                           for order, draw in zip(b.order.tolist(), b.draw.tolist()))
                     for b in self.buckets)


@dataclass
class _Coded:
    """The games of one table size: the position of each in the list
    (``members``), the distinct outcomes as rows (player index by rank
    position, then which neighbours tied), sorted as ``np.unique`` sorts
    them, and each game's row among them (``inverse``)."""
    k: int
    members: NDArray[np.int64]
    distinct: NDArray[np.int64]
    inverse: NDArray[np.int64]
    times: NDArray[np.int64] | None = None      # as ``_Bucket.times``

    def bucket(self, cut: int) -> _Bucket | None:
        """The bucket of the first ``cut`` games: the outcomes they have, in
        the same order (a subset of a sorted list is sorted), as if they
        alone had been encoded; None if there are none."""
        if cut <= 0:
            return None
        ids = self.inverse[:cut]
        if cut == len(self.members):
            present, outcome = np.arange(len(self.distinct)), ids
        else:
            present = np.unique(ids)
            outcome = np.searchsorted(present, ids)
        rows = self.distinct[present]
        return _Bucket(rows[:, :self.k], rows[:, self.k:].astype(bool), self.members[:cut], outcome,
                       None if self.times is None else self.times[:cut])


# Per table size (ascending), its games' outcomes.
Encoded = dict[int, _Coded]


def encoded(games: Sequence[Game], players: Sequence[str]) -> Encoded:
    """Each game of two seats or more as its outcome, by table size (see ``_Coded``)."""
    index = {p: i for i, p in enumerate(players)}
    by_size: dict[int, list[int]] = {}
    for n, g in enumerate(games):
        by_size.setdefault(len(g.players), []).append(n)
    out: Encoded = {}
    for k, members in sorted(by_size.items()):
        if k < 2:
            continue
        # The seats by rank, equal ranks in seat order (a stable sort), in numpy
        # for all the games at once: a loop of Python per game took 0.15 ms a
        # match.  A match's hands share their players' tuple, looked up once.
        seated: dict[int, list[int]] = {}
        who = np.array([seated.get(id(games[n].players)) or
                        seated.setdefault(id(games[n].players), [index[p] for p in games[n].players])
                        for n in members], dtype=np.int64).reshape(len(members), k)
        ranks = np.array([games[n].ranks for n in members], dtype=np.int64).reshape(len(members), k)
        out[k] = code(k, np.asarray(members, dtype=np.int64), who, ranks)
    return out


def code(k: int, members: NDArray[np.int64], who: NDArray[np.integer], ranks: NDArray[np.integer],
         times: NDArray[np.int64] | None = None) -> _Coded:
    """The games of table size ``k`` at positions ``members``: ``who`` (G, k)
    the player index of each seat, ``ranks`` (G, k) each seat's rank."""
    seats = np.argsort(ranks, axis=1, kind="stable")
    ranked = np.take_along_axis(ranks, seats, axis=1)
    # int32 while sorted (half the memory of a league's hands), the same order as int64's: indices are >= 0.
    rows = np.empty((len(members), 2 * k - 1), dtype=np.int32 if len(who) and who.max() < 2 ** 31 else np.int64)
    rows[:, :k] = np.take_along_axis(who, seats, axis=1)
    rows[:, k:] = ranked[:, :-1] == ranked[:, 1:]
    # np.unique sorts the outcomes, so their order is the data's, not the input's.
    distinct, inverse = np.unique(rows, axis=0, return_inverse=True)
    return _Coded(k, members, distinct.astype(np.int64), inverse.reshape(-1), times)


def fit(games: Sequence[Game], players: Sequence[str] = (), prior: Prior = Prior(),
        draw_p: float | None = None, warm: Fit | None = None) -> Fit:
    """Ratings of every player of ``games`` (and of ``players``, who keep the
    prior if they played no game).  ``warm``: a fit of similar games (of a
    shorter prefix of the same tournament): the outcomes they share start
    from its messages, so the fit takes fewer sweeps to the same tolerance
    (the same fixed point, to within that tolerance, not to the bit)."""
    return fit_problem(Problem(games, players), prior, draw_p, warm)


def fit_problem(problem: Problem, prior: Prior = Prior(), draw_p: float | None = None,
                warm: Fit | None = None, tolerance: float = FIT_TOLERANCE, named: bool = True) -> Fit:
    """``fit`` of a problem already made (``Problem.prefix``), solved to
    ``tolerance``; ``named``: with its outcomes by name (``Fit.outcomes``),
    which a bootstrap does not read (a league's page held 9 MB of them)."""
    p = draw_probability(problem.games) if draw_p is None else draw_p
    outcomes = problem.outcomes() if named or warm is not None else ()
    start = None if warm is None or not warm.outcomes else _carried(warm, problem, outcomes)
    mu, sigma, sweeps, messages = solve(problem, np.ones((1, problem.size), dtype=np.int64), prior, p,
                                        tolerance=tolerance, max_sweeps=FIT_SWEEPS, start=start)
    ratings = {name: Rating(float(mu[0, i]), float(sigma[0, i])) for i, name in enumerate(problem.players)}
    return Fit(ratings, p, sweeps, messages, outcomes)


def _carried(warm: Fit, problem: Problem, outcomes: tuple[tuple[Outcome, ...], ...]) -> list[Messages]:
    """Messages for ``problem``'s outcomes: ``warm``'s for those it had, none (zeros) for new ones."""
    known: dict[Outcome, tuple[int, int]] = {}
    for b, rows in enumerate(warm.outcomes):
        for r, key in enumerate(rows):
            known[key] = (b, r)
    start = []
    for bucket, keys in zip(problem.buckets, outcomes):
        k = bucket.order.shape[1]
        tau, rho = np.zeros((len(keys), k)), np.zeros((len(keys), k))
        d_tau, d_rho = np.zeros((len(keys), k - 1)), np.zeros((len(keys), k - 1))
        for r, key in enumerate(keys):
            at = known.get(key)
            if at is not None:
                old = warm.messages[at[0]]
                tau[r], rho[r], d_tau[r], d_rho[r] = (a[at[1]] for a in old)
        start.append((tau, rho, d_tau, d_rho))
    return start


def solve(problem: Problem, weights: NDArray[np.int64], prior: Prior, draw_p: float,
          tolerance: float = REPLICA_TOLERANCE, max_sweeps: int = REPLICA_SWEEPS,
          start: Sequence[Messages] | None = None,
          groups: NDArray[np.int64] | None = None,
          passes: int = PASSES) -> tuple[Array, Array, int, list[Messages]]:
    """Posterior (mu, sigma), each of shape (replicas, players), for every row
    of ``weights`` (replicas, games): how often each game counts; or, with
    ``groups`` (the column of ``weights`` of each game), (replicas, columns):
    how often each game of a column counts, as a bootstrap weighs every game
    of a duplicate group alike, without a (replicas, games) array.  Also the
    number of sweeps and each bucket's messages per outcome (of replica 0),
    which ``start`` takes to begin from them instead of from nothing; a
    started game refines its factors ``passes`` times a sweep.

    Only differences of skills are seen in games, so the common level of a
    field is set by the prior alone, and the messages settle it very slowly:
    convergence is judged on the differences, and each replica's ratings are
    then shifted so that its field (the players with games) averages the
    prior mean, as the exact posterior of equal priors does."""
    replicas, n_players = weights.shape[0], len(problem.players)
    eps = draw_margin(draw_p, prior.beta)
    states = [_State(b, outcome_weights(b, weights, groups), n_players, None if start is None else start[i], passes)
              for i, b in enumerate(problem.buckets)]
    shape = (replicas, n_players)
    played = np.zeros(replicas * n_players, dtype=bool)
    for s in states:
        played[s.slots.ravel()] = True
    played = played.reshape(shape)
    counted = np.maximum(played.sum(axis=1, keepdims=True), 1)
    level: Array = np.zeros(shape)
    sigma: Array = np.full(shape, prior.sigma)
    # Each replica stops on its own once its change is below the tolerance
    # (its rows leave the sweeps): it then gets what it would get solved
    # alone, and a replica that converges fast no longer waits for the
    # slowest of the batch, sweeping (and paying for) all its rows meanwhile.
    active = np.ones(replicas, dtype=bool)
    first: list[Messages] | None = None
    for sweep in range(1, max_sweeps + 1):
        mu, new_sigma, pi, eta = _posterior(states, shape, prior)
        # Centred on the players with games; those without keep the prior.
        centre = np.where(played, mu, 0.0).sum(axis=1, keepdims=True) / counted
        new_level = np.where(played & active[:, None], mu - centre, level)
        new_sigma = np.where(active[:, None], new_sigma, sigma)
        change = np.maximum(np.abs(new_level - level).max(axis=1), np.abs(new_sigma - sigma).max(axis=1))
        level, sigma = new_level, new_sigma
        if sweep > 1 and (done := active & (change < tolerance)).any():
            if done[0]:
                first = [s.messages() for s in states]
            active &= ~done
            if not active.any():
                break
            for s in states:
                s.keep(active)
        for s in states:
            s.update(pi, eta, prior.beta, eps)
    return prior.mu + level, sigma, sweep, first if first is not None else [s.messages() for s in states]


def _posterior(states: Sequence[_State], shape: tuple[int, int],
                    prior: Prior) -> tuple[Array, Array, Array, Array]:
    """Each player's posterior mean and sigma in each replica, (replicas,
    players), from the messages of every game; and the natural parameters
    (pi, eta), flat, that the games' updates take."""
    size = shape[0] * shape[1]
    pi = np.full(size, 1.0 / prior.sigma ** 2)
    eta = np.full(size, prior.mu / prior.sigma ** 2)
    for s in states:
        pi += np.bincount(s.slots.ravel(), (s.weight[:, None] * s.tau).ravel(), minlength=size)
        eta += np.bincount(s.slots.ravel(), (s.weight[:, None] * s.rho).ravel(), minlength=size)
    return (eta / pi).reshape(shape), np.sqrt(1.0 / pi).reshape(shape), pi, eta


def outcome_weights(bucket: _Bucket, weights: NDArray[np.int64],
                    groups: NDArray[np.int64] | None) -> NDArray[np.int64]:
    """(replicas, U): how often each outcome of ``bucket`` counts in each row
    of ``weights`` (per game, or per column of ``groups``; see ``solve``).

    The games are first merged into (column, outcome) pairs with a count, so
    that a bootstrap's work and memory here grow with the pairs, not with
    replicas x games: 200 replicas of 134,000 hands made two 214 MB arrays.
    The sums are of integers, so the order they are added in changes nothing."""
    column = bucket.games if groups is None else groups[bucket.games]
    n_out = len(bucket.order)
    if bucket.times is None:
        pairs, count = np.unique(column * n_out + bucket.outcome, return_counts=True)
    else:       # each position its games: the same sums of integers
        pairs, inverse = np.unique(column * n_out + bucket.outcome, return_inverse=True)
        count = np.zeros(len(pairs), dtype=np.int64)
        np.add.at(count, inverse.reshape(-1), bucket.times)
    col, out = pairs // n_out, pairs % n_out
    w = np.zeros((n_out, weights.shape[0]), dtype=np.int64)
    step = max(1, PAIR_ROWS // max(weights.shape[0], 1))
    for lo in range(0, len(pairs), step):
        np.add.at(w, out[lo:lo + step], (weights[:, col[lo:lo + step]] * count[lo:lo + step]).T)
    return w.T


# Per outcome of a bucket: outcome -> skill messages (tau, rho) and, within the
# game, factor -> difference messages (d_tau, d_rho).
Messages = tuple[Array, Array, Array, Array]


class _State:
    """Messages of the games of one bucket, for every replica that counts them."""

    def __init__(self, bucket: _Bucket, w: NDArray[np.int64], n_players: int,
                 start: Messages | None, passes: int = PASSES) -> None:
        rep, row = np.nonzero(w)                          # w (replicas, U): how often each outcome counts
        self.rep = rep
        self._first_games = row[rep == 0]
        self.weight = w[rep, row].astype(np.float64)
        self.slots = rep[:, None] * n_players + bucket.order[row]   # (R, k)
        self.draw = bucket.draw[row]
        self.first = rep == 0
        k = bucket.order.shape[1]
        self.games = len(bucket.order)
        if start is None:
            self.tau = np.zeros((len(row), k))
            self.rho = np.zeros((len(row), k))
            self.d_tau = np.zeros((len(row), k - 1))
            self.d_rho = np.zeros((len(row), k - 1))
            self.passes = FIRST_PASSES
        else:
            self.tau, self.rho, self.d_tau, self.d_rho = (a[row].copy() for a in start)
            self.passes = passes
        self.warm_passes = passes

    def keep(self, active: NDArray[np.bool_]) -> None:
        """Keep the rows of the ``active`` replicas only (the others are done)."""
        rows = active[self.rep]
        self.rep, self.weight, self.slots, self.draw, self.first = (
            self.rep[rows], self.weight[rows], self.slots[rows], self.draw[rows], self.first[rows])
        self.tau, self.rho, self.d_tau, self.d_rho = (
            self.tau[rows], self.rho[rows], self.d_tau[rows], self.d_rho[rows])

    def messages(self) -> Messages:
        """Replica 0's messages, one row per outcome of the bucket (zero where it has none)."""
        out = []
        for a in (self.tau, self.rho, self.d_tau, self.d_rho):
            full = np.zeros((self.games, a.shape[1]))
            full[self._first_games] = a[self.first]
            out.append(full)
        return out[0], out[1], out[2], out[3]

    def update(self, pi: Array, eta: Array, beta: float, eps: float) -> None:
        # Rows are independent within a sweep: a slice at a time keeps the
        # temporaries (several k x k matrices a row) to a bounded size
        # whatever the tournament's, and gives each row the same bits.
        for lo in range(0, len(self.weight), CHUNK_ROWS):
            _Rows(self, slice(lo, lo + CHUNK_ROWS)).update(pi, eta, beta, eps, self.passes)
        self.passes = self.warm_passes


class _Rows:
    """A slice of a bucket's rows: views into its arrays, updated in place."""

    __slots__ = ("slots", "tau", "rho", "d_tau", "d_rho", "draw", "drawn")

    def __init__(self, state: _State, rows: slice) -> None:
        self.slots, self.tau, self.rho = state.slots[rows], state.tau[rows], state.rho[rows]
        self.d_tau, self.d_rho, self.draw = state.d_tau[rows], state.d_rho[rows], state.draw[rows]
        # Ties are rare: their moments are worked out for their rows alone.
        self.drawn = [np.flatnonzero(self.draw[:, f]) for f in range(self.draw.shape[1])]

    def update(self, pi: Array, eta: Array, beta: float, eps: float, passes: int) -> None:
        cav_pi = pi[self.slots] - self.tau
        cav_eta = eta[self.slots] - self.rho
        m, v = cav_eta / cav_pi, 1.0 / cav_pi
        post_mean, post_var = self._tilted(m, v, beta, eps, passes)
        new_tau = np.maximum(1.0 / post_var - cav_pi, 0.0)
        new_rho = post_mean / post_var - cav_eta
        self.tau += DAMPING * (new_tau - self.tau)
        self.rho += DAMPING * (new_rho - self.rho)

    def _tilted(self, m: Array, v: Array, beta: float, eps: float, passes: int) -> tuple[Array, Array]:
        """Skill means and variances given the cavity ``N(m, v)`` and this game's outcome."""
        c = v + beta * beta                              # performance variances
        d_mean = m[:, :-1] - m[:, 1:]                    # prior of the differences
        s0 = np.zeros((len(m), m.shape[1] - 1, m.shape[1] - 1))
        j = np.arange(m.shape[1] - 1)
        s0[:, j, j] = c[:, :-1] + c[:, 1:]
        s0[:, j[:-1], j[:-1] + 1] = -c[:, 1:-1]
        s0[:, j[:-1] + 1, j[:-1]] = -c[:, 1:-1]
        s0_inv = inverse(s0)
        cov = inverse(s0_inv + _diag(self.d_tau))
        mean = np.einsum("rij,rj->ri", cov, np.einsum("rij,rj->ri", s0_inv, d_mean) + self.d_rho)
        for _ in range(passes):
            for f in j:
                mean, cov = self._refine(f, mean, cov, eps)
        # Back from the differences to the performances, then to the skills.
        c_dt = np.zeros((len(m), m.shape[1], m.shape[1] - 1))
        c_dt[:, j, j] = c[:, :-1]
        c_dt[:, j + 1, j] = -c[:, 1:]
        gain = c_dt @ s0_inv
        x_mean = m + np.einsum("rij,rj->ri", gain, mean - d_mean)
        # diag(gain (s0 - cov) gain^T): one product, then a row-wise dot (a
        # three-operand einsum loops in C over all of them: twice the CPU).
        x_var = c - np.einsum("rij,rij->ri", gain @ (s0 - cov), gain)
        shrink = v / c
        return m + shrink * (x_mean - m), v - shrink * shrink * (c - x_var)

    def _refine(self, f: int, mean: Array, cov: Array, eps: float) -> tuple[Array, Array]:
        """One EP step of the factor on difference ``f``."""
        var_f = cov[:, f, f]
        cav_pi = np.maximum(1.0 / var_f - self.d_tau[:, f], 1e-12)
        cav_m = (mean[:, f] / var_f - self.d_rho[:, f]) / cav_pi
        e = np.full(len(cav_m), eps)
        new_m, new_v = win_moments(cav_m, 1.0 / cav_pi, e)
        tied = self.drawn[f]
        if len(tied):
            new_m[tied], new_v[tied] = draw_moments(cav_m[tied], 1.0 / cav_pi[tied], e[tied])
        tau = np.maximum(1.0 / new_v - cav_pi, 0.0)
        rho = new_m / new_v - cav_pi * cav_m
        dt, dr = tau - self.d_tau[:, f], rho - self.d_rho[:, f]
        self.d_tau[:, f], self.d_rho[:, f] = tau, rho
        denom = 1.0 + dt * var_f
        col = cov[:, :, f]
        mean = mean + col * ((dr - dt * mean[:, f]) / denom)[:, None]
        cov = cov - (dt / denom)[:, None, None] * col[:, :, None] * col[:, None, :]
        return mean, cov


def inverse(a: Array) -> Array:
    """The inverse of each matrix of ``a`` (..., n, n): by cofactors up to
    3 x 3 (tables of up to 4 seats), ``np.linalg.inv`` beyond.  For the
    small symmetric positive definite matrices here the cofactors agree with
    LAPACK to about 1e-12 and take a seventh of its time, which calls LAPACK
    once per matrix: the inversions were a third of the bootstrap's CPU."""
    n = a.shape[-1]
    if n > 3:
        return cast(Array, np.linalg.inv(a))      # numpy types inv loosely
    if n == 1:
        return 1.0 / a
    m = [[a[..., i, j] for j in range(n)] for i in range(n)]
    if n == 2:
        cof = [[m[1][1], -m[1][0]], [-m[0][1], m[0][0]]]
    else:
        def minor(i: int, j: int) -> Array:
            r, c = [x for x in range(3) if x != i], [x for x in range(3) if x != j]
            return m[r[0]][c[0]] * m[r[1]][c[1]] - m[r[0]][c[1]] * m[r[1]][c[0]]
        cof = [[minor(i, j) if (i + j) % 2 == 0 else -minor(i, j) for j in range(3)] for i in range(3)]
    det = sum(m[0][j] * cof[0][j] for j in range(n))
    out = np.empty_like(a)
    for i in range(n):
        for j in range(n):
            out[..., j, i] = cof[i][j] / det          # the adjugate is the cofactors transposed
    return out


def _diag(values: Array) -> Array:
    out = np.zeros((*values.shape, values.shape[-1]))
    idx = np.arange(values.shape[-1])
    out[..., idx, idx] = values
    return out
