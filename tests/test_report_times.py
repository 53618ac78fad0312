"""The report's decision times (issue 34): each record's trace read without
decoding the rest of it, and each bot's times kept as counts and its slowest,
giving what the whole records and the list of every decision gave."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
import zlib
from pathlib import Path

import pytest
from report_fixtures import run_tournament

from arena.report.data import SLOWEST, _trace_times
from arena.report.traces import BotTimes, stored_times
from arena.tournament.results.database import ResultStore


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_tournament(tmp_path_factory.mktemp("times"))


def test_the_trace_alone_gives_what_the_whole_record_gives(results: Path, tmp_path: Path) -> None:
    copy = tmp_path / "results"
    shutil.copytree(results, copy)
    db = copy / "results.sqlite"
    with sqlite3.connect(db) as c:
        ids = [m for (m,) in c.execute("SELECT match_id FROM matches ORDER BY schedule_index")]
        # one record whose trace is not the usual shape: read the old way, whole
        (blob,) = c.execute("SELECT record FROM matches WHERE match_id = ?", (ids[1],)).fetchone()
        record = json.loads(zlib.decompress(blob))
        record["trace"][0] = {"decisions": [[0, None, 1.5]], "extra": 1}
        record["trace"][1] = {"no decisions": []}
        c.execute("UPDATE matches SET record = ? WHERE match_id = ?",
                  (zlib.compress(json.dumps(record).encode()), ids[1]))
        c.execute("UPDATE matches SET record = ? WHERE match_id = ?", (b"not zlib", ids[2]))
    store = ResultStore(db, readonly=True)
    try:
        for m in store.matches():
            fast = stored_times(store, m.match_id, len(m.bots))
            if m.match_id == ids[2]:
                assert fast is None                 # damaged: the caller says so, as before
                continue
            if m.match_id == ids[1]:
                assert fast is None                 # "no decisions": not the shape it reads
                continue
            whole = _trace_times(store.record(m.match_id), len(m.bots))
            assert fast == whole and any(seat for seat in whole)
            assert [type(ms) for seat in fast if seat for ms, _ in seat] == \
                   [type(ms) for seat in whole if seat for ms, _ in seat]
    finally:
        store.close()


def _spread(values: list[float], k: int) -> list[float]:
    """What the report did with the list of every time."""
    values = sorted(values)
    if len(values) <= k:
        return values
    return [values[round(i * (len(values) - 1) / (k - 1))] for i in range(k)]


@pytest.mark.parametrize("seed", range(4))
def test_counts_and_the_slowest_so_far_give_what_every_decision_gave(seed: int) -> None:
    rng = random.Random(seed)
    times, every = BotTimes(SLOWEST), []
    for n in range(rng.randint(1, 60)):
        if rng.random() < 0.1:
            mean = round(rng.uniform(0, 5), 3)
            times.add_mean(mean)
            every.append((mean, f"m{n}", -1))
            continue
        entries = [(round(rng.choice([0.5, 1.0, 2.0, rng.uniform(0, 9)]), 3), k)
                   for k in range(rng.randint(0, 30))]
        times.add(f"m{n}", entries)
        every += [(ms, f"m{n}", k) for ms, k in entries]
    for k in (1, 2, 7, 50, 2000):
        if k > 1 or len(every) <= 1:
            assert times.spread(k) == _spread([t[0] for t in every], k)
    assert times.slowest == sorted((t for t in every if t[2] >= 0), key=lambda t: -t[0])[:SLOWEST]
