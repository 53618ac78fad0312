"""The schedule: tables, seat rotations, duplicate deals, seeds, sizes."""

from __future__ import annotations

import itertools
import math
import pickle
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from arena.tournament.config.load import load_config
from arena.tournament.config.model import GAUNTLET, BotConfig, ConfigError, TournamentConfig
from arena.tournament.pairing.schedule import (
    ScheduleEntry,
    build_schedule,
    check_schedule_size,
    derive_seed,
    estimate_seconds,
    iter_schedule,
    schedule_size,
    table_count,
)

REPO = Path(__file__).resolve().parent.parent


def config(n: int = 5, players: int = 3, **kw: object) -> TournamentConfig:
    bots = tuple(BotConfig(name=f"b{i}", builtin="random") for i in range(n))
    kw.setdefault("seed", 1)
    return TournamentConfig(path=Path("t.yaml"), dir=Path("/tmp"), name="t", bots=bots, players=players, **kw)


@pytest.mark.parametrize("n,k,deals", [(2, 2, 1), (3, 3, 1), (5, 3, 1), (5, 3, 2), (6, 4, 3), (8, 8, 1)])
def test_round_robin_size(n: int, k: int, deals: int) -> None:
    c = config(n, k, deals=deals)
    entries = build_schedule(c)
    assert schedule_size(c) == len(entries) == math.comb(n, k) * k * deals
    assert table_count(c) == math.comb(n, k)


def test_round_robin_every_combination_meets_in_every_rotation() -> None:
    c = config(5, 3)
    entries = build_schedule(c)
    tables = {frozenset(e.seats) for e in entries}
    assert tables == {frozenset(t) for t in itertools.combinations(c.bot_names, 3)}
    # each bot sits in each seat equally often
    seats = Counter((bot, seat) for e in entries for seat, bot in enumerate(e.seats))
    assert set(seats.values()) == {math.comb(4, 2)}
    assert len(seats) == 5 * 3


def test_seating_rotate_puts_bot_i_at_seat_i_plus_r() -> None:
    entries = build_schedule(config(4, 4, seating="rotate"))
    first = [e for e in entries if e.table == 0]
    assert [e.rotation for e in first] == [0, 1, 2, 3]
    base = first[0].seats
    assert base == ("b0", "b1", "b2", "b3")
    for e in first:
        for i, bot in enumerate(base):
            assert e.seats[(i + e.rotation) % 4] == bot
    assert first[1].seats == ("b3", "b0", "b1", "b2")


def test_entries_and_ids() -> None:
    entries = build_schedule(config(5, 3, deals=2))
    assert [e.index for e in entries] == list(range(len(entries)))
    assert len({e.match_id for e in entries}) == len(entries)
    assert entries[0].match_id == "t000-r0-d0"
    e = next(e for e in entries if (e.table, e.rotation, e.deal) == (3, 1, 0))
    assert e.match_id == "t003-r1-d0" and e.group == "t003-d0" and e.players == 3
    assert e.seat_of(e.seats[2]) == 2
    # table, then deal, then rotation
    assert [(e.deal, e.rotation) for e in entries[:6]] == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    assert str(entries[0]).startswith("t000-r0-d0: b0, b1, b2 (seed ")


def test_wide_ids_for_many_tables() -> None:
    entries = build_schedule(config(14, 3))  # 364 tables
    assert entries[-1].match_id == "t363-r2-d0"
    entries = build_schedule(config(16, 3))  # 560 tables
    assert entries[0].match_id == "t000-r0-d0"
    big = build_schedule(config(26, 4))  # 14950 tables
    assert big[-1].match_id == "t14949-r3-d0" and big[0].match_id == "t00000-r0-d0"


def test_duplicate_deals_share_seeds_across_rotations() -> None:
    entries = build_schedule(config(5, 3, deals=3))
    by_group: dict[tuple[int, int], set[int]] = {}
    for e in entries:
        by_group.setdefault((e.table, e.deal), set()).add(e.seed)
    assert all(len(seeds) == 1 for seeds in by_group.values())
    seeds = [next(iter(s)) for s in by_group.values()]
    assert len(set(seeds)) == len(seeds)  # each table and deal its own cards


def test_no_duplicate_deals_gives_every_match_its_own_seed() -> None:
    entries = build_schedule(config(5, 3, deals=2, duplicate=False))
    assert len({e.seed for e in entries}) == len(entries)
    dup = build_schedule(config(5, 3, deals=2))
    assert [e.seats for e in entries] == [e.seats for e in dup]


def test_seeds_fit_sqlite_and_are_stable() -> None:
    entries = build_schedule(config(6, 3, deals=2))
    assert all(0 <= e.seed < 2**63 for e in entries)
    # fixed values: seeds must not change between runs, machines or versions
    assert derive_seed(1, 0, 0) == 7203459132547469083
    assert entries[0].seed == derive_seed(1, 0, 0)
    assert build_schedule(config(6, 3, seed=2))[0].seed != entries[0].seed


def test_a_schedule_needs_a_seed() -> None:
    with pytest.raises(ValueError, match="seed"):
        build_schedule(config(4, 3, seed=None))


def test_schedule_is_deterministic() -> None:
    a = build_schedule(config(6, 3, deals=2))
    b = build_schedule(config(6, 3, deals=2))
    assert a == b
    assert list(iter_schedule(config(6, 3, deals=2))) == a


