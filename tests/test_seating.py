"""Seatings: every bot in every seat, and directly after every other bot
equally often, in every format and table size (arena.tournament.pairing.seating)."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest

from arena.tournament.config.model import GAUNTLET, SWISS, BotConfig, Settle, TournamentConfig
from arena.tournament.pairing.rounds import first_rounds, round_entries
from arena.tournament.pairing.schedule import ScheduleEntry, build_schedule
from arena.tournament.pairing.seating import BALANCED, ROTATE, balanced_offsets, design, seatings, successor_counts

SIZES = range(2, 9)


def config(n: int, k: int, **kw: object) -> TournamentConfig:
    bots = tuple(BotConfig(name=f"b{i}", builtin="random") for i in range(n))
    kw.setdefault("seed", 1)
    return TournamentConfig(path=Path("t.yaml"), dir=Path("/tmp"), name="t", bots=bots, players=k, **kw)


def together(seated: Sequence[Sequence[str]]) -> Counter[tuple[str, str]]:
    """How many seatings hold both bots of each ordered pair."""
    out: Counter[tuple[str, str]] = Counter()
    for seats in seated:
        out.update((a, b) for a in seats for b in seats if a != b)
    return out


def neighbour_excess(seated: Sequence[Sequence[str]]) -> dict[tuple[str, str], float]:
    """How often b sat directly after a, minus 1/(k-1) of their seatings together."""
    after = successor_counts(seated)
    k = len(seated[0])
    return {pair: after.get(pair, 0) - n / (k - 1) for pair, n in together(seated).items()}


def assert_seats_balanced(entries: Sequence[ScheduleEntry]) -> None:
    # every deal of every table: each of its bots once in each seat
    by_deal: dict[tuple[int, int], list[tuple[str, ...]]] = {}
    for e in entries:
        by_deal.setdefault((e.table, e.deal), []).append(e.seats)
    for seated in by_deal.values():
        k = len(seated[0])
        assert len(seated) == k
        for s in range(k):
            assert sorted(seats[s] for seats in seated) == sorted(seated[0])


@pytest.mark.parametrize("k", SIZES)
def test_each_block_is_a_latin_square_and_the_design_balances_neighbours_exactly(k: int) -> None:
    blocks = design(k)
    assert len(blocks) == max(1, k - 1)
    for block in blocks:
        assert len(block) == k
        for row in block:
            assert sorted(row) == list(range(k))
        for s in range(k):
            assert sorted(row[s] for row in block) == list(range(k))
    rows = [row for block in blocks for row in block]
    after = Counter((row[s], row[(s + 1) % k]) for row in rows for s in range(k))
    assert set(after) == {(i, j) for i in range(k) for j in range(k) if i != j}
    assert set(after.values()) == {k}


@pytest.mark.parametrize("k", [3, 5, 7])
def test_a_prime_table_balances_every_distance_too(k: int) -> None:
    rows = [row for block in design(k) for row in block]
    for d in range(1, k):
        assert set(Counter((row[s], row[(s + d) % k]) for row in rows for s in range(k)).values()) == {k}


@pytest.mark.parametrize("k", SIZES)
def test_rotate_is_the_rotations_of_the_listed_order(k: int) -> None:
    bots = [f"b{i}" for i in range(k)]
    assert seatings(bots, 5, ROTATE) == [tuple(bots[(s - r) % k] for s in range(k)) for r in range(k)]


@pytest.mark.parametrize("k", SIZES)
@pytest.mark.parametrize("fmt", ["round_robin", GAUNTLET])
def test_a_schedule_of_k_minus_1_deals_puts_every_bot_after_every_other_equally_often(k: int, fmt: str) -> None:
    n = k + 2 if fmt == GAUNTLET else k + 1
    extra = {"format": GAUNTLET, "challengers": ("b0", "b1")} if fmt == GAUNTLET else {}
    entries = build_schedule(config(n, k, deals=max(1, k - 1), **extra))
    assert_seats_balanced(entries)
    excess = neighbour_excess([e.seats for e in entries])
    assert excess and all(abs(x) < 1e-9 for x in excess.values())
    # and each pair: exactly k times per table it shares, per k - 1 deals
    shared = Counter(pair for e in entries if e.rotation == 0 and e.deal == 0
                     for pair in itertools.permutations(e.seats, 2))
    assert successor_counts([e.seats for e in entries]) == {p: n * k for p, n in shared.items()}


@pytest.mark.parametrize("k", range(3, 9))
def test_rounds_of_a_settle_run_are_balanced_after_every_k_minus_1(k: int) -> None:
    c = config(k + 1, k, deals=k - 1, settle=Settle())
    entries = first_rounds(c)
    assert_seats_balanced(entries)
    assert all(abs(x) < 1e-9 for x in neighbour_excess([e.seats for e in entries]).values())
    # the rounds are the schedule's deals: the same matches, seeds and tables
    # (seated to balance after any round, where the schedule balances its last)
    by_id = {e.match_id: (frozenset(e.seats), e.seed) for e in build_schedule(config(k + 1, k, deals=k - 1))}
    assert {e.match_id: (frozenset(e.seats), e.seed) for e in entries} == by_id


@pytest.mark.parametrize("k", range(3, 9))
def test_swiss_rounds_keep_neighbours_near_balance(k: int) -> None:
    """Swiss tables change every round; each table's block is chosen from
    the seats of every earlier round.  Over 4 (k - 1) rounds no ordered pair
    is more than two tables' worth (2k seatings) off a perfect balance (a
    prime table's block seats a pair k times or not at all), and far closer
    than the rotations of the listed order."""
    c = config(2 * k + 1, k, deals=4 * (k - 1), format=SWISS, settle=Settle())
    balanced = first_rounds(c)
    rotated = first_rounds(config(2 * k + 1, k, deals=4 * (k - 1), format=SWISS, settle=Settle(), seating=ROTATE))
    assert_seats_balanced(balanced)
    worst = max(map(abs, neighbour_excess([e.seats for e in balanced]).values()))
    assert worst <= 2 * k
    assert 2 * worst < max(map(abs, neighbour_excess([e.seats for e in rotated]).values()))


def test_a_swiss_round_depends_on_the_seats_of_the_rounds_before() -> None:
    c = config(7, 3, format=SWISS, settle=Settle())
    first = round_entries(c, 0, None, 0)
    again = round_entries(c, 1, None, len(first), [e.seats for e in first])
    alone = round_entries(c, 1, None, len(first))
    assert [e.match_id for e in again] == [e.match_id for e in alone]
    assert [e.seats for e in again] != [e.seats for e in alone]


@pytest.mark.parametrize("n,k", [(5, 3), (6, 4), (8, 5), (9, 6), (10, 8)])
def test_left_over_deals_are_balanced_far_better_than_by_rotation(n: int, k: int) -> None:
    def worst(seating: str) -> float:
        entries = build_schedule(config(n, k, deals=1, seating=seating))
        return max(map(abs, neighbour_excess([e.seats for e in entries]).values()))

    shared = math.comb(n - 2, k - 2) * k          # seatings a pair shares
    assert worst(BALANCED) <= shared / (k - 1) / 2 < worst(ROTATE)


def test_four_bots_at_tables_of_three_balance_in_one_deal() -> None:
    # the tetrahedron's faces, oriented: each pair meets twice, once each way
    entries = build_schedule(config(4, 3))
    assert all(abs(x) < 1e-9 for x in neighbour_excess([e.seats for e in entries]).values())


def test_offsets_are_deterministic_and_independent_of_names() -> None:
    tables = list(itertools.combinations("abcdefg", 4))
    renamed = [tuple(chr(ord(x) + 7) for x in t) for t in tables]
    assert balanced_offsets(tables, 4) == balanced_offsets(tables, 4) == balanced_offsets(renamed, 4)


@pytest.mark.parametrize("seating,says", [
    ("balanced", "neighbours: each bot sits directly after each bot it meets in exactly 1 of every 2 of their "
                 "matches (seating: balanced)"),
    ("rotate", "neighbours: a bot sits directly after a bot it meets in 0% to 100% of their matches, against a "
               "fair 1 of every 2 (seating: rotate)"),
])
def test_a_dry_run_says_how_balanced_the_neighbours_are(tmp_path: Path, seating: str, says: str) -> None:
    from click.testing import CliRunner

    from arena.cli import main

    path = tmp_path / "t.yaml"
    path.write_text("name: t\nbots:\n" + "".join(f"  - {{name: b{i}, builtin: random}}\n" for i in range(4))
                    + f"players: 3\nseed: 7\nseating: {seating}\n")
    done = CliRunner().invoke(main, ["run", str(path), "--dry-run"], catch_exceptions=False)
    assert done.exit_code == 0 and says in done.output
