"""Graded players: greedy, but each decision is a random one with probability ``p``.

A field of graded players has a known true order: a lower ``p`` is stronger
(the benchmark checks this on its own pooled data rather than assuming it).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from arena.players.greedy import GreedyPlayer
from arena.players.random_player import RandomPlayer
from arena.shanghai.actions import Buy, Draw, Play
from arena.shanghai.game import View

#: The field of issue 8.
P6 = (0.0, 0.15, 0.3, 0.5, 0.75, 1.0)


class GradedPlayer:
    """Plays each decision like ``RandomPlayer`` with probability ``p``, else like ``GreedyPlayer``.

    One ``random.Random`` drives the coin and the random player's choices (the
    greedy player is deterministic), so a player replays exactly from its seed.
    """

    def __init__(self, p: float, rng: random.Random, name: str = "graded") -> None:
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"p must be in [0, 1], got {p}")
        self.p = p
        self.rng = rng
        self.name = name
        self._greedy = GreedyPlayer(rng, name)
        self._random = RandomPlayer(rng, name)

    def _pick(self) -> GreedyPlayer | RandomPlayer:
        # random() < 0 never holds and random() < 1 always does: p = 0 and 1 are pure.
        return self._random if self.rng.random() < self.p else self._greedy

    def draw(self, view: View) -> Draw:
        return self._pick().draw(view)

    def buy(self, view: View) -> Buy:
        return self._pick().buy(view)

    def play(self, view: View) -> Play:
        return self._pick().play(view)


@dataclass(frozen=True)
class Field:
    """Bots of known strength: ``ps[i]`` is bot ``names[i]``'s random share; listed strongest first."""

    ps: tuple[float, ...]
    #: List the bots in a shuffled order (another per tournament seed) instead
    #: of their true one: an effect of list order must not pass for skill.
    shuffled: bool = False

    def __post_init__(self) -> None:
        if list(self.ps) != sorted(self.ps) or len(set(self.ps)) != len(self.ps):
            raise ValueError(f"a field lists distinct p values in increasing order, got {self.ps}")
        if len(set(self.names)) != len(self.ps):
            raise ValueError(f"p values too close to name apart: {self.ps}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f"p{p:.3f}" for p in self.ps)

    @property
    def truth(self) -> tuple[str, ...]:
        """The true order, best first."""
        return self.names

    def listed(self, seed: int) -> tuple[str, ...]:
        """The bots in the order a tournament of ``seed`` lists them."""
        if not self.shuffled:
            return self.names
        names = list(self.names)
        random.Random(f"list-order:{seed}").shuffle(names)
        return tuple(names)

    def p_of(self, name: str) -> float:
        return self.ps[self.names.index(name)]

    @property
    def key(self) -> str:
        """A file-safe name of the field, for the cache."""
        return f"n{len(self.ps)}-" + "-".join(f"{round(p * 1000):04d}" for p in self.ps) + (
            "-shuffled" if self.shuffled else "")


def evenly_spaced(n: int) -> tuple[float, ...]:
    """``n`` values of p from 0 to 1, evenly spaced."""
    return tuple(round(i / (n - 1), 4) for i in range(n))


# Strength is not linear in p: in a calibration run (21 values of p, 0 to 1
# by 0.05, 1,600 matches of random tables of 4) the Bradley-Terry log-strength
# from pairwise finishing orders fell as about 1.27 - 1.31 p - 1.78 p^2, so
# evenly spaced p crowds the strong end (12 bots: neighbour gaps from 0.13 at
# the top to 0.43 at the bottom). These spreads invert that curve for equal
# gaps: 0.28 (12 bots) and 0.21 (16 bots), against 0.24 for the hardest pair
# of issue 8's six (p 0 vs 0.15).
STRENGTH_SPREADS = {
    12: (0.0, 0.17, 0.3, 0.41, 0.51, 0.59, 0.67, 0.75, 0.81, 0.88, 0.94, 1.0),
    16: (0.0, 0.13, 0.24, 0.33, 0.41, 0.48, 0.54, 0.6, 0.66, 0.72, 0.77, 0.82, 0.87, 0.91, 0.96, 1.0),
}

SPREADS = ("strength", "even")


def field_for(n: int, spread: str = "strength", shuffled: bool = False) -> Field:
    """The field of ``n`` bots: issue 8's six; otherwise equal strength steps (``strength``,
    where known) or evenly spaced p (``even``); ``shuffled``: listed out of order."""
    if n == 6:
        return Field(P6, shuffled)
    if spread == "strength" and n in STRENGTH_SPREADS:
        return Field(STRENGTH_SPREADS[n], shuffled)
    return Field(evenly_spaced(n), shuffled)
