"""``probe_bot``: a bot program's start and first decisions, timed.

For the estimate a run prints before it plays (``tournament.estimate``): a
match as ``run_match`` plays it, stopped once the bot's seat has been asked
a few decisions, every process of it then killed.  Nothing is stored; the
bot's stderr goes nowhere.  It takes what the bot takes: at most its
start-up limit and a few decision limits.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..shanghai.game import Game
from .pool import BotPool
from .runner import Seat, _local_seats, _start_bots
from .seats import RemoteSeat
from .spec import TIMEOUT, MatchSpec

__all__ = ["Probe", "probe_bot"]


@dataclass(frozen=True)
class Probe:
    """What a bot did in its probe: ``ready`` whether it said 'ready' in
    time (``missed_start``: it did not, within its start-up limit), its
    start's seconds, and its first ``decisions`` answered in
    ``decision_seconds`` in all, beside ``timeouts``; ``problem``: why it
    did not start (its first fault, in words)."""

    ready: bool
    missed_start: bool
    startup_seconds: float
    decisions: int
    decision_seconds: float
    timeouts: int
    problem: str | None = None


def probe_bot(spec: MatchSpec, seat: int, decisions: int = 3) -> Probe:
    """Start ``spec``'s match and play it until ``seat`` (a bot program's)
    has been asked ``decisions`` times, or is forfeited, or the match ends."""
    game = Game.seeded(spec.ruleset(), len(spec.seats), spec.seed, spec.deal)
    pool = BotPool()
    seats: list[Seat] = []
    try:
        seats = _local_seats(spec, None, seats)
        started = time.perf_counter()
        seats = _start_bots(spec, game, pool, seats, {})
        startup = time.perf_counter() - started
        bot = seats[seat]
        if not isinstance(bot, RemoteSeat) or bot.forfeited:
            missed = any(f.kind == TIMEOUT and f.decision is None for f in bot.faults)
            problem = bot.faults[0].detail if bot.faults else "it did not start"
            return Probe(False, missed, startup, 0, 0.0, 0, problem)
        while (d := game.decision()) is not None and not bot.forfeited \
                and bot.stats.count + bot.stats.timeouts < decisions:
            seats[d.seat].decide(game, d)
        return Probe(True, False, startup, bot.stats.count, bot.stats.total, bot.stats.timeouts)
    finally:
        for s in seats:
            if isinstance(s, RemoteSeat):
                pool.discard(s.handle)
        pool.close()
