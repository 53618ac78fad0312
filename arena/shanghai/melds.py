"""Melds: sets and runs with wild cards, and the changes the table allows.

Runs are given in ascending order, so every wild's position is explicit.  A
run's positions are numbered by value: 1 is the low ace, 2..13 the ranks, 14
the high ace.  Every function either returns a new frozen ``Meld`` or raises
``IllegalAction`` with a reason a student can act on.
"""

from __future__ import annotations

from collections.abc import Sequence

from .cards import JOKER_RANK, RANK_TEXT, Card, card, cards_text
from .errors import IllegalAction
from .record import record
from .ruleset import RUN, SET
from .vocab import LayOffEnd, MeldKind

LOW = LayOffEnd.LOW
HIGH = LayOffEnd.HIGH

SUIT_NAMES = {"C": "club", "D": "diamond", "H": "heart", "S": "spade"}


@record
class Meld:
    """A legal set or run.

    For a set, ``rank`` is its rank and ``suit`` is "".  For a run, ``rank`` is
    the value of its first position (1 = low ace .. 14 = high ace) and ``suit``
    its suit.  ``wild`` marks, position by position, which cards are wild.
    """

    kind: MeldKind
    cards: tuple[Card, ...]
    rank: int
    suit: str
    wild: tuple[bool, ...]

    @property
    def naturals(self) -> int:
        return self.wild.count(False)

    @property
    def wilds(self) -> int:
        return self.wild.count(True)

    @property
    def low(self) -> int:
        return self.rank

    @property
    def high(self) -> int:
        return self.rank + len(self.cards) - 1 if self.kind == RUN else self.rank

    @property
    def text(self) -> str:
        return cards_text(self.cards)

    def stands_for(self, i: int) -> Card:
        """The natural card position ``i`` of a run represents."""
        value = self.rank + i
        return card(1 if value == 14 else value, self.suit)

    def represents(self) -> list[str]:
        """What each position stands for, as text: the card for runs, the rank for sets."""
        if self.kind == RUN:
            return [self.stands_for(i).text for i in range(len(self.cards))]
        return [RANK_TEXT[self.rank]] * len(self.cards)

    def describe(self) -> str:
        if self.kind == SET:
            return f"set of {RANK_TEXT[self.rank]}s ({self.text})"
        lo, hi = self.stands_for(0).text, self.stands_for(len(self.cards) - 1).text
        return f"run {lo}-{hi} ({self.text})"


def _is_wild_candidate(c: Card, wild_deuces: bool) -> bool:
    return c.rank == JOKER_RANK or (wild_deuces and c.rank == 2)


# Every rule check below has a core that returns the result or the reason it
# is refused (a str), and a raising wrapper with the same reason.  Players and
# the engine's legality checks try many things that fail; building a message
# or raising for each failure was a large share of their time, so reasons are
# only formatted on the failing branch, and only the wrappers raise.


def _limit_detail(wild: Sequence[bool]) -> str | None:
    """Why ``wild`` breaks the wilds-vs-naturals limit, or None when it holds."""
    w = sum(wild)
    n = len(wild) - w
    if w > n:
        return (f"{w} wild card{'s' if w != 1 else ''} but only {n} natural "
                f"card{'s' if n != 1 else ''}; wilds may not outnumber naturals")
    return None


def _unwrap(result: Meld | str) -> Meld:
    if isinstance(result, str):
        raise IllegalAction(result)
    return result


def set_or_reason(cards: Sequence[Card], wild_deuces: bool = True) -> Meld | str:
    """The set ``cards`` make, or the reason they do not make one."""
    cards = tuple(cards)
    naturals = [c for c in cards if not _is_wild_candidate(c, wild_deuces)]
    if naturals:
        rank = naturals[0].rank
    elif any(c.rank == 2 for c in cards):
        rank = 2  # a set of 2s: the 2s stand for themselves
    else:
        return f"set {cards_text(cards)}: a set needs natural cards, not only jokers"
    wild: list[bool] = []
    for c in cards:
        if c.rank == JOKER_RANK:
            wild.append(True)
        elif c.rank == rank:
            wild.append(False)
        elif wild_deuces and c.rank == 2:
            wild.append(True)
        else:
            return (f"set {cards_text(cards)}: {c} is not a {RANK_TEXT[rank]}, "
                    f"so it cannot join a set of {RANK_TEXT[rank]}s")
    detail = _limit_detail(wild)
    if detail is not None:
        return f"set {cards_text(cards)}: {detail}"
    return Meld(SET, cards, rank, "", tuple(wild))


