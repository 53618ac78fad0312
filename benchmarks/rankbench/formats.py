"""Tournament formats: which matches are played, and the prefixes the methods are judged at.

Both formats are arena's own settling rounds (``arena.tournament.pairing.rounds``):
a round is one duplicate deal at each of its tables, every table in every
rotation; before each round after the first ``deals``, the matches so far
are assessed (``arena.ranking.assess``, 95 %, seeded with the tournament
seed, rated by hands or by matches, exactly as ``arena run`` with
``settle:`` does) and the run stops by arena's own rule
(``rounds.StopRule``: at most ten looks, each at 99.5 %), or when the next
round would pass the match budget.

* ``round-robin``: every table each round.  The benchmark plays on after
  the stop (to the budget) so that every method is judged at every round;
  the stop itself is recorded.
* ``swiss``: ``arena.ranking.matchmaking`` picks the tables of each round
  (a random cover first, then windows around the unseparated pairs).  A
  settled Swiss run has no table left to play, so it ends there; later
  checkpoints judge its final matches.

The round policy is pluggable: ``POLICIES`` maps a name to a function with
the signature of ``arena.tournament.pairing.rounds.round_entries``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from arena.ranking import Assessment, assess
from arena.tournament.config.model import RATE_HANDS, ROUND_ROBIN, SWISS, Settle, TournamentConfig
from arena.tournament.pairing import rounds
from arena.tournament.pairing.schedule import ScheduleEntry

from . import methods
from .methods import hand_games, match_games
from .simulate import MatchRecord, Memo, Simulator, tournament_config

#: (config, round number, assessment of the rounds before or None, first index, seats of every
#: earlier match) -> the round's matches.
RoundPolicy = Callable[[TournamentConfig, int, Assessment | None, int, Sequence[Sequence[str]]], list[ScheduleEntry]]

POLICIES: dict[str, tuple[str, RoundPolicy]] = {
    "round-robin": (ROUND_ROBIN, rounds.round_entries),
    "swiss": (SWISS, rounds.round_entries),
}


@dataclass(frozen=True)
class Checkpoint:
    """The first ``matches`` matches (fewer if the run stopped before), in the order arena rates them."""
    matches: int
    records: list[MatchRecord]


@dataclass(frozen=True)
class Stop:
    """Where arena's settling run stops: ``settled`` or ``budget``, after ``matches``, with this order."""
    reason: str
    matches: int
    order: tuple[str, ...]


@dataclass(frozen=True)
class Played:
    """Every match the run played (the last event of a run)."""
    records: list[MatchRecord]


Event = Checkpoint | Stop | Played


class Format(Protocol):
    name: str

    def run(self, sim: Simulator, memo: Memo | None = None) -> Iterator[Event]: ...


@dataclass(frozen=True)
class Rounds:
    """A settling tournament of rounds chosen by ``POLICIES[name]``, judged at ``checkpoints`` (matches)."""

    name: str
    checkpoints: tuple[int, ...]
    budget: int
    deals: int = 1                 # rounds before the first assessment
    replicas: int = 200            # of the stopping rule's assessment (arena's default)
    rating: str = RATE_HANDS       # what one game is (arena's ``rating:``)

    def config(self, sim: Simulator) -> TournamentConfig:
        fmt, _ = POLICIES[self.name]
        return replace(tournament_config(sim.field, sim.seed, self.deals), format=fmt,
                       settle=Settle(0.95, self.budget), rating=self.rating)

    def _assess(self, config: TournamentConfig, played: list[MatchRecord], memo: Memo,
                replicas: int | None = None, tolerance: float | None = None) -> Assessment:
        """The stopping rule's assessment, as arena's settling run makes it (remembered in ``memo``:
        in a Swiss run of 12 bots these take most of the time)."""
        # The matches themselves are in the key, not only their number: which tables a Swiss run
        # played depends on the round policy (arena/tournament/pairing/rounds.py), and a cached assessment
        # of other tables must not be reused when that policy changes.
        tables = hashlib.sha1(repr([(r.match_id, r.seats) for r in played]).encode()).hexdigest()[:16]
        key = f"{self.name}/{self.rating}/assess-t/{len(played)}/{tables}/{self.replicas}/{methods.assess_source()}"
        replicas = replicas or self.replicas
        key += "" if replicas == self.replicas else f"/pairing-{replicas}"
        key += "" if tolerance is None else f"/tolerance-{tolerance:g}"
        known = memo.get(key)
        if known is not None:
            return Assessment(known["order"], {}, known["margins"], 0.95, replicas, 0.0, known["groups"])
        games = (hand_games if self.rating == RATE_HANDS else match_games)(played)
        a = assess(games, config.bot_names, 0.95, replicas, seed=config.seed or 0, tolerance=tolerance)
        memo.put(key, {"order": a.order, "margins": a.margins, "groups": a.groups})
        return a

    def run(self, sim: Simulator, memo: Memo | None = None) -> Iterator[Event]:
        memo = memo or Memo(None)
        config = self.config(sim)
        policy = POLICIES[self.name][1]
        played: list[MatchRecord] = []
        pending = sorted(self.checkpoints)
        stop: Stop | None = None
        rule = rounds.StopRule(self.budget, 0.95)
        round_no = 0
        while True:
            assessment = None
            # After the stop a round robin plays on regardless; Swiss needs the assessment to choose.
            if round_no >= config.deals and (stop is None or config.format == SWISS):
                # As arena's run: a Swiss round is assessed with fewer replicas unless it may stop.
                assessment = rounds.round_assessment(config, len(played), rule,
                                                     lambda r, tol: self._assess(config, played, memo, r, tol))
                if stop is None and rule.settled(len(played), assessment):
                    stop = Stop("settled", len(played), tuple(assessment.order))
                    yield stop
            entries = policy(config, round_no, assessment, len(played), [r.seats for r in played])
            if not entries or len(played) + len(entries) > self.budget:
                break
            played.extend(sim.records(entries))
            round_no += 1
            while pending and len(played) >= pending[0]:
                yield Checkpoint(pending[0], played[:pending.pop(0)])
        if stop is None:
            final = assessment or self._assess(config, played, memo)
            yield Stop("budget", len(played), tuple(final.order))
        for count in pending:           # the run is over: its final matches stand
            yield Checkpoint(count, list(played))
        yield Played(played)


def round_robin(round_size: int, rounds_: int, replicas: int, rating: str = RATE_HANDS) -> Rounds:
    """Whole round-robin rounds, judged after each."""
    return Rounds("round-robin", tuple(round_size * r for r in range(1, rounds_ + 1)), round_size * rounds_,
                  replicas=replicas, rating=rating)


def swiss(every: int, budget: int, replicas: int, rating: str = RATE_HANDS) -> Rounds:
    return Rounds("swiss", tuple(range(every, budget + 1, every)), budget, replicas=replicas, rating=rating)


def default_budget(sim: Simulator, name: str) -> int:
    """arena's own default match budget of a settling run of this format (``rounds.match_budget``)."""
    return rounds.match_budget(replace(Rounds(name, (), 0).config(sim), settle=Settle()))
