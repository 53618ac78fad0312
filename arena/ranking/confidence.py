"""How sure the ranking is: bootstrap intervals, separated ranks, pairwise tests.

The games of a tournament are not independent: the rotations of one
duplicate deal share their cards.  So the bootstrap resamples whole
duplicate groups, from all the groups of the tournament (resampling within a
table would give zero-width intervals when a table has one deal), refits
the ratings on each replica, and reads the spread of the replicas.

Two players are *separated* when the ``confidence`` interval of the
difference of their ratings excludes zero, the interval being the normal one
with the standard deviation of that difference over the replicas: the
difference is at least ``z`` standard deviations, ``z`` the two-sided
quantile (1.96 at 95 %).  With few duplicate groups the bootstrap's spread is too small (it
resamples only what was seen), so, as cluster-robust statistics do, the
spread is scaled by sqrt(G / (G - 1)) and ``z`` becomes Student's t with
G - 1 degrees of freedom (3.18 instead of 1.96 for 4 groups; the same
factor widens the percentile intervals).  The factor is at least
``DESIGN_EFFECT`` (1.08), measured: the replicas' spread is short by about
that much in larger tournaments, against the spread between tournaments.  Fewer than ``MIN_GROUPS`` groups
give no interval at all.  (Counting the replicas in which the upper bot is ahead would need
thousands of replicas for the stricter levels a stopping rule uses.)

Every pair is compared on its own, from the same replicas.  A player's rank
range runs from 1 + the number of players separated from it above to N - the
number separated from it below ("2-4": one is clearly better, N - 4 clearly
worse); ranges of neighbours overlap without being equal.  (Chaining
unseparated neighbours instead would give 1-8 to a whole field of eight in
which only the neighbours' differences are unclear.)  The stopping rule and
the Swiss pairing use the adjacent pairs (``separated``): every adjacent pair
separated is the same as every range a single rank, since a pair's margin is
at least the smallest margin of the adjacent pairs between them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import NormalDist

import numpy as np

from .counted import Counted
from .games import Game
from .model import FIT_TOLERANCE, draw_probability, shrunk_draw_rate
from .trueskill_batch import REPLICA_PASSES, REPLICA_TOLERANCE, Prior, Problem, code, fit_problem, solve

__all__ = ["Assessment", "Resampled", "Row", "assess", "assess_counted", "assess_problem", "rank_ranges", "sign_test"]

REPLICAS = 200
REPLICA_ROWS = 1 << 18  # (replica, outcome) rows solved at once (see _replicas): about 40 MB
MIN_GROUPS = 4      # the t quantile below is accurate from 3 degrees of freedom
#: The bootstrap sees one tournament, and it says too little: over 40
#: tournaments of a graded field of 6 listed in shuffled orders, the fitted
#: mu varied 1.09-1.10 times as much from tournament to tournament as the
#: replicas said at 240-360 matches (0.95-1.01 at 60-120; by hands;
#: benchmarks/ranking.py --shuffle).  What it misses is not known (not the
#: solver: replicas solved to 1e-6 give the same spread), so the spread is
#: widened by at least this much, or by the small-sample factor where that is
#: larger (below about 25 duplicate groups at 95 %, 40 at 99.5 %).
DESIGN_EFFECT = 1.08
#: A pair's difference is short by more than each rating: two copies of one
#: program at tables of 4 (5 bots, 120 matches, balanced seating, 243 seeds;
#: benchmarks/fairness.py) gave a pair statistic whose r.m.s. was 1.08 (0.99-1.19)
#: with DESIGN_EFFECT alone, and so were "separated" in 7.4 % of seeds at 95 %.
#: Every pair test (rank ranges, apart_from_next, the stopping rule, Swiss
#: pairing) is widened by this much more; the intervals shown are not.
PAIR_EFFECT = 1.08


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
    margins: list[float]                # order[i] - order[i + 1] in standard deviations of the replicas
    confidence: float
    replicas: int
    draw_probability: float
    groups: int | None = None           # duplicate groups resampled (None: as many as a normal law needs)
    # pair_margins[i][j], i < j: order[i] - order[j] in standard deviations of
    # the replicas' difference, for every pair (symmetric; margins is the
    # diagonal next to the main one).  Empty: only the adjacent margins are
    # known (see pair_margin).
    pair_margins: list[list[float]] = field(default_factory=list)

    @property
    def separated(self) -> list[bool]:
        """For each adjacent pair, whether it is separated at ``confidence``."""
        return self.separated_at(self.confidence)

    def separated_at(self, confidence: float) -> list[bool]:
        z = self.needed(confidence)
        return [m >= z for m in self.margins]

    def needed(self, confidence: float) -> float:
        """The margin a pair needs to be separated at ``confidence``."""
        return pair_critical(confidence, self.groups)

    @property
    def settled(self) -> bool:
        return all(self.separated)

    @property
    def unsettled(self) -> int:
        """Adjacent pairs not yet separated."""
        return sum(not s for s in self.separated)

    def pair_margin(self, i: int, j: int) -> float:
        """The margin of ``order[i]`` over ``order[j]`` (``i < j``).  Without
        ``pair_margins``, the smallest adjacent margin between them: a lower
        bound of it (the gaps add up, and the spread of a sum is at most the
        sum of the spreads)."""
        if self.pair_margins:
            return self.pair_margins[i][j]
        return min(self.margins[i:j])

    def pair_separated(self) -> list[list[bool]]:
        """``[i][j]``: whether ``order[i]`` and ``order[j]`` are separated at ``confidence``."""
        z = self.needed(self.confidence)
        n = len(self.order)
        return [[i != j and self.pair_margin(min(i, j), max(i, j)) >= z for j in range(n)] for i in range(n)]

    def rank_ranges(self) -> list[tuple[int, int]]:
        """For each position of ``order``, the ranks (1-based) it could hold (``rank_ranges``)."""
        return rank_ranges(self.pair_separated())

    def rank_range(self, name: str) -> tuple[int, int]:
        """The ranks (1-based) ``name`` could hold: from 1 + the players
        separated from it above to N - the players separated from it below."""
        return self.rank_ranges()[self.order.index(name)]


def critical(confidence: float, groups: int | None) -> float:
    """How many of the replicas' standard deviations a difference must be to
    be clear at ``confidence`` with ``groups`` duplicate groups: the t
    quantile with groups - 1 degrees of freedom times sqrt(G / (G - 1)), and
    at least ``DESIGN_EFFECT`` times the normal quantile."""
    z = NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)
    if groups is None:
        return z
    if groups < MIN_GROUPS:
        return math.inf
    return max(_t_quantile(z, groups - 1) * math.sqrt(groups / (groups - 1)), DESIGN_EFFECT * z)


def pair_critical(confidence: float, groups: int | None) -> float:
    """``critical``, for the difference of two players: widened by ``PAIR_EFFECT``
    where the bootstrap's spread is corrected at all (``groups`` known)."""
    z = critical(confidence, groups)
    return z if groups is None else z * PAIR_EFFECT


