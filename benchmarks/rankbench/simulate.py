"""Playing graded matches the way arena schedules them, with a cache on disk.

Matches come from arena's own schedule (tables, rotations, duplicate deals,
``derive_seed``) and are played by the real engine with in-process graded
players, four seats, ten hands, default rules.  A match is identified by its
tournament seed and ``(table, rotation, deal)``: the same id always gives the
same cards and the same result, so round robin and matchmaking share the
cache whenever they play the same table on the same deal.
"""

from __future__ import annotations

import itertools
import json
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterator, Sequence

from arena.match.spec import forfeit_places
from arena.players.base import play_match
from arena.shanghai.game import Game
from arena.shanghai.ruleset import Ruleset
from arena.tournament.config import BotConfig, TournamentConfig
from arena.tournament.schedule import ScheduleEntry, derive_seed, iter_schedule

from .graded import Field, GradedPlayer

TABLE_SIZE = 4
#: Bump when the graded player or the record changes, so old caches are not reused.
CACHE_VERSION = "v1"


@dataclass(frozen=True)
class MatchRecord:
    """One played match: seats in seat order, places (1 best, equal totals share), per-hand scores."""

    match_id: str
    table: int
    rotation: int
    deal: int
    group: str
    seats: tuple[str, ...]
    totals: tuple[int, ...]
    places: tuple[int, ...]
    hand_scores: tuple[tuple[int, ...], ...]

    @classmethod
    def from_json(cls, d: dict) -> "MatchRecord":
        return cls(d["match_id"], d["table"], d["rotation"], d["deal"], d["group"], tuple(d["seats"]),
                   tuple(d["totals"]), tuple(d["places"]), tuple(tuple(h) for h in d["hand_scores"]))

    def to_json(self) -> dict:
        return asdict(self)


def tournament_config(field: Field, seed: int, deals: int) -> TournamentConfig:
    """A round-robin tournament of the field (built-in bots only; nothing is started from it)."""
    return TournamentConfig(path=Path("ranking-benchmark"), dir=Path.cwd(), name="ranking-benchmark",
                            bots=tuple(BotConfig(n, builtin="greedy") for n in field.names),
                            players=TABLE_SIZE, deals=deals, seed=seed)


def round_entries(field: Field, seed: int, deal: int) -> list[ScheduleEntry]:
    """Deal round ``deal`` of the round robin: every table, every rotation, deal ``deal``."""
    config = tournament_config(field, seed, deal + 1)
    return [e for e in iter_schedule(config) if e.deal == deal]


class Tables:
    """A field's tables as the schedule numbers them, to play any table on any deal."""

    def __init__(self, field: Field, seed: int) -> None:
        self.field, self.seed = field, seed
        combos = list(itertools.combinations(field.names, TABLE_SIZE))
        self.index = {c: i for i, c in enumerate(combos)}
        self.width = max(3, len(str(max(len(combos) - 1, 0))))

    def canonical(self, bots: Sequence[str]) -> tuple[str, ...]:
        """The table's bots in rotation-0 (listing) order."""
        order = {b: i for i, b in enumerate(self.field.names)}
        return tuple(sorted(bots, key=order.__getitem__))

    def entries(self, bots: Sequence[str], deal: int) -> list[ScheduleEntry]:
        """Every rotation of ``bots`` on deal ``deal``, exactly as ``iter_schedule`` makes them."""
        table_bots = self.canonical(bots)
        table = self.index[table_bots]
        k = len(table_bots)
        seed = derive_seed(self.seed, table, deal)   # duplicate deals: no rotation in the seed
        out = []
        for rotation in range(k):
            seats = [""] * k
            for i, bot in enumerate(table_bots):
                seats[(i + rotation) % k] = bot
            out.append(ScheduleEntry(index=-1, match_id=f"t{table:0{self.width}d}-r{rotation}-d{deal}",
                                     table=table, rotation=rotation, deal=deal, seats=tuple(seats), seed=seed))
        return out


def play_entry(field: Field, entry: ScheduleEntry, rules: Ruleset | None = None) -> MatchRecord:
    """Play one scheduled match with graded players (each with its own seeded Random)."""
    rules = rules or Ruleset()
    game = Game.seeded(rules, entry.players, entry.seed)
    players = [GradedPlayer(field.p_of(b), random.Random(derive_seed(entry.seed, entry.match_id, b)), b)
               for b in entry.seats]
    play_match(game, players)
    totals = tuple(game.totals)
    places = tuple(forfeit_places(totals, [False] * len(totals)))
    return MatchRecord(entry.match_id, entry.table, entry.rotation, entry.deal, entry.group, entry.seats,
                       totals, places, tuple(tuple(h) for h in game.hand_scores))


class Simulator:
    """One tournament seed of a field: plays matches on demand, remembering them in a JSON-lines file."""

    def __init__(self, field: Field, seed: int, cache: Path | None) -> None:
        self.field, self.seed = field, seed
        self.tables = Tables(field, seed)
        self.path = None if cache is None else cache / CACHE_VERSION / field.key / f"seed{seed}.jsonl"
        self.known: dict[str, MatchRecord] = {}
        self.played = 0
        self.cpu_seconds = 0.0
        if self.path is not None and self.path.exists():
            for line in self.path.read_text().splitlines():
                try:
                    rec = MatchRecord.from_json(json.loads(line))
                except (ValueError, KeyError, TypeError):
                    continue        # a line cut short by an interrupted run: play that match again
                self.known[rec.match_id] = rec

    def record(self, entry: ScheduleEntry) -> MatchRecord:
        rec = self.known.get(entry.match_id)
        if rec is None:
            start = time.process_time()
            rec = play_entry(self.field, entry)
            self.cpu_seconds += time.process_time() - start
            self.played += 1
            self.known[entry.match_id] = rec
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("a") as f:
                    f.write(json.dumps(rec.to_json()) + "\n")
        return rec

    def records(self, entries: Sequence[ScheduleEntry]) -> list[MatchRecord]:
        return [self.record(e) for e in entries]

    def round_robin(self, rounds: int) -> Iterator[list[MatchRecord]]:
        """The records of deal round 0, 1, ..., ``rounds - 1``, one list per round."""
        for deal in range(rounds):
            yield self.records(round_entries(self.field, self.seed, deal))
