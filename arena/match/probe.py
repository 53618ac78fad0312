"""``probe_bot``: a bot program's start and first decisions, timed.

For the estimate a run prints before it plays (``tournament.estimate``): a
match as ``run_match`` plays it, stopped once the bot's seat has been asked
a few decisions (more, up to twice as many, until its moves tell which
built-in player it plays like; and on, up to ``deeper``, while they took
less than one decision's limit in all), every process of it then killed.
Nothing is stored; the bot's stderr goes nowhere.  It takes what the bot
takes: at most its start-up limit and a few decision limits.

Beside the times it notes which built-in player made each of the bot's moves
too, if one did: a bot that plays as ``passive`` (never goes down) makes its
hands run to the turn cap, several times as long as one that plays as
``greedy``.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from ..players.base import Player
from ..players.registry import make_player
from ..shanghai.actions import BUY, DRAW, PLAY, Action
from ..shanghai.game import Decision, Game
from ..shanghai.view import View
from .pool import BotPool
from .runner import Seat, _local_seats, _start_bots
from .seats import RemoteSeat
from .spec import TIMEOUT, MatchSpec

__all__ = ["LOOKALIKES", "Probe", "probe_bot"]

# The built-in players a bot's moves are compared with, as the estimate's
# stand-ins for it.
LOOKALIKES = ("passive", "greedy")


@dataclass(frozen=True)
class Probe:
    """What a bot did in its probe: ``ready`` whether it said 'ready' in
    time (``missed_start``: it did not, within its start-up limit), its
    start's seconds, and its first ``decisions`` answered in
    ``decision_seconds`` in all, beside ``timeouts``; ``problem``: why it
    did not start (its first fault, in words); ``plays_like``: the one of
    ``LOOKALIKES`` that made every move it answered, a play among them
    (None: none did, or it made no play)."""

    ready: bool
    missed_start: bool
    startup_seconds: float
    decisions: int
    decision_seconds: float
    timeouts: int
    problem: str | None = None
    plays_like: str | None = None


def probe_bot(spec: MatchSpec, seat: int, decisions: int = 3, deeper: int = 0) -> Probe:
    """Start ``spec``'s match and play it until ``seat`` (a bot program's)
    has been asked ``decisions`` times and its moves told its lookalike (at
    most twice as many times), or is forfeited, or the match ends; then on,
    up to ``deeper`` decisions in all, while what it has taken stays under
    one decision's limit (``_cheap``)."""
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
        like, told = Lookalike(spec.seed), False
        while (d := game.decision()) is not None and not bot.forfeited:
            told = told or like.enough(bot.stats.count + bot.stats.timeouts, decisions)
            if told and not _cheap(bot, spec.time.per_decision_seconds, deeper):
                break
            if d.seat != seat:
                seats[d.seat].decide(game, d)
            elif told:
                bot.decide(game, d)         # its lookalike stays as told by its first decisions
            else:
                like.watch(game, d, bot)
        return Probe(True, False, startup, bot.stats.count, bot.stats.total, bot.stats.timeouts,
                     plays_like=like.plays_like())
    finally:
        for s in seats:
            if isinstance(s, RemoteSeat):
                pool.discard(s.handle)
        pool.close()


def _cheap(bot: RemoteSeat, limit: float, deeper: int) -> bool:
    """Whether to ask on: asked fewer than ``deeper`` times, and all its
    decisions so far took less than one decision's ``limit`` (a timeout
    counts whole).  A healthy bot's thirty decisions take a fraction of a
    second, and a bot that turns slow only later in a hand or the match
    (a search that grows with its hand, a loop in a branch it reaches once
    down) shows it here: in the run each such timeout costs the whole limit,
    ten to a hundred times what its first decisions took."""
    stats = bot.stats
    return stats.count + stats.timeouts < deeper and stats.total + stats.timeouts * limit < limit


class Lookalike:
    """Which of ``LOOKALIKES`` made every move a bot answered (in time, and
    taken: a fallback is no move of its own)."""

    def __init__(self, seed: int) -> None:
        self.players: dict[str, Player] = {role: make_player(role, random.Random(seed)) for role in LOOKALIKES}
        self.alike = set(LOOKALIKES)
        self.plays = 0

    def watch(self, game: Game, d: Decision, bot: RemoteSeat) -> None:
        """Let ``bot`` decide ``d``, and compare its move with theirs."""
        view = game.view(d.seat)
        theirs = {role: _move(player, d.kind, view) for role, player in self.players.items()}
        answered, faults = bot.stats.count, len(bot.faults)
        bot.decide(game, d)
        if bot.stats.count == answered or len(bot.faults) != faults:
            return
        move = game.actions[-1][1]
        self.alike = {role for role in self.alike if theirs[role] == move}
        self.plays += d.kind == PLAY

    def enough(self, asked: int, decisions: int) -> bool:
        """Asked ``decisions`` times, a play answered and the lookalike told
        (one of them, or none), or asked twice that."""
        told = self.plays > 0 and len(self.alike) < len(LOOKALIKES)
        return asked >= 2 * decisions or (asked >= decisions and told)

    def plays_like(self) -> str | None:
        return next(iter(self.alike)) if self.plays and len(self.alike) == 1 else None


def _move(player: Player, kind: str, view: View) -> Action:
    """What ``player`` would do at a decision of ``kind`` seen as ``view``."""
    if kind == DRAW:
        return player.draw(view)
    if kind == BUY:
        return player.buy(view)
    return player.play(view)