def _t_quantile(z: float, dof: int) -> float:
    """Student's t quantile from the normal one ``z`` (the Cornish-Fisher
    expansion of Abramowitz and Stegun 26.7.5: within 0.01 of the exact value
    from 3 degrees of freedom at 95 %, and from 5 at 99.75 %, the stopping
    rule's level; with 3 or 4 there it errs on the wide side)."""
    v = float(dof)
    z2 = z * z
    return z * (1.0 + (z2 + 1) / (4 * v) + ((5 * z2 + 16) * z2 + 3) / (96 * v ** 2)
                + (((3 * z2 + 19) * z2 + 17) * z2 - 15) / (384 * v ** 3)
                + ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) / (92160 * v ** 4))


def rank_ranges(separated: Sequence[Sequence[bool]]) -> list[tuple[int, int]]:
    """For each position of an order (best first), given which pairs are
    separated (``separated[i][j]``, symmetric), the first and last rank it
    could hold: 1 + the players above it separated from it, N - the players
    below it separated from it."""
    n = len(separated)
    return [(1 + sum(1 for j in range(i) if separated[j][i]),
             n - sum(1 for j in range(i + 1, n) if separated[i][j])) for i in range(n)]


def assess(games: Sequence[Game], players: Sequence[str] = (), confidence: float = 0.95,
           replicas: int | None = None, seed: int = 0, prior: Prior = Prior(),
           tolerance: float | None = None) -> Assessment:
    """Ratings, their intervals and which pairs are separated, from
    ``replicas`` bootstrap replicas (None: ``REPLICAS``), each solved to
    ``tolerance`` (None: ``REPLICA_TOLERANCE``; the fit they start from,
    to a tenth of a looser one: its ratings' error stays well below the
    replicas' own)."""
    problem = Problem(games, players)          # once: indexing 200,000 hands takes a few CPU-s
    names = sorted({g.group for g in problem.games})
    index = {g: i for i, g in enumerate(names)}
    of_game = np.array([index[g.group] for g in problem.games], dtype=np.int64)
    seen = {p for g in problem.games for p in g.players}
    return assess_problem(problem, Resampled(of_game, len(names), seen, draw_probability(problem.games)),
                          confidence, replicas, seed, prior, tolerance)


