"""The yardsticks: reference ratings for the coverage of intervals, and a check of the field itself.

Reference: the seeds are split in two halves (alternate seeds); a seed's
intervals are judged against the batch-TrueSkill mu fitted on all the
round-robin matches of the *other* half pooled, so a seed's own games never
enter its reference.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean, stdev

from arena.ranking import Game, fit

from .graded import Field
from .methods import hand_games, match_games
from .simulate import MatchRecord

Pool = Mapping[int, Sequence[MatchRecord]]      # seed -> its round-robin matches


def pooled_games(pool: Pool, seeds: Sequence[int], games: Callable[..., list[Game]]) -> list[Game]:
    return [g for s in seeds for g in games(pool[s], prefix=f"s{s}/")]


def references(field: Field, pool: Pool, level: str) -> dict[int, dict[str, float]] | None:
    """Each seed's reference mu per bot (``level`` "match" or "hand"); None with fewer than two seeds."""
    seeds = sorted(pool)
    if len(seeds) < 2:
        return None
    games = match_games if level == "match" else hand_games
    halves = (seeds[0::2], seeds[1::2])
    fitted = [fit(pooled_games(pool, half, games), field.names).ratings for half in halves]
    return {s: {b: fitted[1 - i][b].mu for b in field.names} for i, half in enumerate(halves) for s in half}


@dataclass(frozen=True)
class BotCheck:
    name: str
    p: float
    mean_place: float
    place_se: float           # standard error over seeds (seeds are independent tournaments)
    score_per_hand: float
    score_se: float
    mu: float                 # batch TrueSkill on every seed's matches pooled


@dataclass(frozen=True)
class FieldCheck:
    bots: list[BotCheck]
    place_z: list[float]      # neighbours i, i+1: mean place difference over its standard error
    matches: int

    @property
    def monotone(self) -> bool:
        return all(a.mean_place < b.mean_place for a, b in zip(self.bots, self.bots[1:]))


def _per_seed(pool: Pool, bot: str, value: Callable[[MatchRecord, int], tuple[float, int]]) -> list[float]:
    out = []
    for records in pool.values():
        total = count = 0.0
        for r in records:
            if bot in r.seats:
                v, n = value(r, r.seats.index(bot))
                total, count = total + v, count + n
        out.append(total / count)
    return out


def _mean_se(xs: list[float]) -> tuple[float, float]:
    return fmean(xs), (stdev(xs) / math.sqrt(len(xs)) if len(xs) > 1 else math.nan)


def check_field(field: Field, pool: Pool) -> FieldCheck:
    """Is the true order true? Mean place and score per hand per bot, with standard errors over seeds."""
    ratings = fit(pooled_games(pool, sorted(pool), match_games), field.names).ratings
    places = {b: _per_seed(pool, b, lambda r, s: (r.places[s], 1)) for b in field.names}
    bots = []
    for b in field.names:
        mp, mp_se = _mean_se(places[b])
        sph, sph_se = _mean_se(_per_seed(pool, b, lambda r, s: (r.totals[s], len(r.hand_scores))))
        bots.append(BotCheck(b, field.p_of(b), mp, mp_se, sph, sph_se, ratings[b].mu))
    z = []
    for a, b in zip(field.names, field.names[1:]):
        diff, se = _mean_se([y - x for x, y in zip(places[a], places[b])])
        z.append(diff / se if se and se > 0 else math.inf)
    return FieldCheck(bots, z, sum(len(r) for r in pool.values()))
