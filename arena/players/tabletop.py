"""Helpers players share: a scratch copy of the table to try lay-offs on."""

from __future__ import annotations

from collections.abc import Iterable

from ..shanghai.actions import LayOff
from ..shanghai.cards import JOKER_RANK, Card
from ..shanghai.game import TableMeld
from ..shanghai.melds import Meld, laid_off, lay_off_ends
from ..shanghai.ruleset import SET


def try_lay_off(meld: Meld, c: Card, wild_deuces: bool) -> tuple[Meld, str | None] | None:
    """The meld with ``c`` added and the end used, or None if it does not fit."""
    ends = lay_off_ends(meld, c, wild_deuces)
    if not ends:
        return None
    end = ends[-1]  # a wild that fits both ends of a run goes high
    return laid_off(meld, c, end, wild_deuces), end


_NONE: list[int] = []  # no melds (never changed)


def lay_off_all(
    hand: list[Card], table: list[Meld], order: Iterable[int], candidates: Iterable[Card], wild_deuces: bool,
) -> list[LayOff]:
    """Lay off ``candidates`` (in order) wherever they fit, updating ``hand`` and ``table``.

    Each card goes on the first meld in ``order`` it fits.  Never leaves
    exactly one card in hand: a turn that ends with a discard must keep a
    card, so the last lay-off is undone if that would happen.
    """
    steps: list[LayOff] = []
    undo: list[tuple[int, Meld, Card]] = []
    meld_order = list(order)
    # A natural fits only a set of its rank, or a run of its suit just below
    # or above it (an ace also above a king), and most tries fail: so the
    # melds are indexed once by the rank of each set and the suit of each
    # run (a lay-off changes neither), as places in ``meld_order``, and a
    # natural only tries those, in that order.
    sets_of: dict[int, list[int]] | None = None
    runs_of: dict[str, list[int]] = {}
    for c in candidates:
        if c not in hand:
            continue
        rank = c.rank
        natural = not (rank == JOKER_RANK or (wild_deuces and rank == 2))
        if not natural:
            tries = meld_order
        else:
            if sets_of is None:
                sets_of = {}
                for place, i in enumerate(meld_order):
                    m = table[i]
                    if m.kind == SET:
                        sets_of.setdefault(m.rank, []).append(place)
                    else:
                        runs_of.setdefault(m.suit, []).append(place)
            sets = sets_of.get(rank, _NONE)
            runs = runs_of.get(c.suit, _NONE)
            if not sets and not runs:
                continue
            places = sorted(sets + runs) if sets and runs else sets or runs
            tries = [meld_order[p] for p in places]
        for i in tries:
            m = table[i]
            if natural and m.kind != SET:
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
