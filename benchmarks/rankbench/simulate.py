"""Playing graded matches the way arena schedules them, with a cache on disk.

Matches come from arena's own schedule (``arena.tournament.pairing.rounds``: tables,
rotations, duplicate deals, ``derive_seed``) and are played by the real
engine with in-process graded players, four seats, ten hands, default rules.
A match is cached under its tournament seed and match id, and replayed only
if its seats or seed differ (a Swiss id names a round and a table, not the
bots), so the same match is never played twice.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from arena.match.spec import forfeit_places
from arena.players.base import play_match
from arena.shanghai.game import Game
from arena.shanghai.ruleset import Ruleset
from arena.tournament.config.model import BotConfig, TournamentConfig
from arena.tournament.pairing.rounds import round_entries
from arena.tournament.pairing.schedule import ScheduleEntry, derive_seed

from .graded import Field, GradedPlayer

TABLE_SIZE = 4
#: Bump when the graded player or the record changes, so old caches are not reused.
CACHE_VERSION = "v2"


@dataclass(frozen=True)
class MatchRecord:
    """One played match: seats in seat order, places (1 best, equal totals share), per-hand scores."""

    match_id: str
    seed: int
    table: int
    rotation: int
    deal: int
    group: str
    seats: tuple[str, ...]
    totals: tuple[int, ...]
    places: tuple[int, ...]
    hand_scores: tuple[tuple[int, ...], ...]

    @classmethod
    def from_json(cls, d: dict) -> MatchRecord:
        return cls(d["match_id"], d["seed"], d["table"], d["rotation"], d["deal"], d["group"], tuple(d["seats"]),
                   tuple(d["totals"]), tuple(d["places"]), tuple(tuple(h) for h in d["hand_scores"]))

    def to_json(self) -> dict:
        return asdict(self)


def tournament_config(field: Field, seed: int, deals: int) -> TournamentConfig:
    """A round-robin tournament of the field (built-in bots only; nothing is started from it)."""
    return TournamentConfig(path=Path("ranking-benchmark"), dir=Path.cwd(), name="ranking-benchmark",
                            bots=tuple(BotConfig(n, builtin="greedy") for n in field.listed(seed)),
                            players=TABLE_SIZE, deals=deals, seed=seed)


def play_entry(field: Field, entry: ScheduleEntry, rules: Ruleset | None = None) -> MatchRecord:
    """Play one scheduled match with graded players (each with its own seeded Random)."""
    rules = rules or Ruleset()
    game = Game.seeded(rules, entry.players, entry.seed)
    players = [GradedPlayer(field.p_of(b), random.Random(derive_seed(entry.seed, entry.match_id, b)), b)
               for b in entry.seats]
    play_match(game, players)
    totals = tuple(game.totals)
    places = tuple(forfeit_places(totals, [False] * len(totals)))
    return MatchRecord(entry.match_id, entry.seed, entry.table, entry.rotation, entry.deal, entry.group, entry.seats,
                       totals, places, tuple(tuple(h) for h in game.hand_scores))


class Memo:
    """Values of earlier runs by key, kept in a JSON-lines file (or only in memory: ``path`` None)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.known: dict[str, Any] = {}
        if path is not None and path.exists():
            for line in path.read_text().splitlines():
                try:
                    d = json.loads(line)
                    self.known[d["key"]] = d["value"]
                except (ValueError, KeyError, TypeError):
                    continue       # a line cut short by an interrupted run
        elif path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)

    def get(self, key: str) -> Any:
        return self.known.get(key)

    def put(self, key: str, value: Any) -> None:
        self.known[key] = value
        if self.path is not None:
            with self.path.open("a") as f:
                f.write(json.dumps({"key": key, "value": value}) + "\n")


class Simulator:
    """One tournament seed of a field: plays matches on demand, remembering them in a JSON-lines file."""

    def __init__(self, field: Field, seed: int, cache: Path | None) -> None:
        self.field, self.seed = field, seed
        self.dir = None if cache is None else cache / CACHE_VERSION / field.key
        self.path = None if self.dir is None else self.dir / f"seed{seed}.jsonl"
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
        # Swiss ids name a round and a table, not its bots: a changed policy gives other seats.
        if rec is None or rec.seats != entry.seats or rec.seed != entry.seed:
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

    def round_robin(self, rounds: int) -> list[MatchRecord]:
        """The records of round-robin deal rounds 0 .. ``rounds - 1``."""
        config = tournament_config(self.field, self.seed, rounds)
        return [r for deal in range(rounds) for r in self.records(round_entries(config, deal, None, 0))]
