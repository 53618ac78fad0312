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
from ..shanghai.melds import Meld, lay_off_ends, try_swap_wild
from ..shanghai.ruleset import RUN, Contract
from ..shanghai.view import View
from .tabletop import lay_off_all, table_melds

MAX_HAND_FOR_BUYING = 16


def is_wild(c: Card, wild_deuces: bool) -> bool:
    return c.rank == JOKER_RANK or (wild_deuces and c.rank == 2)


# rank -> its bit in a suit's mask of natural values (an ace is both 1 and 14)
_VALUE_BITS = (0, 1 << 1 | 1 << 14) + tuple(1 << r for r in range(2, 14))
# rank -> the values one or two away from it; the ace, low and high: 2, 3, 12, 13
_NEAR = (0,) + tuple(sum(1 << v for v in (r - 2, r - 1, r + 1, r + 2, *((12, 13) if r == 1 else ()))
                         if 1 <= v <= 14) for r in range(1, 14))
_PAIR_SCORE = (0.0, 3.0, 6.0)


class HandShape:
    """What ``usefulness`` needs of a hand, counted once.

    Scoring each discard candidate against the whole hand was quadratic in
    the hand and a sixth of greedy's time; these counts make it constant per
    card, with the same scores.  A suit's natural values are a bit mask, so
    a card's near neighbours are one AND and a bit count.
    """

    __slots__ = ("wild_deuces", "sets", "runs", "per_rank", "per_card", "suit_masks")

    def __init__(self, hand: Sequence[Card], contract: Contract, wild_deuces: bool) -> None:
        self.wild_deuces = wild_deuces
        self.sets = bool(contract.sets)
        self.runs = bool(contract.runs)
        per_rank = [0] * 14
        per_card: dict[Card, int] = {}
        suit_masks = {"C": 0, "D": 0, "H": 0, "S": 0, "": 0}
        bits = _VALUE_BITS
        for o in hand:
            r = o.rank
            per_rank[r] += 1
            per_card[o] = per_card.get(o, 0) + 1
            if r != JOKER_RANK and not (wild_deuces and r == 2):  # not is_wild, inlined
                suit_masks[o.suit] |= bits[r]
        self.per_rank = per_rank
        self.per_card = per_card
        self.suit_masks = suit_masks

    def usefulness(self, c: Card) -> float:
        r = c.rank
        if r == JOKER_RANK or (self.wild_deuces and r == 2):
            return 100.0
        score = 0.0
        if self.sets:
            # other cards of c's rank; copies of c are the same object, not counted
            same = self.per_rank[r] - self.per_card.get(c, 0)
            score += _PAIR_SCORE[same if same < 2 else 2]
        if self.runs:
            # distinct values 1-2 away from c's (an ace is 1 and 14) held by
            # naturals of its suit; no other rank has one of c's own values
            near = (self.suit_masks[c.suit] & _NEAR[r]).bit_count()
            score += 2.0 * (near if near < 3 else 3)
        return score


def usefulness(c: Card, hand: Sequence[Card], contract: Contract, wild_deuces: bool) -> float:
    """How much ``c`` helps towards ``contract`` given the rest of ``hand``:
    pairs for sets, natural neighbours within two in its suit for runs, wilds always.

    ``HandShape(hand, ...).usefulness(c)`` for one card, in one pass over the
    hand.  Whether ``hand`` holds ``c`` itself changes nothing: copies of
    ``c`` are not its pairs, and its own value is not its neighbour.
    """
    r = c.rank
    if r == JOKER_RANK or (wild_deuces and r == 2):
        return 100.0
    score = 0.0
    if contract.sets:
        same = 0
        for o in hand:
            if o.rank == r and o is not c:
                same += 1
        score += _PAIR_SCORE[same if same < 2 else 2]
    if contract.runs:
        suit = c.suit
        mask = 0
        for o in hand:
            if o.suit == suit and not (wild_deuces and o.rank == 2):  # a joker has no suit
                mask |= _VALUE_BITS[o.rank]
        near = (mask & _NEAR[r]).bit_count()
        score += 2.0 * (near if near < 3 else 3)
    return score


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
            # whether it fits somewhere: the ends it fits, without building the meld
            wd = rules.wild_deuces
            return any(lay_off_ends(m.meld, c, wd) for m in view.melds)
        # as a card of the hand with c drawn; c's presence changes no score
        return usefulness(c, view.hand, view.contract, rules.wild_deuces) >= threshold

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
        wd = rules.wild_deuces
        naturals: list[Card] | None = None
        for i, m in enumerate(table):
            if not any(m.wild):
                continue
            if naturals is None:  # not set order: cards hash by identity
                naturals = [c for c in sorted(set(hand), key=sort_key) if not is_wild(c, wd)]
            run = m.kind == RUN
            for c in naturals:
                # only a natural of a set's rank, or of a run's suit, can replace its wild
                if (c.suit != m.suit) if run else (c.rank != m.rank):
                    continue
                swapped = try_swap_wild(m, c, None, wd)
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
                if (c.suit != m.suit) if m.kind == RUN else (c.rank != m.rank):
                    continue  # it cannot replace a wild there (see _go_down)
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
