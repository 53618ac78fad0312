"""Tournament formats: which matches are played, and the prefixes the methods are judged at.

A format's ``run(sim)`` yields ``(matches, records)`` at each checkpoint: the
records of the first ``matches`` matches, in the order arena would rate them
(what the order-dependent sequential baseline sees).

* ``RoundRobin``: whole deal rounds (every table x every rotation, one new
  deal per round); the records are in schedule order (table, deal, rotation),
  as a tournament of that many deals would store them.
* ``Matchmaking``: online; a *policy* looks at the matches so far and names
  the next tables, which are then played (every rotation, on the next deal
  of that table: the deals are the round robin's, so the cache is shared).
  The policy is pluggable: ``POLICIES`` maps a name to a function of
  ``MatchmakingState``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable, Iterator, Protocol, Sequence

from arena.ranking import Game, fit
from arena.tournament.schedule import derive_seed

from .methods import match_games
from .simulate import TABLE_SIZE, MatchRecord, Simulator

Checkpoint = tuple[int, list[MatchRecord]]


class Format(Protocol):
    name: str

    def run(self, sim: Simulator) -> Iterator[Checkpoint]: ...


@dataclass(frozen=True)
class RoundRobin:
    rounds: int
    name: str = "round-robin"

    def run(self, sim: Simulator) -> Iterator[Checkpoint]:
        played: list[MatchRecord] = []
        for records in sim.round_robin(self.rounds):
            played.extend(records)
            yield len(played), sorted(played, key=lambda r: (r.table, r.deal, r.rotation))


@dataclass
class MatchmakingState:
    """What a matchmaking policy may look at: the bots, the matches so far
    (play order), how often each table was played, its own random source."""

    bots: tuple[str, ...]
    rng: random.Random
    table_size: int = TABLE_SIZE
    records: list[MatchRecord] = field(default_factory=list)
    plays: dict[tuple[str, ...], int] = field(default_factory=dict)
    initial: tuple[str, ...] = ()          # a random order, for before any game

    def games(self) -> list[Game]:
        return match_games(self.records)


#: Returns the next tables (each a tuple of ``table_size`` bots); an empty list ends the run.
Policy = Callable[[MatchmakingState], Sequence[Sequence[str]]]


def swiss_windows(state: MatchmakingState) -> list[tuple[str, ...]]:
    """Stand-in policy: sort the bots by batch-TrueSkill mu so far (a random
    order before any game), and seat every window of ``table_size``
    neighbours starting at every second rank, so each adjacent pair of the
    current order shares a table in every step."""
    if state.records:
        ratings = fit(state.games(), state.bots).ratings
        position = {b: i for i, b in enumerate(state.initial)}
        order = sorted(state.bots, key=lambda b: (-ratings[b].mu, position[b]))
    else:
        order = list(state.initial)
    k, n = state.table_size, len(order)
    starts = list(range(0, n - k + 1, 2))
    if starts[-1] != n - k:
        starts.append(n - k)
    return [tuple(order[s:s + k]) for s in starts]


POLICIES: dict[str, Policy] = {"swiss-standin": swiss_windows}


@dataclass(frozen=True)
class Matchmaking:
    policy_name: str
    checkpoints: tuple[int, ...]
    name: str = "matchmaking"

    def run(self, sim: Simulator) -> Iterator[Checkpoint]:
        policy = POLICIES[self.policy_name]
        rng = random.Random(derive_seed(sim.seed, "matchmaking", self.policy_name))
        initial = list(sim.field.names)
        rng.shuffle(initial)      # the policy must not start from the true order
        state = MatchmakingState(sim.field.names, rng, initial=tuple(initial))
        pending = sorted(self.checkpoints)
        while pending:
            tables = policy(state)
            if not tables:
                return
            for bots in tables:
                table = sim.tables.canonical(bots)
                deal = state.plays.get(table, 0)
                state.plays[table] = deal + 1
                state.records.extend(sim.records(sim.tables.entries(table, deal)))
            while pending and len(state.records) >= pending[0]:
                count = pending.pop(0)
                yield count, state.records[:count]
