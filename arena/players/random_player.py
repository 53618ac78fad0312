"""The random player: uniformly random legal choices; it goes down when it can."""

from __future__ import annotations

import random

from ..shanghai.actions import Buy, Draw, GoDown, MeldCards, Play, Step
from ..shanghai.draws import choice, shuffle
from ..shanghai.finder import find_contract
from ..shanghai.view import View
from .tabletop import lay_off_all, table_melds


class RandomPlayer:
    def __init__(self, rng: random.Random, name: str = "random") -> None:
        self.rng = rng
        self.name = name

    def draw(self, view: View) -> Draw:
        assert view.decision is not None
        return Draw(choice(self.rng, view.decision.options))

    def buy(self, view: View) -> Buy:
        return Buy(self.rng.random() < 0.5)

    def play(self, view: View) -> Play:
        rules = view.rules
        hand = list(view.hand)
        table = table_melds(view.melds)
        steps: list[Step] = []
        down = view.down[view.seat]
        if not down:
            melds = find_contract(hand, view.contract, rules)
            if melds is not None:
                for m in melds:
                    for c in m.cards:
                        hand.remove(c)
                steps.append(GoDown(tuple(MeldCards(m.cards, m.kind) for m in melds)))
                table.extend(melds)
                down = True
        if down and table:
            order = list(range(len(table)))
            shuffle(self.rng, order)
            candidates = list(hand)
            shuffle(self.rng, candidates)
            steps.extend(lay_off_all(hand, table, order, candidates, rules.wild_deuces))
        if not hand:
            return Play(tuple(steps), None)
        if len(hand) == 1:
            # Going down would leave one card, and discarding it is not allowed.
            return Play((), choice(self.rng, view.hand))
        return Play(tuple(steps), choice(self.rng, hand))