def assess_counted(counted: Counted, players: Sequence[str] = (), confidence: float = 0.95,
                   replicas: int | None = None, seed: int = 0, prior: Prior = Prior(),
                   tolerance: float | None = None) -> Assessment:
    """``assess`` of the games ``counted`` keeps: the same numbers, without the games."""
    names = sorted(set(counted.players) | set(players))
    index = {n: i for i, n in enumerate(names)}
    remap = np.array([index[n] for n in counted.players], dtype=np.int32)
    group_names = list(counted.groups)
    rank_of = np.empty(len(group_names), dtype=np.int64)    # a group's index among the names sorted
    rank_of[np.array(sorted(range(len(group_names)), key=group_names.__getitem__), dtype=np.int64)] = \
        np.arange(len(group_names))
    coded, of_game, size = {}, [], 0
    for k in sorted(counted.who):
        who = remap[np.frombuffer(counted.who[k], dtype=np.int32).reshape(-1, k)]
        ranks = np.frombuffer(counted.ranks[k], dtype=np.int8).reshape(-1, k)
        members = np.arange(size, size + len(who), dtype=np.int64)
        coded[k] = code(k, members, who, ranks, np.frombuffer(counted.times[k], dtype=np.int32).astype(np.int64))
        of_game.append(rank_of[np.frombuffer(counted.group[k], dtype=np.int32)])
        size += len(who)
    problem = Problem.counted(names, coded, size)
    resampled = Resampled(np.concatenate(of_game) if of_game else np.zeros(0, dtype=np.int64), len(group_names),
                          set(counted.players), shrunk_draw_rate(counted.ties, counted.pairs))
    return assess_problem(problem, resampled, confidence, replicas, seed, prior, tolerance)


@dataclass(frozen=True)
class Resampled:
    """What the bootstrap of a problem needs besides its outcomes: each
    position's duplicate group (an index into the groups' names sorted), how
    many groups, the players with a game, and the draw probability."""
    of_game: np.ndarray
    groups: int
    seen: set[str]
    draw_probability: float


