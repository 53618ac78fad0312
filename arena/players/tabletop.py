"""Helpers players share: a scratch copy of the table to try lay-offs on."""

from __future__ import annotations

from collections.abc import Iterable

from ..shanghai.actions import LayOff
from ..shanghai.cards import JOKER_RANK, Card
from ..shanghai.melds import Meld, laid_off, lay_off_ends
from ..shanghai.ruleset import SET
from ..shanghai.view import TableMeld
from ..shanghai.vocab import LayOffEnd


def try_lay_off(meld: Meld, c: Card, wild_deuces: bool) -> tuple[Meld, LayOffEnd | None] | None:
    """The meld with ``c`` added and the end used, or None if it does not fit."""
    ends = lay_off_ends(meld, c, wild_deuces)
    if not ends:
        return None
    end = ends[-1]  # a wild that fits both ends of a run goes high
    return laid_off(meld, c, end, wild_deuces), end


def lay_off_all(
    hand: list[Card], table: list[Meld], order: Iterable[int], candidates: Iterable[Card], wild_deuces: bool,
) -> list[LayOff]:
    """Lay off ``candidates`` (in order) wherever they fit, updating ``hand`` and ``table``.

    Never leaves exactly one card in hand: a turn that ends with a discard must
    keep a card, so the last lay-off is undone if that would happen.
    """
    steps: list[LayOff] = []
    undo: list[tuple[int, Meld, Card]] = []
    meld_order = list(order)
    for c in candidates:
        if c not in hand:
            continue
        # A natural fits only a set of its rank, or a run of its suit just below
        # or above it (an ace also above a king): skip the other melds before
        # paying for lay_off_ends, since most tries fail.
        rank = c.rank
        natural = not (rank == JOKER_RANK or (wild_deuces and rank == 2))
        for i in meld_order:
            m = table[i]
            if natural:
                if m.kind == SET:
                    if m.rank != rank:
                        continue
                elif m.suit != c.suit:
                    continue
                else:
                    hi = m.rank + len(m.cards) - 1
                    if rank != m.rank - 1 and rank != hi + 1 and not (rank == 1 and hi == 13):
                        continue
            fit = try_lay_off(m, c, wild_deuces)
            if fit is None:
                continue
            new, end = fit
            undo.append((i, table[i], c))
            table[i] = new
            hand.remove(c)
            steps.append(LayOff(i, c, end))
            break
    if len(hand) == 1 and steps:
        i, old, c = undo[-1]
        table[i] = old
        hand.append(c)
        steps.pop()
    return steps


def table_melds(melds: Iterable[TableMeld]) -> list[Meld]:
    return [t.meld for t in melds]
