"""Ranking methods: each turns the matches played so far into an order of the bots.

Every method gives a *score* per bot, lower is better, and an order sorted by
it.  The TrueSkill methods also give an assessment (95 % intervals, which
adjacent pairs are separated) from ``arena.ranking.assess``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from arena.ranking import Game, assess, confidence, fit, trueskill_batch
from arena.tournament.results.rows import StoredMatch
from arena.tournament.standings.ratings import conservative, rate

from .simulate import MatchRecord

_replica_tolerance: float | None = None


def set_replica_tolerance(tolerance: float | None) -> None:
    """Solve assess's bootstrap replicas to ``tolerance`` instead of arena's default (trueskill_batch.REPLICA_TOLERANCE).

    At 1e-6 (and still at 1e-5 on Swiss data) a few weighted replicas creep,
    changing by ~1e-5 a sweep for 50-300 sweeps where the rest need about 10,
    and all replicas are solved together: one assess of 100-240 games takes
    8-15 CPU-s instead of about 1.  Measured on this benchmark's games
    (round robin and Swiss, match and hand level, 27 assessments): 1e-3 moves
    interval bounds by at most 0.11 mu (intervals are 2-5 wide) and changed no
    separated pair; 1e-5 moves them by under 0.001.  The fit itself (the point
    estimates) is untouched.  None: arena's code as is.
    """
    global _replica_tolerance
    _replica_tolerance = tolerance
    # assess's default, read at each call (a quick Swiss look passes its own)
    confidence.REPLICA_TOLERANCE = trueskill_batch.REPLICA_TOLERANCE if tolerance is None else tolerance  # type: ignore


def assess_source() -> str:
    tol = "default" if _replica_tolerance is None else f"{_replica_tolerance:g}"
    return f"arena.ranking.assess with small-sample t (replica tolerance {tol})"


@dataclass(frozen=True)
class Interval:
    mu: float
    low: float
    high: float


@dataclass(frozen=True)
class Estimate:
    """One method's view of the bots: ``score`` (lower is better) and, for
    TrueSkill with a bootstrap, the intervals and whether it is settled."""

    score: dict[str, float]
    intervals: dict[str, Interval] | None = None
    settled: bool | None = None
    order: tuple[str, ...] | None = None     # the assessment's own order, if any

    def ranked(self) -> tuple[str, ...]:
        return self.order or tuple(sorted(self.score, key=lambda b: (self.score[b], b)))


def dense_ranks(values: Sequence[float]) -> tuple[int, ...]:
    """0 for the lowest value, equal values share a rank, no gaps."""
    levels = sorted(set(values))
    return tuple(levels.index(v) for v in values)


def match_games(records: Sequence[MatchRecord], prefix: str = "") -> list[Game]:
    """One game per match, ranked by place; ``prefix`` keeps keys and groups of pooled seeds apart."""
    return [Game(r.seats, dense_ranks(r.places), prefix + r.group, prefix + r.match_id) for r in records]


def hand_games(records: Sequence[MatchRecord], prefix: str = "") -> list[Game]:
    """One game per hand, ranked by the hand's scores (lower better), in the match's duplicate group."""
    return [Game(r.seats, dense_ranks(h), prefix + r.group, f"{prefix}{r.match_id}-h{i:02d}")
            for r in records for i, h in enumerate(r.hand_scores)]


def _averages(records: Sequence[MatchRecord], value: Callable[[MatchRecord, int], tuple[float, int]]
              ) -> dict[str, float]:
    total: dict[str, float] = {}
    count: dict[str, int] = {}
    for r in records:
        for seat, bot in enumerate(r.seats):
            v, n = value(r, seat)
            total[bot] = total.get(bot, 0.0) + v
            count[bot] = count.get(bot, 0) + n
    return {b: total[b] / count[b] for b in total}


def mean_place(records: Sequence[MatchRecord], bots: Sequence[str], **_: object) -> Estimate:
    return Estimate(_averages(records, lambda r, s: (r.places[s], 1)))


def score_per_hand(records: Sequence[MatchRecord], bots: Sequence[str], **_: object) -> Estimate:
    return Estimate(_averages(records, lambda r, s: (r.totals[s], len(r.hand_scores))))


def _assessed(games: list[Game], bots: Sequence[str], replicas: int, seed: int) -> Estimate:
    a = assess(games, bots, confidence=0.95, replicas=replicas, seed=seed)
    rows = {b: Interval(a.rows[b].mu, a.rows[b].low, a.rows[b].high) for b in bots}
    return Estimate({b: -rows[b].mu for b in bots}, rows, a.settled, tuple(a.order))


def _fitted(games: list[Game], bots: Sequence[str]) -> Estimate:
    ratings = fit(games, bots).ratings
    return Estimate({b: -ratings[b].mu for b in bots})


def trueskill_match(records: Sequence[MatchRecord], bots: Sequence[str], replicas: int = 0,
                    seed: int = 0) -> Estimate:
    games = match_games(records)
    return _assessed(games, bots, replicas, seed) if replicas else _fitted(games, bots)


def trueskill_hand(records: Sequence[MatchRecord], bots: Sequence[str], replicas: int = 0,
                   seed: int = 0) -> Estimate:
    games = hand_games(records)
    return _assessed(games, bots, replicas, seed) if replicas else _fitted(games, bots)


def sequential_trueskill(records: Sequence[MatchRecord], bots: Sequence[str], **_: object) -> Estimate:
    """arena's current leaderboard: sequential TrueSkill with drift, in the order given, by mu - 3 sigma."""
    stored = [StoredMatch(match_id=r.match_id, schedule_index=i, table=r.table, rotation=r.rotation,
                          deal=r.deal, seed=0, bots=list(r.seats), totals=list(r.totals),
                          places=list(r.places), forfeited=[False] * len(r.seats),
                          hand_scores=[list(h) for h in r.hand_scores], hand_winners=[None] * len(r.hand_scores))
              for i, r in enumerate(records)]
    ratings = rate(stored, bots=bots)
    return Estimate({b: -conservative(ratings[b]) for b in bots})


Method = Callable[..., Estimate]

#: Name -> (method, has intervals).
METHODS: dict[str, tuple[Method, bool]] = {
    "trueskill-match": (trueskill_match, True),
    "trueskill-hand": (trueskill_hand, True),
    "mean-place": (mean_place, False),
    "score-per-hand": (score_per_hand, False),
    "sequential-trueskill": (sequential_trueskill, False),
}
