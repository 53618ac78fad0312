"""The match schedule of a tournament: which bots meet, in which seats, on which cards.

A **table** is a group of ``players`` bots.  Seat order matters in Shanghai
(the dealer moves one seat per hand, and play goes left, so a bot sees the
discards of the bot before it first), so every deal of a table is played in
``k`` seatings (``rotation`` 0 to ``k - 1``, the ``r`` of a match id), every
bot in every seat once; which bot sits after which changes from deal to deal
so that, over every ``k - 1`` deals of a table, each bot sits directly after
each other bot equally often (:mod:`.seating`; ``seating: rotate`` plays the
rotations of the listed order instead, rotation ``r`` putting bot ``i`` in
seat ``(i + r) mod k``).  Each table is played ``deals`` times over (deal ``d``).

* Round robin: every combination of ``players`` bots (in the order the bots
  are listed) is a table.
* Gauntlet: each challenger, in the order listed, sits at a table with every
  combination of ``players - 1`` bots of the field (the bots that are not
  challengers).  Challengers never meet each other.

The seed of a match's shuffles is derived with SHA-256 from the tournament
seed, the table (for a gauntlet: the field combination, so every challenger
is dealt the same cards against the same opponents) and the deal; with
``duplicate`` off the rotation is mixed in too.  So with duplicate deals on
(the default) every rotation of a table is dealt the same cards and seat luck
cancels out.  Seeds never depend on parallelism, the clock or Python's hash
randomisation, and are below 2**63 (they fit a SQLite INTEGER).

Entries come in a fixed order: table, then deal, then rotation, so the
rotations of one duplicate deal are next to each other.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..config.model import GAUNTLET, MAX_MATCHES, ROUND_ROBIN, ConfigError, TournamentConfig
from .seating import balanced_offsets, design, seatings

__all__ = ["ScheduleEntry", "build_schedule", "iter_schedule", "schedule_size", "table_count",
           "check_schedule_size", "estimate_seconds", "derive_seed", "redeal", "table_offsets", "MAX_MATCHES", "ConfigError"]


@dataclass(frozen=True)
class ScheduleEntry:
    """One match of the schedule.

    ``index`` is its position in the schedule (0-based); ``match_id`` is a
    stable name such as ``t003-r1-d0`` (table 3, rotation 1, deal 0);
    ``seats`` holds the bot names in seat order (seat 0 first); ``seed`` is
    the seed of the game's shuffles.
    """

    index: int
    match_id: str
    table: int
    rotation: int
    deal: int
    seats: tuple[str, ...]
    seed: int

    @property
    def players(self) -> int:
        return len(self.seats)

    @property
    def group(self) -> str:
        """The table and deal (``t003-d0``): the rotations of one duplicate deal share it."""
        return self.match_id.rsplit("-r", 1)[0] + f"-d{self.deal}"

    def seat_of(self, bot: str) -> int:
        return self.seats.index(bot)

    def __str__(self) -> str:
        return f"{self.match_id}: {', '.join(self.seats)} (seed {self.seed})"


def derive_seed(seed: int | str, *parts: int | str) -> int:
    """A deterministic 63-bit seed from the tournament seed (or a league's key, ``LeagueConfig.secret``) and ``parts``."""
    text = ":".join(["arena-schedule", str(seed), *map(str, parts)])
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big") >> 1


def _tables(config: TournamentConfig) -> Iterator[tuple[tuple[str, ...], int]]:
    """Each table's bots (rotation-0 order) and the number its deal seeds derive from."""
    k = config.players
    if config.format == GAUNTLET:
        openings = list(itertools.combinations(config.field_bots, k - 1))
        for challenger in config.challengers:
            for n, others in enumerate(openings):
                yield (challenger, *others), n
    else:
        for n, bots in enumerate(itertools.combinations(config.bot_names, k)):
            yield bots, n


def table_count(config: TournamentConfig) -> int:
    return _table_count(len(config.bots), config.players,
                        len(config.challengers) if config.format == GAUNTLET else None)


def _table_count(bots: int, players: int, challengers: int | None) -> int:
    """Tables of a round robin of ``bots`` (``challengers`` None), or of a
    gauntlet: each challenger with every ``players`` - 1 of the others."""
    if challengers is not None:
        return challengers * math.comb(bots - challengers, players - 1)
    return math.comb(bots, players)


def schedule_size(config: TournamentConfig) -> int:
    """The number of matches of ``build_schedule(config)``, without building it."""
    return table_count(config) * config.players * config.deals


def stored_schedule_size(config: Mapping[str, Any]) -> int | None:
    """``schedule_size`` of a tournament as its results store it (the JSON
    description, not a checked file); None when the run decides how many
    matches it plays (``settle``, Swiss) or the description is not readable."""
    try:
        if config.get("settle") is not None or config.get("format") not in (ROUND_ROBIN, GAUNTLET):
            return None
        bots = [b["name"] for b in config["bots"]]
        k, deals = int(config["players"]), int(config["deals"])
        challengers = list(config.get("challengers") or ())
    except (KeyError, TypeError, ValueError):
        return None
    gauntlet = config["format"] == GAUNTLET
    return _table_count(len(bots), k, sum(b in challengers for b in bots) if gauntlet else None) * k * deals


def table_offsets(config: TournamentConfig) -> dict[int, int]:
    """The seating block of deal 0 of each table, by the number its seeds
    derive from (deal ``d`` plays block ``offset + d``): chosen in schedule
    order to balance neighbours across the tables (``seating.NeighbourBalance``).
    A gauntlet's challengers share them, as they share their deals: each
    challenger meets the same opponents in the same seats on the same cards."""
    blocks = len(design(config.players, config.seating))
    # What can be out of balance: the deals left over after whole designs;
    # a run in rounds may stop after any number of them.
    left_over = config.deals % blocks
    lengths = tuple(range(1, blocks)) if config.settle is not None else (left_over,) if left_over else (1,)
    return _offsets(tuple(_tables(config)), config.players, config.seating, config.format == GAUNTLET, lengths)


@functools.lru_cache(maxsize=8)
def _offsets(tables: tuple[tuple[tuple[str, ...], int], ...], k: int, seating: str,
             gauntlet: bool, lengths: tuple[int, ...]) -> dict[int, int]:
    first: dict[int, tuple[str, ...]] = {}
    for bots, seed_table in tables:
        first.setdefault(seed_table, ("", *bots[1:]) if gauntlet else bots)
    offsets = balanced_offsets(list(first.values()), k, seating, lengths)
    return dict(zip(first, offsets))


def iter_schedule(config: TournamentConfig) -> Iterator[ScheduleEntry]:
    """The schedule, lazily (same entries as ``build_schedule``)."""
    width = max(3, len(str(max(table_count(config) - 1, 0))))
    offsets = table_offsets(config)
    index = 0
    for table, (bots, seed_table) in enumerate(_tables(config)):
        for deal in range(config.deals):
            assert config.seed is not None, "a schedule needs the tournament seed"
            deal_seed = derive_seed(config.seed, seed_table, deal) if config.duplicate else None
            for rotation, seats in enumerate(seatings(bots, offsets[seed_table] + deal, config.seating)):
                seed = deal_seed if deal_seed is not None else derive_seed(config.seed, seed_table, deal, rotation)
                yield ScheduleEntry(
                    index=index,
                    match_id=f"t{table:0{width}d}-r{rotation}-d{deal}",
                    table=table,
                    rotation=rotation,
                    deal=deal,
                    seats=tuple(seats),
                    seed=seed,
                )
                index += 1


def redeal(entries: Sequence[ScheduleEntry], times_set_aside: Mapping[str, int], seed: int) -> list[ScheduleEntry]:
    """``entries`` with new cards where ``arena run --rerun`` set matches aside.

    A set-aside match was played, and its deal may have been seen since (the
    report's replays and ``arena show`` show every hand), so a program handed
    in afterwards could know it.  Every rotation of a table has the same bots,
    so a re-run sets aside all of a table's played rotations; each table and
    deal (``group``) set aside ``k`` times is dealt from a seed derived from
    the old one and ``k``: its rotations still share one deal (duplicate
    deals), a rotation never played before gets it too, and a second re-run
    deals yet other cards.  Derived from the tournament seed, the new seeds
    are as unguessable as the first, and stored with the matches they deal."""
    if not times_set_aside:
        return list(entries)
    times: dict[str, int] = {}
    for e in entries:
        times[e.group] = max(times.get(e.group, 0), times_set_aside.get(e.match_id, 0))
    return [replace(e, seed=derive_seed(seed, "re-deal", times[e.group], e.seed)) if times[e.group] else e
            for e in entries]


def build_schedule(config: TournamentConfig) -> list[ScheduleEntry]:
    """Every match of the tournament, in schedule order."""
    if config.seed is None:
        raise ValueError("the tournament has no seed yet (runner.settle_seed chooses one)")
    return list(iter_schedule(config))


def check_schedule_size(config: TournamentConfig, limit: int = MAX_MATCHES) -> int:
    """The schedule size, or ``ConfigError`` when it exceeds ``limit`` (naming the way out)."""
    size = schedule_size(config)
    if size <= limit:
        return size
    k, n = config.players, len(config.bots)
    per_table = f"{k} rotations" + (f" x {config.deals} deals" if config.deals > 1 else "")
    fewer_deals = ", fewer deals" if config.deals > 1 else ""
    if config.format == GAUNTLET:
        what = (f"a gauntlet of {len(config.challengers)} challengers against {len(config.field_bots)} field bots "
                f"with {k} players per table is {table_count(config):,} tables x {per_table} = {size:,} matches "
                f"(limit {limit:,})")
        way_out = f"use fewer players per table{fewer_deals}, fewer challengers or a smaller field"
    else:
        what = (f"a round robin of {n} bots with {k} players per table is {table_count(config):,} tables "
                f"x {per_table} = {size:,} matches (limit {limit:,}); far too large for round robin")
        way_out = (f"use 'format: gauntlet' with 'challengers' to test some bots against the field, "
                   f"or fewer players per table{fewer_deals}, or fewer bots")
    raise config.error("players", f"{what}: {way_out}")


def estimate_seconds(entries: Sequence[ScheduleEntry] | int,
                     seconds_per_match: float | Callable[[ScheduleEntry], float],
                     jobs: int = 1) -> float:
    """Rough wall time of playing ``entries`` with ``jobs`` matches in parallel.

    ``seconds_per_match`` is a constant or a function of the entry (e.g. by
    table size or by which bots play); ``entries`` may also be a count when
    the time per match is a constant.
    """
    if isinstance(entries, int):
        if callable(seconds_per_match):
            raise TypeError("a count of entries needs a constant seconds_per_match")
        times = [float(seconds_per_match)] * entries
    elif callable(seconds_per_match):
        times = [float(seconds_per_match(e)) for e in entries]
    else:
        times = [float(seconds_per_match)] * len(entries)
    if not times:
        return 0.0
    jobs = max(1, min(jobs, len(times)))
    return max(sum(times) / jobs, max(times))
