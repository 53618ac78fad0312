"""The in-process player interface and a loop that plays a match with it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..shanghai.actions import BUY, DRAW, Buy, Draw, Play
from ..shanghai.game import Game, View


class Player(Protocol):
    """One method per decision kind; each is given the seat's view only."""

    name: str

    def draw(self, view: View) -> Draw: ...

    def buy(self, view: View) -> Buy: ...

    def play(self, view: View) -> Play: ...


def play_match(game: Game, players: Sequence[Player]) -> Game:
    """Ask each seat's player for its decisions until the match is over.

    An in-process player that returns an illegal action is a bug in that
    player, so the IllegalAction propagates.
    """
    if len(players) != game.n:
        raise ValueError(f"{len(players)} players for {game.n} seats")
    while (d := game.decision()) is not None:
        player = players[d.seat]
        view = game.view(d.seat)
        if d.kind == DRAW:
            game.apply(player.draw(view), d.seat)
        elif d.kind == BUY:
            game.apply(player.buy(view), d.seat)
        else:
            game.apply(player.play(view), d.seat)
    return game
