"""Checking a play (go down, lay off, swap, discard) without raising.

``check_play`` works on copies of the seat's hand and the table and returns
either what the play leads to (``Staged``) or the reason it is refused, as a
string.  ``Game.apply`` raises ``IllegalAction`` with that reason, so bots
get the same typed error and message as ever; ``Game.legal_reason`` returns
it.  Nothing here raises on a legal play, nor formats a message for one.
"""

from __future__ import annotations

from bisect import insort
from collections import Counter
from typing import NamedTuple

from .actions import GoDown, LayOff, MeldCards, Play, Swap
from .cards import Card, cards_text, sort_key
from .events import LaidOff, Swapped, WentDown
from .melds import HIGH, LOW, Meld, guess_kind, lay_off_or_reason, meld_or_reason, swap_or_reason
from .ruleset import RUN, SET, Ruleset
from .view import TableMeld


class Staged(NamedTuple):
    """A checked play: the seat's hand and the table after it, and its events."""

    hand: list[Card]
    melds: list[TableMeld]
    down: bool
    pending: list[WentDown | LaidOff | Swapped]


def build_meld(mc: MeldCards, wild_deuces: bool) -> Meld | str:
    """The meld a player lays down; with no kind given, the likelier kind
    first, then the other, and both kinds' reasons if neither works (the
    player may have meant the other: ``5C 6C QC`` as a set, say)."""
    if mc.kind is not None:
        return meld_or_reason(mc.cards, mc.kind, wild_deuces)
    first = guess_kind(mc.cards, wild_deuces)
    built = meld_or_reason(mc.cards, first, wild_deuces)
    if not isinstance(built, str):
        return built
    second = RUN if first == SET else SET
    other = meld_or_reason(mc.cards, second, wild_deuces)
    if not isinstance(other, str):
        return other
    # Each reason starts "run 5C 6C QC: ": the cards are named once.
    return f"{built}; nor a {second}: {other.split(': ', 1)[-1]}"


def contract_reason(melds: list[Meld], rules: Ruleset, hand_no: int) -> str | None:
    """Why ``melds`` do not lay down hand ``hand_no``'s contract, or None."""
    contract = rules.contract(hand_no - 1)
    if len(melds) != len(contract.melds):
        return (f"the contract of hand {hand_no} is {contract.describe()}: lay down exactly "
                f"{len(contract.melds)} melds, not {len(melds)}")
    for kind, specs in ((SET, contract.sets), (RUN, contract.runs)):
        mine = sorted((m for m in melds if m.kind == kind), key=lambda m: -len(m.cards))
        if len(mine) != len(specs):
            return (f"the contract of hand {hand_no} is {contract.describe()}, "
                    f"but you laid down {len(mine)} {kind}{'s' if len(mine) != 1 else ''}")
        for m, spec in zip(mine, sorted(specs, key=lambda s: -s.min_len)):
            if len(m.cards) < spec.min_len:
                return (f"{m.describe()} has {len(m.cards)} cards but the contract needs a {kind} "
                        f"of at least {spec.min_len}")
    if rules.distinct_set_ranks:
        ranks = Counter(m.rank for m in melds if m.kind == SET)
        for m in melds:
            if m.kind == SET and ranks[m.rank] > 1:
                return f"two sets of {m.represents()[0]}s: the sets of a contract must have different ranks"
    return None


def take(hand: list[Card], c: Card) -> str | None:
    """Remove ``c`` from ``hand``, or say that it is not there."""
    if c not in hand:
        return f"you do not hold {c} (your hand: {cards_text(sorted(hand, key=sort_key))})"
    hand.remove(c)
    return None


def table_meld(melds: list[TableMeld], idx: int) -> TableMeld | str:
    if not 0 <= idx < len(melds):
        if not melds:
            return "there are no melds on the table"
        return f"there is no meld {idx} on the table (meld ids are 0..{len(melds) - 1})"
    return melds[idx]


