"""Built-in in-process players by name."""

from __future__ import annotations

import random
from collections.abc import Callable

from .base import Player
from .greedy import GreedyPlayer
from .passive import PassivePlayer
from .random_player import RandomPlayer

BUILTIN_PLAYERS: dict[str, Callable[[random.Random], Player]] = {
    "random": lambda rng: RandomPlayer(rng),
    "greedy": lambda rng: GreedyPlayer(rng),
    "passive": lambda rng: PassivePlayer(rng),
}


def make_player(name: str, rng: random.Random) -> Player:
    try:
        factory = BUILTIN_PLAYERS[name]
    except KeyError:
        raise ValueError(f"unknown player {name!r}; built-in players are: {', '.join(BUILTIN_PLAYERS)}") from None
    return factory(rng)
