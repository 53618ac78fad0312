"""Built-in in-process players by name."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import Player


# Each player's module is imported when a player is made, not with the names:
# a process that only checks names (the CLI, the tournament's parent) does
# not load the engine and the players' move search.
def _random(rng: random.Random) -> Player:
    # lazy: arena.cli must not load the players (tests/test_lean_imports.py PLAYING)
    from .random_player import RandomPlayer
    return RandomPlayer(rng)


def _greedy(rng: random.Random) -> Player:
    # lazy: arena.cli must not load the players (tests/test_lean_imports.py PLAYING)
    from .greedy import GreedyPlayer
    return GreedyPlayer(rng)


def _passive(rng: random.Random) -> Player:
    # lazy: arena.cli must not load the players (tests/test_lean_imports.py PLAYING)
    from .passive import PassivePlayer
    return PassivePlayer(rng)


BUILTIN_PLAYERS: dict[str, Callable[[random.Random], Player]] = {
    "random": _random,
    "greedy": _greedy,
    "passive": _passive,
}


def make_player(name: str, rng: random.Random) -> Player:
    try:
        factory = BUILTIN_PLAYERS[name]
    except KeyError:
        raise ValueError(f"unknown player {name!r}; built-in players are: {', '.join(BUILTIN_PLAYERS)}") from None
    return factory(rng)