def assess_problem(problem: Problem, resampled: Resampled, confidence: float = 0.95,
                   replicas: int | None = None, seed: int = 0, prior: Prior = Prior(),
                   tolerance: float | None = None) -> Assessment:
    """``assess`` of games already indexed (``Problem``, or ``counted``'s)."""
    replicas = REPLICAS if replicas is None else replicas
    if not 0.5 < confidence < 1.0:
        raise ValueError(f"confidence must be between 0.5 and 1, got {confidence}")
    full = fit_problem(problem, prior, resampled.draw_probability,
                       tolerance=FIT_TOLERANCE if tolerance is None else max(FIT_TOLERANCE, tolerance / 10),
                       named=False)
    # Players without a game have no rating to speak of: after the others.
    order = sorted(full.ratings, key=lambda n: (n not in resampled.seen, -full.ratings[n].mu, n))
    alpha = 1.0 - confidence
    groups = resampled.groups
    mus = _replicas(problem, resampled, replicas, seed, prior, full.draw_probability, full.messages,
                    REPLICA_TOLERANCE if tolerance is None else tolerance)
    if mus is None or groups < MIN_GROUPS:     # too little to resample: no interval is honest but "unknown"
        rows = {n: Row(n, r.mu, r.sigma, -math.inf, math.inf) for n, r in full.ratings.items()}
        return Assessment(order, rows, [0.0] * (len(order) - 1), confidence, 0, full.draw_probability, groups,
                          [[0.0] * len(order) for _ in order])
    col = {n: i for i, n in enumerate(problem.players)}
    low, high = np.quantile(mus, [alpha / 2, 1 - alpha / 2], axis=0)
    widen = critical(confidence, groups) / critical(confidence, None)
    rows = {}
    for n, r in full.ratings.items():
        lo, hi = float(low[col[n]]), float(high[col[n]])
        rows[n] = Row(n, r.mu, r.sigma, r.mu - widen * max(r.mu - lo, 0.0), r.mu + widen * max(hi - r.mu, 0.0))
    pair = [[0.0] * len(order) for _ in order]
    for i, a in enumerate(order):
        for j in range(i + 1, len(order)):
            b = order[j]
            gap = full.ratings[a].mu - full.ratings[b].mu
            spread = float(np.std(mus[:, col[a]] - mus[:, col[b]]))
            pair[i][j] = pair[j][i] = gap / spread if spread > 0 else (math.inf if gap > 0 else 0.0)
    margins = [pair[i][i + 1] for i in range(len(order) - 1)]
    return Assessment(order, rows, margins, confidence, replicas, full.draw_probability, groups, pair)


def _replicas(problem: Problem, resampled: Resampled, replicas: int, seed: int, prior: Prior, draw_p: float,
              start: list, tolerance: float) -> np.ndarray | None:
    """The mu of every player in each bootstrap replica, (replicas, players)."""
    n_groups = resampled.groups
    if n_groups < 2 or replicas < 1:
        return None
    rng = np.random.default_rng(seed)
    # Solved a batch of replicas at a time, each batch to its own convergence:
    # the rows (replica, outcome) of all of them at once grow with the
    # tournament (about 150 bytes each); a batch's stay near REPLICA_ROWS.
    outcomes = sum(len(b.order) for b in problem.buckets)
    batch = max(1, REPLICA_ROWS // max(outcomes, 1))
    mus = []
    for lo in range(0, replicas, batch):
        # Each batch's picks drawn when it is solved: the same numbers as all
        # of them drawn at once (the generator's stream is read in order),
        # without (replicas, groups) arrays, which grew with a league's tables.
        picks = rng.integers(0, n_groups, size=(min(batch, replicas - lo), n_groups))
        counts = np.stack([np.bincount(row, minlength=n_groups) for row in picks]).astype(np.int64)
        mus.append(solve(problem, counts, prior, draw_p, tolerance, start=start, groups=resampled.of_game,
                         passes=REPLICA_PASSES)[0])
    return np.concatenate(mus)


def sign_test(ahead: int, behind: int) -> float:
    """Two-sided p-value of an exact sign test: ``ahead`` against ``behind``
    (ties left out), if neither side were better."""
    n = ahead + behind
    if n == 0:
        return 1.0
    k = min(ahead, behind)
    total, term = 0, 1                  # term: comb(n, i), exactly
    for i in range(k + 1):
        total += term
        term = term * (n - i) // (i + 1)
    # 2.0 ** n overflows a float from n = 1,024 (two bots of a 20,000-match
    # tournament share 3,000 duplicate deals): there the integers' own
    # division, correctly rounded; below it the same bits as ever.
    tail = total / 2.0 ** n if n < 1024 else total / (1 << n)
    return min(1.0, 2.0 * tail)