def make_set(cards: Sequence[Card], wild_deuces: bool = True) -> Meld:
    return _unwrap(set_or_reason(cards, wild_deuces))


def _run_start(cards: tuple[Card, ...], wild_deuces: bool) -> tuple[int, str] | str:
    """The run's suit and the value of its first position from its first
    natural, or the reason (without the label) there is none."""
    for i, anchor in enumerate(cards):  # noqa: B007 (i is the anchor's position, used below)
        if not _is_wild_candidate(anchor, wild_deuces):
            break
    else:
        return "a run needs natural cards (2s and jokers are wild)"
    if anchor.rank == 1:
        if i == 0:
            return 1, anchor.suit
        if i != len(cards) - 1:
            return f"nothing goes below an ace, but {cards[0]} comes before {anchor}"
        return 14 - i, anchor.suit
    start = anchor.rank - i
    if start < 1:
        return f"nothing goes below an ace, but {anchor} has {i} cards before it"
    return start, anchor.suit


def run_or_reason(cards: Sequence[Card], wild_deuces: bool = True) -> Meld | str:
    """The run ``cards`` make (low to high), or the reason they do not make one."""
    cards = tuple(cards)
    if len(cards) > 13:
        return f"run {cards_text(cards)}: a run has at most 13 cards (an ace is low or high, not both)"
    found = _run_start(cards, wild_deuces)
    if isinstance(found, str):
        return f"run {cards_text(cards)}: {found}"
    start, suit = found
    wild: list[bool] = []
    prev: Card | None = None
    for i, c in enumerate(cards):
        value = start + i
        if value > 14:
            return f"run {cards_text(cards)}: nothing goes above an ace, but {c} does (runs do not wrap around)"
        if c.rank == JOKER_RANK:
            wild.append(True)
        elif wild_deuces and c.rank == 2 and not (c.suit == suit and value == 2):
            wild.append(True)
        else:
            expected = 1 if value == 14 else value
            if c.suit != suit:
                return f"run {cards_text(cards)}: {c} is not a {SUIT_NAMES[suit]}; a run is all one suit"
            if c.rank != expected:
                where = f"does not follow {prev}" if prev is not None else "cannot start this run"
                want = card(expected, suit)
                hint = "; runs are written low to high" if c.rank < expected and c.rank != 1 else ""
                return f"run {cards_text(cards)}: {c} {where} (this place needs {want} or a wild card{hint})"
            wild.append(False)
        prev = c
    detail = _limit_detail(wild)
    if detail is not None:
        return f"run {cards_text(cards)}: {detail}"
    return Meld(RUN, cards, start, suit, tuple(wild))


def make_run(cards: Sequence[Card], wild_deuces: bool = True) -> Meld:
    return _unwrap(run_or_reason(cards, wild_deuces))


def meld_or_reason(cards: Sequence[Card], kind: MeldKind | str, wild_deuces: bool = True) -> Meld | str:
    if kind == SET:
        return set_or_reason(cards, wild_deuces)
    if kind == RUN:
        return run_or_reason(cards, wild_deuces)
    raise ValueError(f"unknown meld kind {kind!r}")


def make_meld(cards: Sequence[Card], kind: MeldKind | str, wild_deuces: bool = True) -> Meld:
    return _unwrap(meld_or_reason(cards, kind, wild_deuces))


def guess_kind(cards: Sequence[Card], wild_deuces: bool = True) -> MeldKind:
    """The kind a player most likely meant: a set when two natural cards share a
    rank (no run can hold that) or all share one rank, else a run."""
    naturals = [c.rank for c in cards if not _is_wild_candidate(c, wild_deuces)]
    return SET if len(set(naturals)) < len(naturals) or len(set(naturals)) <= 1 else RUN