def test_schedule_does_not_depend_on_hash_randomisation() -> None:
    code = ("from pathlib import Path; from arena.tournament.config.model import *; "
            "from arena.tournament.pairing.schedule import build_schedule; "
            "c = TournamentConfig(path=Path('t'), dir=Path('/'), name='t', players=3, seed=1, "
            "bots=tuple(BotConfig(name=f'b{i}', builtin='random') for i in range(5))); "
            "print([(e.match_id, e.seats, e.seed) for e in build_schedule(c)])")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": h}).stdout for h in ("1", "2")}
    assert len(outs) == 1
    expected = [(e.match_id, e.seats, e.seed) for e in build_schedule(config(5, 3))]
    assert outs == {repr(expected) + "\n"}


def test_entries_pickle() -> None:
    entries = build_schedule(config(4, 3))
    assert pickle.loads(pickle.dumps(entries)) == entries
    with pytest.raises(AttributeError):
        entries[0].seed = 3  # type: ignore[misc]
    assert isinstance(entries[0], ScheduleEntry)


def test_gauntlet() -> None:
    c = config(6, 3, format=GAUNTLET, challengers=("b4", "b5"), deals=2)
    entries = build_schedule(c)
    assert c.field_bots == ("b0", "b1", "b2", "b3")
    assert schedule_size(c) == len(entries) == 2 * math.comb(4, 2) * 3 * 2
    for e in entries:
        assert len({"b4", "b5"} & set(e.seats)) == 1  # one challenger per table, never both
    for challenger in ("b4", "b5"):
        tables = {frozenset(e.seats) - {challenger} for e in entries if challenger in e.seats}
        assert tables == {frozenset(t) for t in itertools.combinations(c.field_bots, 2)}
        seats = Counter(e.seat_of(challenger) for e in entries if challenger in e.seats)
        assert seats == {0: 12, 1: 12, 2: 12}
    # duplicate deals: same cards in every rotation, and for every challenger facing the same field
    seeds: dict[tuple[frozenset[str], int], set[int]] = {}
    for e in entries:
        field = frozenset(e.seats) - {"b4", "b5"}
        seeds.setdefault((field, e.deal), set()).add(e.seed)
    assert all(len(s) == 1 for s in seeds.values())
    assert len({next(iter(s)) for s in seeds.values()}) == len(seeds)


def test_gauntlet_two_players() -> None:
    c = config(4, 2, format=GAUNTLET, challengers=("b0",))
    entries = build_schedule(c)
    assert [e.seats for e in entries] == [("b0", "b1"), ("b1", "b0"), ("b0", "b2"), ("b2", "b0"),
                                          ("b0", "b3"), ("b3", "b0")]


def test_size_is_computed_without_building() -> None:
    c = config(60, 8)
    assert schedule_size(c) == math.comb(60, 8) * 8  # billions: would not fit in memory
    with pytest.raises(ConfigError) as info:
        check_schedule_size(c)
    message = str(info.value)
    assert "\n" not in message and message.startswith("t.yaml: players: a round robin of 60 bots")
    assert "far too large" in message and "format: gauntlet" in message and "fewer players per table" in message
    assert check_schedule_size(config(5, 3)) == 30
    assert check_schedule_size(config(10, 5), limit=10_000) == 252 * 5


def test_too_large_gauntlet_names_its_own_way_out() -> None:
    c = config(40, 6, format=GAUNTLET, challengers=("b0",), deals=2)
    with pytest.raises(ConfigError) as info:
        check_schedule_size(c)
    assert "fewer deals" in str(info.value) and "smaller field" in str(info.value)


def test_estimate_seconds() -> None:
    entries = build_schedule(config(4, 3))  # 12 matches
    assert estimate_seconds(entries, 2.0) == 24.0
    assert estimate_seconds(entries, 2.0, jobs=2) == 12.0
    assert estimate_seconds(12, 2.0, jobs=4) == 6.0
    assert estimate_seconds(entries, lambda e: 10.0 if e.index == 0 else 0.0, jobs=8) == 10.0
    assert estimate_seconds([], 3.0) == 0.0


def test_demo_schedule_is_short() -> None:
    demo = load_config(REPO / "tournaments" / "demo.yaml")
    entries = build_schedule(demo)
    assert 12 <= len(entries) <= 24
    names = Counter(bot for e in entries for bot in e.seats)
    assert len(set(names.values())) == 1  # every bot plays as often


def test_the_stored_description_gives_the_same_size() -> None:
    """What the leaderboard of a stopped run compares its stored matches with."""
    from arena.tournament.config.model import Settle
    from arena.tournament.pairing.schedule import stored_schedule_size

    for c in (config(5, 3), config(6, 4, deals=3), config(6, 3, format=GAUNTLET, challengers=("b4", "b5"), deals=2),
              config(4, 2, format=GAUNTLET, challengers=("b0",))):
        assert stored_schedule_size(c.to_mapping()) == schedule_size(c) == len(build_schedule(c))
    assert stored_schedule_size(config(5, 3, settle=Settle()).to_mapping()) is None
    assert stored_schedule_size({"format": "round_robin", "bots": "garbled", "players": 3, "deals": 1}) is None
