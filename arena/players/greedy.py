"""The greedy player: goes down as soon as it can, lays off everything it can,
keeps the cards that build towards the contract and discards the rest.

Card usefulness is a cheap heuristic (pairs for sets, near neighbours in a
suit for runs, wilds always); going down uses the exact contract finder, so
the greedy player never misses a possible contract, wild swaps included.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from ..shanghai.actions import STOCK, UPCARD, Buy, Draw, GoDown, MeldCards, Play, Step, Swap
from ..shanghai.cards import JOKER_RANK, Card, sort_key
from ..shanghai.finder import could_go_down, find_best_contract
from ..shanghai.game import View
from ..shanghai.melds import Meld, try_swap_wild
from ..shanghai.ruleset import Contract
from .tabletop import lay_off_all, table_melds, try_lay_off

MAX_HAND_FOR_BUYING = 16


def is_wild(c: Card, wild_deuces: bool) -> bool:
    return c.rank == JOKER_RANK or (wild_deuces and c.rank == 2)


class HandShape:
    """What ``usefulness`` needs of a hand, counted once.

    Scoring each discard candidate against the whole hand was quadratic in
    the hand and a sixth of greedy's time; these counts make it constant per
    card, with the same scores.
    """

    __slots__ = ("wild_deuces", "sets", "runs", "per_rank", "per_card", "suit_values")

    def __init__(self, hand: Sequence[Card], contract: Contract, wild_deuces: bool) -> None:
        self.wild_deuces = wild_deuces
        self.sets = bool(contract.sets)
        self.runs = bool(contract.runs)
        per_rank = [0] * 14
        per_card: dict[Card, int] = {}
        suit_values: dict[str, set[int]] = {}
        for o in hand:
            r = o.rank
            per_rank[r] += 1
            per_card[o] = per_card.get(o, 0) + 1
            if r != JOKER_RANK and not (wild_deuces and r == 2):  # not is_wild, inlined
                values = suit_values.get(o.suit)
                if values is None:
                    values = suit_values[o.suit] = set()
                values.add(r)
                if r == 1:
                    values.add(14)
        self.per_rank = per_rank
        self.per_card = per_card
        self.suit_values = suit_values

    def usefulness(self, c: Card) -> float:
        r = c.rank
        if r == JOKER_RANK or (self.wild_deuces and r == 2):
            return 100.0
        score = 0.0
        if self.sets:
            # other cards of c's rank; copies of c are the same object, not counted
            same = self.per_rank[r] - self.per_card.get(c, 0)
            score += (0.0, 3.0, 6.0)[min(same, 2)]
        if self.runs:
            # distinct values 1-2 away from c's (an ace is 1 and 14) held by
            # naturals of its suit; no other rank has one of c's own values
            have = self.suit_values.get(c.suit, ())
            near = (r - 2 in have) + (r - 1 in have) + (r + 1 in have) + (r + 2 in have)
            if r == 1:  # also below the high ace (-1, 0, 2, 3 were counted above)
                near += (12 in have) + (13 in have)
            score += 2.0 * min(near, 3)
        return score


def usefulness(c: Card, hand: Sequence[Card], contract: Contract, wild_deuces: bool) -> float:
    """How much ``c`` helps towards ``contract`` given the rest of ``hand``:
    pairs for sets, natural neighbours within two in its suit for runs, wilds always."""
    return HandShape(hand, contract, wild_deuces).usefulness(c)


class GreedyPlayer:
    def __init__(self, rng: random.Random, name: str = "greedy") -> None:
        self.rng = rng
        self.name = name

    # -- draw and buy ----------------------------------------------------------
    def _wanted(self, view: View, c: Card, threshold: float) -> bool:
        rules = view.rules
        if is_wild(c, rules.wild_deuces):
            return True
        if view.down[view.seat]:
            return any(try_lay_off(m.meld, c, rules.wild_deuces) for m in view.melds)
        hand = list(view.hand)
        return usefulness(c, hand + [c], view.contract, rules.wild_deuces) >= threshold

    def draw(self, view: View) -> Draw:
        assert view.decision is not None
        if UPCARD in view.decision.options and view.upcard is not None and self._wanted(view, view.upcard, 3.0):
            return Draw(UPCARD)
        return Draw(STOCK)

    def buy(self, view: View) -> Buy:
        c = view.pile_top
        if c is None or len(view.hand) >= MAX_HAND_FOR_BUYING:
            return Buy(False)
        return Buy(self._wanted(view, c, 6.0))

    # -- the play ----------------------------------------------------------------
    def _go_down(self, view: View, hand: list[Card], table: list[Meld]) -> tuple[list[Step], list[Card], list[Meld]] | None:
        """Steps that take the seat down (swapping table wilds first if needed)."""
        rules = view.rules
        melds = find_best_contract(hand, view.contract, rules)
        if melds is not None:
            return [self._down_step(melds)], self._without(hand, melds), table + melds
        # Try one wild swap from the table to complete the contract.  A hand
        # that cannot go down even with the wild added cannot with the wild
        # instead of one of its cards, so each wild is first checked once.
        helps: dict[Card, bool] = {}
        for i, m in enumerate(table):
            if not any(m.wild):
                continue
            for c in sorted(set(hand), key=sort_key):  # not set order: cards hash by identity
                if is_wild(c, rules.wild_deuces):
                    continue
                swapped = try_swap_wild(m, c, None, rules.wild_deuces)
                if swapped is None:
                    continue
                new, wild = swapped
                if wild not in helps:
                    helps[wild] = could_go_down(hand + [wild], view.contract, rules)
                if not helps[wild]:
                    continue
                trial = list(hand)
                trial.remove(c)
                trial.append(wild)
                melds = find_best_contract(trial, view.contract, rules)
                if melds is not None:
                    new_table = list(table)
                    new_table[i] = new
                    return [Swap(i, c), self._down_step(melds)], self._without(trial, melds), new_table + melds
        return None

    @staticmethod
    def _down_step(melds: list[Meld]) -> GoDown:
        return GoDown(tuple(MeldCards(m.cards, m.kind) for m in melds))

    @staticmethod
    def _without(hand: list[Card], melds: list[Meld]) -> list[Card]:
        rest = list(hand)
        for m in melds:
            for c in m.cards:
                rest.remove(c)
        return rest

    def play(self, view: View) -> Play:
        rules = view.rules
        wd = rules.wild_deuces
        hand = list(view.hand)
        table = table_melds(view.melds)
        steps: list[Step] = []
        down = view.down[view.seat]
        if not down:
            result = self._go_down(view, hand, table)
            if result is not None:
                down_steps, rest, new_table = result
                trial_hand, trial_table = list(rest), list(new_table)
                lay = lay_off_all(trial_hand, trial_table, range(len(trial_table)), self._lay_order(trial_hand, wd), wd)
                if len(trial_hand) != 1:
                    steps = down_steps + list(lay)
                    hand, table, down = trial_hand, trial_table, True
        elif table:
            steps.extend(lay_off_all(hand, table, range(len(table)), self._lay_order(hand, wd), wd))
            steps.extend(self._swap_and_lay(hand, table, wd))
        if not hand:
            return Play(tuple(steps), None)
        return Play(tuple(steps), self._discard(view, hand, down))

    @staticmethod
    def _lay_order(hand: list[Card], wd: bool) -> list[Card]:
        # Naturals first, costliest first: wilds are kept as long as possible.
        return sorted(hand, key=lambda c: (c.rank == JOKER_RANK or (wd and c.rank == 2), -c.points))

    def _swap_and_lay(self, hand: list[Card], table: list[Meld], wd: bool) -> list[Step]:
        """Swap a natural that cannot be laid off for a table wild, then lay the wild off."""
        steps: list[Step] = []
        for c in list(hand):
            if is_wild(c, wd) or len(hand) <= 2:
                continue
            for i, m in enumerate(table):
                if not any(m.wild):
                    continue
                swapped = try_swap_wild(m, c, None, wd)
                if swapped is None:
                    continue
                new, wild = swapped
                trial_hand = list(hand)
                trial_hand.remove(c)
                trial_hand.append(wild)
                trial_table = list(table)
                trial_table[i] = new
                lay = lay_off_all(trial_hand, trial_table, range(len(trial_table)), [wild], wd)
                if lay:  # only worth it if the wild leaves the hand again
                    hand[:] = trial_hand
                    table[:] = trial_table
                    steps.append(Swap(i, c))
                    steps.extend(lay)
                break
        return steps

    def _discard(self, view: View, hand: list[Card], down: bool) -> Card:
        wd = view.rules.wild_deuces
        naturals = [c for c in hand if not is_wild(c, wd)] or hand
        if down:
            return max(naturals, key=lambda c: (c.points, c.rank))
        useful = HandShape(hand, view.contract, wd).usefulness
        return min(naturals, key=lambda c: (useful(c), -c.points, -c.rank))