def lay_off_or_reason(meld: Meld, c: Card, end: LayOffEnd | str | None, wild_deuces: bool = True) -> Meld | str:
    """``meld`` with ``c`` added, or the reason it cannot be; for runs ``end``
    is LOW or HIGH (inferred when clear)."""
    if meld.kind == SET:
        grown = set_or_reason(meld.cards + (c,), wild_deuces)
        if isinstance(grown, str):
            return f"cannot lay off {c} on {meld.describe()}: {grown.split(': ', 1)[1]}"
        return grown
    wild = _is_wild_candidate(c, wild_deuces)
    ends = (LOW, HIGH) if end is None else (end,)
    if end not in (None, LOW, HIGH):
        return f"lay-off end must be 'low' or 'high', got {end!r}"
    fits: list[Meld] = []
    reasons: list[str] = []
    for e in ends:
        if e == LOW and meld.low <= 1:
            reasons.append(f"nothing goes below {meld.stands_for(0)}")
            continue
        if e == HIGH and meld.high >= 14:
            reasons.append(f"nothing goes above {meld.stands_for(len(meld.cards) - 1)}")
            continue
        target = meld.low - 1 if e == LOW else meld.high + 1
        needed = card(1 if target == 14 else target, meld.suit)
        if target == 1 and meld.high == 14 or target == 14 and meld.low == 1:
            reasons.append("a run cannot hold the ace both low and high")
            continue
        is_natural_fit = c == needed
        if not wild and not is_natural_fit:
            reasons.append(f"the {e} end needs {needed}")
            continue
        cards = (c,) + meld.cards if e == LOW else meld.cards + (c,)
        flag = not is_natural_fit
        new_wild = (flag,) + meld.wild if e == LOW else meld.wild + (flag,)
        new_rank = meld.rank - 1 if e == LOW else meld.rank
        detail = _limit_detail(new_wild)
        if detail is not None:
            reasons.append(detail)
            continue
        fits.append(Meld(RUN, cards, new_rank, meld.suit, new_wild))
    if not fits:
        return f"cannot lay off {c} on {meld.describe()}: {'; '.join(reasons)}"
    if len(fits) > 1:
        return f"{c} could go at either end of {meld.describe()}: say which end ('low' or 'high')"
    return fits[0]


def lay_off(meld: Meld, c: Card, end: LayOffEnd | str | None, wild_deuces: bool = True) -> Meld:
    """Add one card to ``meld``; for runs ``end`` is LOW or HIGH (inferred when clear)."""
    return _unwrap(lay_off_or_reason(meld, c, end, wild_deuces))


def laid_off(meld: Meld, c: Card, end: LayOffEnd | None, wild_deuces: bool = True) -> Meld:
    """The meld ``lay_off(meld, c, end)`` builds, for an ``end`` that
    ``lay_off_ends(meld, c)`` gave: without checking again or wording reasons.

    Players lay off in their inner loops, after ``lay_off_ends`` has said
    where the card fits; this only builds the result.
    """
    if meld.kind == SET:
        # a set's rank stays (a wild never changes it); c is natural iff of that rank
        r = c.rank
        wild = not (r == meld.rank and r != JOKER_RANK)
        return Meld(SET, meld.cards + (c,), meld.rank, "", meld.wild + (wild,))
    if end == LOW:
        target = meld.rank - 1
        wild = not (c.suit == meld.suit and c.rank == target)
        return Meld(RUN, (c,) + meld.cards, target, meld.suit, (wild,) + meld.wild)
    target = meld.rank + len(meld.cards)
    wild = not (c.suit == meld.suit and c.rank == (1 if target == 14 else target))
    return Meld(RUN, meld.cards + (c,), meld.rank, meld.suit, meld.wild + (wild,))


def _swap_at(meld: Meld, natural: Card, take: Card | None, wild_deuces: bool) -> int:
    """The position of the wild ``natural`` may replace in ``meld``, or -1."""
    if _is_wild_candidate(natural, wild_deuces) and not (
        natural.rank == 2 and (meld.kind == SET and meld.rank == 2 or meld.kind == RUN)
    ):
        return -1
    if meld.kind == RUN:
        for i, is_wild in enumerate(meld.wild):
            if is_wild and meld.stands_for(i) is natural and (take is None or meld.cards[i] is take):
                return i
        return -1
    if natural.rank != meld.rank:
        return -1
    for i, is_wild in enumerate(meld.wild):
        if is_wild and (take is None or meld.cards[i] is take):
            return i
    return -1


