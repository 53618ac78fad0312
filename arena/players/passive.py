"""The passive player: draws from the stock, never buys, discards its first card.

It never goes down, so it scores badly; it exists as a predictable sparring
partner (``arena check`` uses it to set up situations) and it plays exactly
the match runner's fallback actions.
"""

from __future__ import annotations

import random

from ..shanghai.actions import STOCK, Buy, Draw, Play, discard_only
from ..shanghai.view import View


class PassivePlayer:
    def __init__(self, rng: random.Random | None = None, name: str = "passive") -> None:
        self.name = name

    def draw(self, view: View) -> Draw:
        return Draw(STOCK)

    def buy(self, view: View) -> Buy:
        return Buy(False)

    def play(self, view: View) -> Play:
        # view.hand is sorted like the decision's options: the same first card.
        return discard_only(view.hand[0])
