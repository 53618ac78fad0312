"""``arena league serve`` keeps no stored match and no hand: its board reads
the matches a batch at a time into ``ranking.counted.Counted`` (each
distinct outcome of a match, a row of small integers), whose fit gives the
numbers the fit of every hand gives, to the bit (so the page's intervals and
rank ranges are what they were; benchmarks/league.py --only d has the MB)."""

from __future__ import annotations

import gc
import random
from pathlib import Path

import pytest
from test_league import make_league

from arena.league import standings
from arena.league.config import load_league
from arena.league.register import Register
from arena.league.run import run_league
from arena.ranking import confidence
from arena.ranking.confidence import assess_counted
from arena.ranking.counted import Counted
from arena.ranking.games import Game
from arena.tournament.results import database
from arena.tournament.results.database import ResultStore, StoredMatch
from arena.tournament.standings.ratings import assess_matches, games_of


def _matches(seed: int, tables: int = 40, players: int = 8, hands: int = 3) -> list[StoredMatch]:
    """Tables of 3 and 4 seats, each on one deal in all its rotations, with ties and a few forfeits."""
    rng = random.Random(seed)
    names = [f"p{i}" for i in range(players)]
    skill = {n: rng.gauss(0, 1) for n in names}
    out = []
    for t in range(tables):
        k = rng.choice((3, 4))
        seated = rng.sample(names, k)
        deal = [[rng.gauss(0, 1) for _ in range(k)] for _ in range(hands)]
        for r in range(k):
            bots = seated[r:] + seated[:r]
            scores = [[max(0, int(10 * (deal[h][(s + r) % k] - skill[b] + rng.gauss(0, 1)))) // 5 * 5
                       for s, b in enumerate(bots)] for h in range(hands)]
            totals = [sum(row[s] for row in scores) for s in range(k)]
            out.append(StoredMatch(
                match_id=f"L{t:06d}-r{r}", schedule_index=8 * t + r, table=t, rotation=r, deal=0, seed=t,
                bots=bots, totals=totals, places=[1 + sum(x < y for x in totals) for y in totals],
                forfeited=[rng.random() < 0.03 for _ in range(k)], hand_scores=scores,
                hand_winners=[None] * hands, started_at=f"2026-01-01T00:{t % 60:02d}:{r:02d}+00:00"))
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_counted_games_assess_as_every_game_does(seed: int) -> None:
    matches = _matches(seed)
    counted = Counted()
    for m in reversed(matches):          # the order they come in changes nothing
        counted.add(games_of(m.match_id, m.deal, m.bots, m.places, m.forfeited, m.hand_scores))
    extra = ("nobody.v1",)               # a version with no match yet
    assert assess_counted(counted, extra, 0.95, seed=7) == assess_matches(matches, extra, 0.95, seed=7)
    assert counted.rows() < len(counted)      # a match's equal hands are one row


def test_a_counted_bootstrap_with_few_groups_says_unknown() -> None:
    matches = _matches(3, tables=3)       # 3 duplicate groups: too few for an interval
    counted = Counted()
    for m in matches:
        counted.add(games_of(m.match_id, m.deal, m.bots, m.places, m.forfeited, m.hand_scores))
    assert assess_counted(counted, (), 0.95, seed=7) == assess_matches(matches, (), 0.95, seed=7)


def _alive(kind: type) -> int:
    return sum(1 for o in gc.get_objects() if isinstance(o, kind))


def test_the_page_holds_no_match_nor_hand_when_it_fits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    league = make_league(tmp_path / "lg")
    config = load_league(league)
    run_league(config, jobs=1, max_matches=15, echo=lambda line: None, idle_exit=True)
    monkeypatch.setattr(database, "MATCH_BATCH", 4)      # 15 matches: 4 batches
    seen: list[tuple[int, int]] = []
    fit = confidence.assess_problem

    def counting(*args: object, **kwargs: object) -> object:
        gc.collect()
        seen.append((_alive(StoredMatch) - before[0], _alive(Game) - before[1]))
        return fit(*args, **kwargs)              # type: ignore[arg-type]

    monkeypatch.setattr(confidence, "assess_problem", counting)
    with ResultStore(league / "results" / "results.sqlite", readonly=True) as store, \
            Register(league, readonly=True) as register:
        gc.collect()
        before = (_alive(StoredMatch), _alive(Game))
        shown = standings.board(config, store, register)
    # When it fits: the last match read at most (the loop's variable), and not one hand of it as a Game.
    assert len(seen) == 1 and seen[0][0] <= 1 and seen[0][1] == 0, seen
    assert shown.health["matches"] == 15 and len(shown.recent) == 15
    assert all(r["low"] is not None for r in shown.leaderboard)
