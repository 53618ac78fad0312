"""The ranking benchmark's own parts (benchmarks/rankbench): the graded player is
legal, its matches follow arena's schedule, and the evaluation computes what it
claims on hand-made inputs. No heavy simulation here."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from arena.players import play_match  # noqa: E402
from arena.players.greedy import GreedyPlayer  # noqa: E402
from arena.shanghai.game import Game  # noqa: E402
from arena.shanghai.ruleset import Ruleset  # noqa: E402
from arena.tournament.schedule import iter_schedule  # noqa: E402
from rankbench.evaluate import (SeedPoint, SeedResult, covered, exactly_right, matches_until,  # noqa: E402
                                matches_until_stays, summarise)
from rankbench.formats import Matchmaking, MatchmakingState, POLICIES  # noqa: E402
from rankbench.graded import Field, GradedPlayer, field_for  # noqa: E402
from rankbench.methods import dense_ranks, hand_games, match_games, mean_place, score_per_hand  # noqa: E402
from rankbench.simulate import MatchRecord, Simulator, Tables, play_entry, tournament_config  # noqa: E402


@pytest.mark.parametrize("seed", [1, 2])
def test_graded_players_play_legal_full_matches(seed: int) -> None:
    ps = (0.0, 0.3, 0.75, 1.0)
    game = Game.seeded(Ruleset(), 4, seed)
    play_match(game, [GradedPlayer(p, random.Random(f"{seed}/{i}")) for i, p in enumerate(ps)])
    assert game.over and len(game.hand_scores) == 10      # an illegal action would have raised


def test_graded_player_with_p_zero_is_greedy() -> None:
    a, b = Game.seeded(Ruleset(), 4, 7), Game.seeded(Ruleset(), 4, 7)
    play_match(a, [GradedPlayer(0.0, random.Random(i)) for i in range(4)])
    play_match(b, [GreedyPlayer(random.Random(i)) for i in range(4)])
    assert a.hand_scores == b.hand_scores


def test_graded_player_rejects_p_outside_0_1() -> None:
    with pytest.raises(ValueError):
        GradedPlayer(1.5, random.Random(0))


def test_fields_list_strongest_first() -> None:
    for n in (6, 12, 16):
        f = field_for(n)
        assert len(f.names) == n and f.truth[0] == f.names[0] and f.p_of(f.truth[-1]) == 1.0
    with pytest.raises(ValueError):
        Field((0.5, 0.1))


def test_matchmaking_tables_are_the_schedules_matches() -> None:
    """Any table on any deal gets the seats, id and seed the round robin gives it."""
    f = field_for(6)
    tables = Tables(f, 5)
    for e in iter_schedule(tournament_config(f, 5, 2)):
        mine = tables.entries(list(reversed(e.bots)), e.deal)[e.rotation]
        assert (mine.match_id, mine.seats, mine.seed, mine.group) == (e.match_id, e.seats, e.seed, e.group)


def test_play_entry_places_follow_totals() -> None:
    f = field_for(6)
    entry = Tables(f, 3).entries(f.names[:4], 0)[1]
    rec = play_entry(f, entry)
    assert rec.seats == entry.seats and len(rec.hand_scores) == 10
    assert rec.totals == tuple(sum(h[s] for h in rec.hand_scores) for s in range(4))
    for s in range(4):
        assert rec.places[s] == 1 + sum(t < rec.totals[s] for t in rec.totals)


def _rec(mid: str, seats: tuple[str, ...], totals: tuple[int, ...], hands: tuple[tuple[int, ...], ...],
         group: str = "g") -> MatchRecord:
    places = tuple(1 + sum(u < t for u in totals) for t in totals)
    return MatchRecord(mid, 0, 0, 0, group, seats, totals, places, hands)


def test_games_and_averages_from_records() -> None:
    r1 = _rec("m1", ("a", "b", "c"), (10, 10, 30), ((0, 10, 20), (10, 0, 10)))
    r2 = _rec("m2", ("c", "a", "b"), (0, 5, 50), ((0, 5, 20), (0, 0, 30)))
    assert dense_ranks([10, 10, 30]) == (0, 0, 1)
    assert [g.ranks for g in match_games([r1, r2])] == [(0, 0, 1), (0, 1, 2)]
    hg = hand_games([r1])
    assert [g.ranks for g in hg] == [(0, 1, 2), (1, 0, 1)] and {g.group for g in hg} == {"g"}
    assert mean_place([r1, r2], "abc").score == {"a": 1.5, "b": 2.0, "c": 2.0}
    assert score_per_hand([r1, r2], "abc").score == {"a": 15 / 4, "b": 60 / 4, "c": 30 / 4}


def test_exactly_right_needs_a_strict_order_of_every_bot() -> None:
    assert exactly_right({"a": 1, "b": 2, "c": 3}, ["a", "b", "c"])
    assert not exactly_right({"a": 1, "b": 3, "c": 2}, ["a", "b", "c"])
    assert not exactly_right({"a": 1, "b": 2, "c": 2}, ["a", "b", "c"])      # a tie is not right
    assert not exactly_right({"a": 1, "b": 2}, ["a", "b", "c"])              # c unranked


def test_matches_until_first_and_stays() -> None:
    curve = [(60, 0.5), (120, 0.95), (180, 0.9), (240, 1.0), (300, 0.97)]
    assert matches_until(curve) == 120
    assert matches_until_stays(curve) == 240
    assert matches_until([(60, 0.5), (120, 0.94)]) is None
    assert matches_until_stays([(60, 0.96), (120, 0.5)]) is None


def test_covered_counts_reference_inside_closed_intervals() -> None:
    assert covered({"a": (1.0, 2.0), "b": (3.0, 4.0), "c": (0.0, 9.0)}, {"a": 2.0, "b": 2.5, "c": 5}) == (2, 3)


def test_summarise_over_seeds() -> None:
    def point(matches: int, right: bool, settled: bool, low: float) -> SeedPoint:
        return SeedPoint("rr", matches, {"ts": right}, {"ts": settled}, {"ts": settled and right},
                         {"ts": {"a": (low, low + 1.0), "b": (0.0, 1.0)}})
    results = [SeedResult(1, [point(10, False, False, 0.0), point(20, True, True, 0.0)], 0, 0.0, 0.0),
               SeedResult(2, [point(10, True, True, 5.0), point(20, True, False, 0.0)], 0, 0.0, 0.0)]
    refs = {1: {"a": 0.5, "b": 0.5}, 2: {"a": 0.5, "b": 2.0}}
    s = summarise(results, "rr", "ts", refs)
    assert s.matches == [10, 20] and s.right == [0.5, 1.0] and s.until == 20
    assert s.settled == [0.5, 0.5] and s.settled_right == [1.0, 1.0]
    assert s.coverage == [2 / 4, 3 / 4]


class _FakeSim(Simulator):
    """Records without playing: seat 0 wins every hand."""

    def record(self, entry):  # type: ignore[no-untyped-def]
        return MatchRecord(entry.match_id, entry.table, entry.rotation, entry.deal, entry.group, entry.seats,
                           (0, 10, 20, 30), (1, 2, 3, 4), ((0, 10, 20, 30),))


def test_matchmaking_yields_exact_prefixes_and_new_deals() -> None:
    f = field_for(6)
    seen: list[MatchmakingState] = []

    def policy(state: MatchmakingState) -> list[tuple[str, ...]]:
        seen.append(state)
        return [tuple(reversed(f.names[:4]))] if len(state.records) < 30 else []
    POLICIES["test-fixed"] = policy
    try:
        points = list(Matchmaking("test-fixed", (6, 12, 100)).run(_FakeSim(f, 1, None)))
    finally:
        del POLICIES["test-fixed"]
    assert [(m, len(r)) for m, r in points] == [(6, 6), (12, 12)]      # 100 is never reached: the policy stopped
    assert [r.deal for r in points[-1][1]] == [0] * 4 + [1] * 4 + [2] * 4
    assert sorted(seen[0].initial) == sorted(f.names)
