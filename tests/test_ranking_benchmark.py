"""The ranking benchmark's own parts (benchmarks/rankbench): the graded player is
legal, its matches follow arena's schedule, and the evaluation computes what it
claims on hand-made inputs. No heavy simulation here."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from rankbench.evaluate import (  # noqa: E402
    SeedPoint,
    SeedResult,
    SeedStop,
    covered,
    exactly_right,
    matches_until,
    matches_until_stays,
    summarise,
    summarise_stops,
)
from rankbench.formats import POLICIES, Checkpoint, Rounds, Stop  # noqa: E402
from rankbench.graded import Field, GradedPlayer, field_for  # noqa: E402
from rankbench.methods import dense_ranks, hand_games, match_games, mean_place, score_per_hand  # noqa: E402
from rankbench.simulate import MatchRecord, Simulator, play_entry, tournament_config  # noqa: E402

from arena.players import play_match  # noqa: E402
from arena.players.greedy import GreedyPlayer  # noqa: E402
from arena.shanghai.game import Game  # noqa: E402
from arena.shanghai.ruleset import Ruleset  # noqa: E402
from arena.tournament.config.model import SWISS  # noqa: E402
from arena.tournament.pairing.rounds import round_entries  # noqa: E402
from arena.tournament.pairing.schedule import ScheduleEntry  # noqa: E402


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


def test_the_cache_replays_a_match_whose_seats_changed(tmp_path: Path) -> None:
    f = field_for(6)
    entry = round_entries(tournament_config(f, 3, 1), 0, None, 0)[1]
    sim = Simulator(f, 3, tmp_path)
    rec = sim.record(entry)
    again = Simulator(f, 3, tmp_path)
    assert again.record(entry) == rec and again.played == 0
    moved = ScheduleEntry(entry.index, entry.match_id, entry.table, entry.rotation, entry.deal,
                          tuple(reversed(entry.seats)), entry.seed)
    assert again.record(moved).seats == moved.seats and again.played == 1


def test_play_entry_places_follow_totals() -> None:
    f = field_for(6)
    entry = round_entries(tournament_config(f, 3, 1), 0, None, 0)[1]
    rec = play_entry(f, entry)
    assert rec.seats == entry.seats and len(rec.hand_scores) == 10
    assert rec.totals == tuple(sum(h[s] for h in rec.hand_scores) for s in range(4))
    for s in range(4):
        assert rec.places[s] == 1 + sum(t < rec.totals[s] for t in rec.totals)


def _rec(mid: str, seats: tuple[str, ...], totals: tuple[int, ...], hands: tuple[tuple[int, ...], ...],
         group: str = "g") -> MatchRecord:
    places = tuple(1 + sum(u < t for u in totals) for t in totals)
    return MatchRecord(mid, 0, 0, 0, 0, group, seats, totals, places, hands)


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
    results = [SeedResult(1, [point(10, False, False, 0.0), point(20, True, True, 0.0)], [], 0, 0.0, 0.0),
               SeedResult(2, [point(10, True, True, 5.0), point(20, True, False, 0.0)], [], 0, 0.0, 0.0)]
    refs = {1: {"a": 0.5, "b": 0.5}, 2: {"a": 0.5, "b": 2.0}}
    s = summarise(results, "rr", "ts", refs)
    assert s.matches == [10, 20] and s.right == [0.5, 1.0] and s.until == 20
    assert s.settled == [0.5, 0.5] and s.settled_right == [1.0, 1.0]
    assert s.coverage == [2 / 4, 3 / 4]


def test_summarise_stops() -> None:
    stops = [SeedStop("sw", "settled", m, m < 50) for m in (40, 10, 30, 20)] + [SeedStop("sw", "budget", 99, False)]
    results = [SeedResult(i, [], [s], 0, 0.0, 0.0) for i, s in enumerate(stops)]
    s = summarise_stops(results, "sw")
    assert s is not None and s.matches == [10, 20, 30, 40, 99] and s.settled == 0.8 and s.right == 0.8
    assert (s.quantile(0.5), s.quantile(0.8), s.quantile(0.95)) == (30, 40, 99)
    assert summarise_stops(results, "other") is None


class _FakeSim(Simulator):
    """Records without playing: the seats finish in seat order."""

    def record(self, entry):  # type: ignore[no-untyped-def]
        return MatchRecord(entry.match_id, entry.seed, entry.table, entry.rotation, entry.deal, entry.group,
                           entry.seats, (0, 10, 20, 30), (1, 2, 3, 4), ((0, 10, 20, 30),))


def test_rounds_yield_exact_prefixes_a_stop_and_then_the_final_matches() -> None:
    f = field_for(6)
    calls: list[int] = []

    def policy(config, round_no, assessment, start, earlier):  # type: ignore[no-untyped-def]
        calls.append(round_no)
        assert (assessment is None) == (round_no == 0) and start == 4 * round_no
        if round_no == 6:
            return []
        return [ScheduleEntry(start + r, f"x{round_no}-r{r}", 0, r, round_no, tuple(f.names[r:] + f.names[:r])[:4], 1)
                for r in range(4)]
    POLICIES["test-fixed"] = (SWISS, policy)
    try:
        # budget 40: arena's stopping rule looks every 4 matches, so at every round
        events = list(Rounds("test-fixed", (4, 8, 100), budget=40, replicas=20).run(_FakeSim(f, 1, None)))
    finally:
        del POLICIES["test-fixed"]
    assert calls == [0, 1, 2, 3, 4, 5, 6]
    checkpoints = [(e.matches, len(e.records)) for e in events if isinstance(e, Checkpoint)]
    assert checkpoints == [(4, 4), (8, 8), (100, 24)]      # the run ended at 24: 100 judges those 24
    stops = [e for e in events if isinstance(e, Stop)]
    # Seat order decides every match, but fewer than 4 duplicate groups give no
    # interval: the order settles at the 4th round's 16 matches, recorded once; play goes on.
    assert [(s.reason, s.matches) for s in stops] == [("settled", 16)]
    assert events.index(stops[0]) == 2


def test_a_remembered_assessment_is_keyed_by_the_matches_not_only_their_number():
    """Which tables a Swiss run plays depends on arena's round policy: an
    assessment judged on other tables (a cache from before a policy change)
    must not be taken for this run's."""
    from rankbench.simulate import Memo

    class Spy(Memo):
        def __init__(self) -> None:
            super().__init__(None)
            self.keys: list[str] = []

        def get(self, key: str) -> object:
            self.keys.append(key)
            return {"order": ["a", "b"], "margins": [], "groups": [[0], [1]]}

    def record(mid: str, seats: tuple[str, ...]) -> MatchRecord:
        return MatchRecord(mid, 0, 0, 0, 0, "g", seats, (1, 2), (1, 2), ((1, 2),))

    spy = Spy()
    fmt = Rounds("swiss", (), 100)
    fmt._assess(None, [record("m1", ("a", "b"))], spy)          # type: ignore[arg-type]
    fmt._assess(None, [record("m1", ("a", "c"))], spy)          # type: ignore[arg-type]
    fmt._assess(None, [record("m1", ("a", "b"))], spy)          # type: ignore[arg-type]
    assert spy.keys[0] != spy.keys[1] and spy.keys[0] == spy.keys[2]


def test_a_shuffled_field_lists_its_bots_out_of_order_the_same_way_for_a_seed() -> None:
    """Issue 29: a benchmark that lists its bots in their true order can hide
    an effect of list order; --shuffle lists them otherwise, per seed."""
    plain, mixed = field_for(6), field_for(6, shuffled=True)
    assert tournament_config(plain, 3, 1).bot_names == plain.names == plain.truth
    orders = {tournament_config(mixed, s, 1).bot_names for s in range(1, 6)}
    assert all(sorted(o) == sorted(plain.names) for o in orders) and len(orders) > 1
    assert plain.names not in orders and tournament_config(mixed, 3, 1).bot_names == mixed.listed(3)
    assert mixed.key != plain.key and mixed.truth == plain.truth