def _swapped(meld: Meld, natural: Card, i: int) -> tuple[Meld, Card]:
    cards = meld.cards[:i] + (natural,) + meld.cards[i + 1:]
    wild = meld.wild[:i] + (False,) + meld.wild[i + 1:]
    return Meld(meld.kind, cards, meld.rank, meld.suit, wild), meld.cards[i]


def _swap_reason(meld: Meld, natural: Card, take: Card | None, wild_deuces: bool) -> str:
    """Why ``natural`` cannot replace a wild of ``meld`` (when _swap_at found none)."""
    if _is_wild_candidate(natural, wild_deuces) and not (
        natural.rank == 2 and (meld.kind == SET and meld.rank == 2 or meld.kind == RUN)
    ):
        return f"cannot swap {natural} into {meld.describe()}: only a natural card can replace a wild"
    if meld.kind == RUN:
        wanted = [f"{meld.stands_for(i)}" for i, w in enumerate(meld.wild) if w]
        if not wanted:
            return f"cannot swap {natural} into {meld.describe()}: it holds no wild card"
        return (f"cannot swap {natural} into {meld.describe()}: its wilds stand for {', '.join(wanted)} "
                "and only that exact card may replace one")
    if natural.rank != meld.rank:
        return f"cannot swap {natural} into {meld.describe()}: only a {RANK_TEXT[meld.rank]} may replace its wild"
    what = f"no {take} standing as a wild" if take is not None else "no wild card"
    return f"cannot swap {natural} into {meld.describe()}: it holds {what}"


def try_swap_wild(meld: Meld, natural: Card, take: Card | None = None,
                  wild_deuces: bool = True) -> tuple[Meld, Card] | None:
    """Like ``swap_wild``, but None instead of raising when the swap is refused.

    For players trying every card against every meld: most tries fail, and a
    failure here costs no message and no exception.
    """
    i = _swap_at(meld, natural, take, wild_deuces)
    return None if i < 0 else _swapped(meld, natural, i)


def swap_or_reason(meld: Meld, natural: Card, take: Card | None = None,
                   wild_deuces: bool = True) -> tuple[Meld, Card] | str:
    """The swapped meld and the wild taken, or the reason the swap is refused."""
    i = _swap_at(meld, natural, take, wild_deuces)
    return _swap_reason(meld, natural, take, wild_deuces) if i < 0 else _swapped(meld, natural, i)


def swap_wild(meld: Meld, natural: Card, take: Card | None = None, wild_deuces: bool = True) -> tuple[Meld, Card]:
    """Replace a wild in ``meld`` by ``natural``; return the new meld and the wild taken."""
    done = swap_or_reason(meld, natural, take, wild_deuces)
    if isinstance(done, str):
        raise IllegalAction(done)
    return done


def lay_off_ends(meld: Meld, c: Card, wild_deuces: bool = True) -> tuple[LayOffEnd | None, ...]:
    """Where ``c`` may be laid off on ``meld``, without building anything.

    ``(None,)`` for a set it fits; the fitting run ends (LOW, HIGH);
    ``()`` when it does not fit.  Players call this in their inner loops, so it
    avoids the exceptions and messages of ``lay_off``.
    """
    wild = _is_wild_candidate(c, wild_deuces)
    n_wild = meld.wilds
    n_nat = len(meld.cards) - n_wild
    if meld.kind == SET:
        if c.rank == meld.rank and not (wild and meld.rank != 2):
            return (None,)
        if wild and n_wild + 1 <= n_nat:
            return (None,)
        return ()
    ends: list[LayOffEnd] = []
    lo, hi = meld.low, meld.high
    for end, target in ((LOW, lo - 1), (HIGH, hi + 1)):
        if target < 1 or target > 14 or (target == 1 and hi == 14) or (target == 14 and lo == 1):
            continue
        natural = c.suit == meld.suit and c.rank == (1 if target == 14 else target)
        if natural or (wild and n_wild + 1 <= n_nat):
            ends.append(end)
    return tuple(ends)
