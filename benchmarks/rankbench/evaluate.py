"""Judging the methods: per seed at every checkpoint, then over seeds.

The functions at the top are pure (hand-made inputs in tests/test_ranking_benchmark.py).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import methods
from .formats import Format, Played, Stop
from .graded import Field
from .methods import METHODS
from .simulate import MatchRecord, Memo, Simulator

Curve = Sequence[tuple[int, float]]      # (matches, fraction of seeds), increasing matches


def exactly_right(score: Mapping[str, float], truth: Sequence[str]) -> bool:
    """Every bot scored and strictly better (lower) than the next one of the true order: a tie is wrong."""
    if any(b not in score for b in truth):
        return False
    return all(score[a] < score[b] for a, b in zip(truth, truth[1:]))


def matches_until(curve: Curve, target: float = 0.95) -> int | None:
    """The first checkpoint at which at least ``target`` of the seeds are right (None: never)."""
    return next((m for m, f in curve if f >= target), None)


def matches_until_stays(curve: Curve, target: float = 0.95) -> int | None:
    """The first checkpoint from which on every checkpoint has at least ``target`` right (None: not at the last)."""
    found = None
    for m, f in curve:
        if f < target:
            found = None
        elif found is None:
            found = m
    return found


def covered(intervals: Mapping[str, tuple[float, float]], reference: Mapping[str, float]) -> tuple[int, int]:
    """(intervals containing the reference value, intervals) over the bots of ``reference``."""
    hits = sum(1 for b, mu in reference.items() if intervals[b][0] <= mu <= intervals[b][1])
    return hits, len(reference)


@dataclass(frozen=True)
class SeedPoint:
    """One seed, one format, one checkpoint: what each method got."""

    format: str
    matches: int
    right: dict[str, bool]
    settled: dict[str, bool]                                  # methods with intervals only
    settled_right: dict[str, bool]
    intervals: dict[str, dict[str, tuple[float, float]]]      # method -> bot -> (low, high)


@dataclass(frozen=True)
class SeedStop:
    """Where arena's settling run of one seed stopped, and whether its order was then exactly right."""

    format: str
    reason: str
    matches: int
    right: bool


@dataclass(frozen=True)
class SeedResult:
    seed: int
    points: list[SeedPoint]
    stops: list[SeedStop]
    played: int                  # matches played now (the rest came from the cache)
    play_cpu: float
    eval_cpu: float
    final: dict[str, list[MatchRecord]] = field(default_factory=dict)   # format -> every match it played


def _judged_key(fmt: Format, matches: int, records: int, replicas: int) -> str:
    # ``records`` < ``matches`` when the run stopped before: its final matches are judged.
    return "/".join([fmt.name, getattr(fmt, "rating", ""), str(matches), str(records), str(replicas),
                     methods.assess_source()])


def run_seed(field: Field, seed: int, formats: Sequence[Format], cache: Path | None,
             replicas: int, keep_judged: bool = False) -> SeedResult:
    """Play (or load) every format's matches for one tournament seed and judge every method."""
    sim = Simulator(field, seed, cache)
    # Judgements and the settling runs' assessments go stale when arena.ranking changes: opt-in.
    memo = Memo(sim.dir / f"judged-seed{seed}.jsonl" if keep_judged and sim.dir is not None else None)
    truth = field.truth
    points, stops = [], []
    final: dict[str, list[MatchRecord]] = {}
    eval_cpu = 0.0
    for fmt in formats:
        for event in fmt.run(sim, memo):
            if isinstance(event, Played):
                final[fmt.name] = event.records
                continue
            if isinstance(event, Stop):
                stops.append(SeedStop(fmt.name, event.reason, event.matches, event.order == truth))
                continue
            matches, records = event.matches, event.records
            key = _judged_key(fmt, matches, len(records), replicas)
            known = memo.get(key)
            if known is not None:
                points.append(SeedPoint(**known))
                continue
            start = time.process_time()
            right, settled, settled_right, intervals = {}, {}, {}, {}
            for name, (method, has_intervals) in METHODS.items():
                est = method(records, field.names, replicas=replicas if has_intervals else 0, seed=seed)
                right[name] = exactly_right(est.score, truth)
                if est.intervals is not None and est.settled is not None:
                    settled[name] = est.settled
                    settled_right[name] = est.settled and est.ranked() == truth
                    intervals[name] = {b: (iv.low, iv.high) for b, iv in est.intervals.items()}
            eval_cpu += time.process_time() - start
            points.append(SeedPoint(fmt.name, matches, right, settled, settled_right, intervals))
            memo.put(key, asdict(points[-1]))
    return SeedResult(seed, points, stops, sim.played, sim.cpu_seconds, eval_cpu, final)