def _go_down(step: GoDown, hand: list[Card], melds: list[TableMeld], seat: int, rules: Ruleset,
             hand_no: int) -> WentDown | str:
    built: list[Meld] = []
    for mc in step.melds:
        m = build_meld(mc, rules.wild_deuces)
        if isinstance(m, str):
            return m
        built.append(m)
    reason = contract_reason(built, rules, hand_no)
    if reason is not None:
        return reason
    for m in built:
        for c in m.cards:
            reason = take(hand, c)
            if reason is not None:
                return reason
    placed = [TableMeld(len(melds) + i, seat, m) for i, m in enumerate(built)]
    melds.extend(placed)
    return WentDown(hand_no, seat, [t.to_json() for t in placed])


def _meld_and_card(step: LayOff | Swap, hand: list[Card], melds: list[TableMeld]) -> TableMeld | str:
    """The table meld a step names, with its card taken from the hand; or why not."""
    target = table_meld(melds, step.meld)
    if isinstance(target, str):
        return target
    reason = take(hand, step.card)
    return target if reason is None else reason


def _lay_off(step: LayOff, hand: list[Card], melds: list[TableMeld], wd: bool, seat: int,
             hand_no: int) -> LaidOff | str:
    target = _meld_and_card(step, hand, melds)
    if isinstance(target, str):
        return target
    new = lay_off_or_reason(target.meld, step.card, step.end, wd)
    if isinstance(new, str):
        return new
    melds[target.id] = TableMeld(target.id, target.owner, new)
    end = None if new.kind == SET else (HIGH if new.rank == target.meld.rank else LOW)
    return LaidOff(hand_no, seat, target.id, step.card.text, end, [c.text for c in new.cards])


def _swap(step: Swap, hand: list[Card], melds: list[TableMeld], wd: bool, seat: int,
          hand_no: int) -> Swapped | str:
    target = _meld_and_card(step, hand, melds)
    if isinstance(target, str):
        return target
    done = swap_or_reason(target.meld, step.card, step.take, wd)
    if isinstance(done, str):
        return done
    new, wild = done
    melds[target.id] = TableMeld(target.id, target.owner, new)
    insort(hand, wild, key=sort_key)  # a seat's hand stays in hand order
    return Swapped(hand_no, seat, target.id, step.card.text, wild.text)


def check_play(play: Play, hand: list[Card], melds: list[TableMeld], was_down: bool, seat: int,
               rules: Ruleset, hand_no: int) -> Staged | str:
    """Check ``play`` step by step on copies of ``hand`` and ``melds``."""
    discard = play.discard
    if not play.steps and discard is not None and len(hand) > 1 and discard in hand:
        # A plain discard, most plays: the table is unchanged, so the staged
        # table is the same list (views keep their tuple of it), and there is
        # nothing else to check.  Anything unusual takes the general path,
        # which words the reason.
        rest = list(hand)
        rest.remove(discard)
        return Staged(rest, melds, was_down, [])
    hand = list(hand)
    melds = list(melds)
    down = was_down
    swapped = False
    pending: list[WentDown | LaidOff | Swapped] = []
    wd = rules.wild_deuces
    for step in play.steps:
        done: WentDown | LaidOff | Swapped | str
        if isinstance(step, GoDown):
            if down:
                return "you are already down: no new melds after going down (lay off instead)"
            done = _go_down(step, hand, melds, seat, rules, hand_no)
            down = not isinstance(done, str)
        elif isinstance(step, LayOff):
            if not down:
                return f"you cannot lay off {step.card}: lay-offs come only after going down"
            done = _lay_off(step, hand, melds, wd, seat, hand_no)
        elif isinstance(step, Swap):
            done = _swap(step, hand, melds, wd, seat, hand_no)
            swapped = True
        else:  # pragma: no cover - the type union is closed
            return f"unknown step {step!r}"
        if isinstance(done, str):
            return done
        pending.append(done)
    if swapped and not was_down and not down:
        return ("you swapped a wild card but did not go down: a player who is not down must go down "
                "in the turn they swap")
    if not hand:
        if play.discard is not None:
            return "your plays empty your hand, so you go out: send no discard"
    else:
        if play.discard is None:
            return "you must discard a card (only a player whose hand is empty after their plays goes out)"
        reason = take(hand, play.discard)
        if reason is not None:
            return reason
        if not hand:
            return "discarding your last card is not going out: keep at least one card, or lay it off"
    return Staged(hand, melds, down, pending)
