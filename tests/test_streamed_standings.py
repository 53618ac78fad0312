"""Issue 34: ``arena leaderboard`` reads the stored matches a batch at a time
(``ResultStore.iter_matches``) and lets each go once it has given its games
and counts; the table is the one made from every match held at once."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from arena.tournament.results import database
from arena.tournament.results.database import ResultStore, StoredMatch
from arena.tournament.standings.leaderboard import _Fixed, format_leaderboard, leaderboard, report


def stored(tmp_path: Path, count: int = 47) -> ResultStore:
    """Matches of 2 to 4 seats, several hands, ties, forfeits and faults, stored in a shuffled order."""
    rng = random.Random(5)
    names = ["ann", "bob", "cat", "dan", "eve"]
    matches = []
    for i in range(count):
        bots = rng.sample(names, rng.choice([2, 3, 4]))
        hands = [[rng.randrange(0, 30) for _ in bots] for _ in range(rng.randint(1, 4))]
        totals = [sum(h[s] for h in hands) for s in range(len(bots))]
        forfeited = [rng.random() < 0.1 for _ in bots]
        key = list(zip(forfeited, totals))
        places = [1 + sum(1 for k in key if k < mine) for mine in key]
        faults = [{"seat": s, "kind": "timeout", "hand": len(hands), "decision": 3}
                  for s in range(len(bots)) if forfeited[s]]
        matches.append(StoredMatch(
            match_id=f"t{i % 7}-r{i}", schedule_index=i, table=i % 7, rotation=i, deal=i // 7, seed=i, bots=bots,
            totals=totals, places=places, forfeited=forfeited, hand_scores=hands,
            hand_winners=[min(range(len(bots)), key=lambda s: h[s]) for h in hands], faults=faults))
    rng.shuffle(matches)
    store = ResultStore(tmp_path / "r.sqlite")
    for m in matches:
        store.add_match(m)
    return store


def test_matches_read_a_batch_at_a_time_are_every_match_in_schedule_order(tmp_path, monkeypatch) -> None:
    store = stored(tmp_path)
    try:
        every = store.matches()
        for batch in (1, 5, 46, 47, 48, 500):
            monkeypatch.setattr(database, "MATCH_BATCH", batch)
            assert list(store.iter_matches()) == every
    finally:
        store.close()


@pytest.mark.parametrize("rating", ["hands", "matches"])
def test_the_streamed_leaderboard_is_the_one_of_every_match_held(tmp_path, monkeypatch, rating) -> None:
    monkeypatch.setattr(database, "MATCH_BATCH", 6)      # 47 matches: 8 batches
    store = stored(tmp_path)
    try:
        held = leaderboard(_Fixed(store.matches(), store.bots(), 0, rating))
        streamed = report(store, "json", sections=("leaderboard",), rating=rating)
        whole = report(_Fixed(store.matches(), store.bots(), 0, rating), "json", sections=("leaderboard",))
        assert streamed == whole
        assert json.loads(streamed)["leaderboard"] == json.loads(format_leaderboard(held, "json"))
        if rating == "hands":
            assert format_leaderboard(leaderboard(store), "json") == format_leaderboard(held, "json")
    finally:
        store.close()