@dataclass(frozen=True)
class Summary:
    """Over seeds, for one format and method, per checkpoint."""

    matches: list[int]
    right: list[float]
    settled: list[float] | None = None
    settled_right: list[float | None] | None = None       # among the settled seeds
    coverage: list[float] | None = None                    # against the round robin's pooled mu
    coverage_own: list[float] | None = None                # against this format's own pooled mu

    @property
    def until(self) -> int | None:
        return matches_until(list(zip(self.matches, self.right)))

    @property
    def until_stays(self) -> int | None:
        return matches_until_stays(list(zip(self.matches, self.right)))


Refs = Mapping[int, Mapping[str, float]]


def _coverage(pts: Sequence[tuple[int, SeedPoint]], method: str, refs: Refs) -> float:
    hits = total = 0
    for seed, p in pts:
        h, t = covered(p.intervals[method], refs[seed])
        hits, total = hits + h, total + t
    return hits / total


def summarise(results: Sequence[SeedResult], fmt: str, method: str,
              references: Refs | None, own_references: Refs | None = None) -> Summary:
    """``references[seed]``: each bot's reference mu for that seed's intervals (None: no coverage);
    ``own_references`` likewise, from this format's own matches."""
    by_matches: dict[int, list[tuple[int, SeedPoint]]] = {}
    for res in results:
        for p in res.points:
            if p.format == fmt:
                by_matches.setdefault(p.matches, []).append((res.seed, p))
    matches = sorted(by_matches)
    right = [sum(p.right[method] for _, p in by_matches[m]) / len(by_matches[m]) for m in matches]
    if not all(method in p.settled for m in matches for _, p in by_matches[m]):
        return Summary(matches, right)
    settled, settled_right = [], []
    for m in matches:
        pts = by_matches[m]
        n_settled = sum(p.settled[method] for _, p in pts)
        settled.append(n_settled / len(pts))
        settled_right.append(sum(p.settled_right[method] for _, p in pts) / n_settled if n_settled else None)
    coverage = None if references is None else [_coverage(by_matches[m], method, references) for m in matches]
    own = None if own_references is None else [_coverage(by_matches[m], method, own_references) for m in matches]
    return Summary(matches, right, settled, settled_right, coverage, own)


@dataclass(frozen=True)
class StopSummary:
    """Over seeds: how arena's settling run of a format ended."""

    seeds: int
    settled: float                  # share of seeds that settled within the budget
    right: float                    # share whose order at the stop was exactly right
    matches: list[int]              # matches at the stop, per seed, sorted

    def quantile(self, q: float) -> int:
        """The matches by which a share ``q`` of the seeds had stopped (nearest rank)."""
        return self.matches[max(0, math.ceil(q * len(self.matches)) - 1)]


def summarise_stops(results: Sequence[SeedResult], fmt: str) -> StopSummary | None:
    stops = [s for r in results for s in r.stops if s.format == fmt]
    if not stops:
        return None
    return StopSummary(len(stops), sum(s.reason == "settled" for s in stops) / len(stops),
                       sum(s.right for s in stops) / len(stops), sorted(s.matches for s in stops))
