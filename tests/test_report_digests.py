"""``report.data.Digests``: the decision times of each match's digest are
folded into its bots' times as the pages come back, in the matches' order,
and dropped (held whole, they took 2.9 GB for the report of 20,000
matches); the times it gives are those of the digests kept whole."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

from arena.report.data import Digest, Digests, _decision_times


def match(i: int, bots: tuple[str, ...]) -> Any:
    return SimpleNamespace(match_id=f"m{i}", bots=bots, decision_stats=[{"mean": 0.002}] * len(bots))


def digest(rng: random.Random, seats: int) -> Digest:
    times = [[(round(rng.uniform(0, 5), 3), k) for k in range(rng.randrange(1, 40))] for _ in range(seats)]
    return Digest(times=times, decisions={}, count=0, steps=0, faults=[], quoted={})   # type: ignore[arg-type]


def test_times_are_folded_in_order_and_dropped_and_equal_those_of_whole_digests() -> None:
    rng = random.Random(5)
    matches = [match(i, tuple(rng.sample("abcde", 3))) for i in range(60)]
    whole = {m.match_id: digest(rng, 3) for m in matches}
    folding = Digests(None, matches)      # type: ignore[arg-type]    # no store: every match has its digest
    arrival = [m.match_id for m in matches]
    arrival[10], arrival[11] = arrival[11], arrival[10]          # one comes early: it waits for the one before
    for n, mid in enumerate(arrival, 1):
        folding[mid] = whole[mid]
        if mid == "m11":
            assert folding.folded == 10 and folding["m11"].times is not None       # held until m10 comes
        else:
            assert folding.folded == n and folding[mid].times is None              # folded, dropped
    assert all(d is not None and d.times is None for d in folding.values())
    times, fallback = _decision_times(None, matches, folding)     # type: ignore[arg-type]
    expected, expected_fallback = _decision_times(None, matches, dict(whole))   # type: ignore[arg-type]
    assert fallback == expected_fallback is False
    assert sorted(times) == sorted(expected)
    for bot in expected:
        assert times[bot].counts == expected[bot].counts and times[bot].slowest == expected[bot].slowest
