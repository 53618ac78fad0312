"""Turning a search leaf into melds: lay out the runs and sets, fill the wilds."""

from __future__ import annotations

from collections.abc import Sequence

from ..cards import JOKER, SUITS, Card, card
from ..melds import Meld, make_run, make_set
from ..ruleset import RUN, SET
from ..vocab import MeldKind
from .counts import _State
from .plan import _Plan
from .search import _Run

# ---------------------------------------------------------------------------
# Turning a search leaf into melds.
# ---------------------------------------------------------------------------

# A run as laid out: (run slot, suit, lo, window length, natural values)
_Layout = tuple[int, int, int, int, frozenset[int]]


def _layouts(st: _State, runs: list[_Run], reclaims: list[tuple[int, int]]
             ) -> tuple[list[_Layout], list[int]]:
    """Freeze the leaf's runs, applying reclaims; returns them and the cards left."""
    cnt = list(st.cnt)
    gone: dict[int, set[int]] = {}
    for i, rank in reclaims:
        gone.setdefault(i, set()).add(rank)
        cnt[runs[i].s * 13 + rank - 1] += 1
    out: list[_Layout] = []
    for i, r in enumerate(runs):
        naturals = ({r.lo, r.hi} | r.held) - gone.get(i, set())
        out.append((r.ri, r.s, r.lo, r.ln, frozenset(naturals)))
    return out, cnt


# the natural card at each count-vector index (suit * 13 + rank - 1)
_CARD = tuple(card(r, SUITS[s]) for s in range(4) for r in range(1, 14))


class _Draft:
    """A meld under construction: slots hold a Card or None (a wild slot)."""

    __slots__ = ("spec", "kind", "rank", "suit", "start", "slots", "min_len", "twos")

    def __init__(self, spec: int, kind: MeldKind, min_len: int, rank: int, suit: int, start: int,
                 slots: list[Card | None], twos: bool) -> None:
        self.spec = spec
        self.kind = kind
        self.min_len = min_len
        self.rank = rank
        self.suit = suit
        self.start = start
        self.slots = slots
        self.twos = twos  # a set of 2s: its 2s are natural


def _drafts(plan: _Plan, jokers: int, layouts: Sequence[_Layout], cnt: list[int],
            groups: list[tuple[int, list[int]]]) -> tuple[list[_Draft], int]:
    """Lay out runs and sets (from groups); sets consume from cnt.

    Returns the drafts and the jokers left.  Wild slots of sets of 2s are filled
    here (2s first, they are natural there); other wild slots stay None.
    """
    drafts: list[_Draft] = []
    run_idx = plan.run_idx
    run_len = plan.run_len
    for ri, s, lo, ln, naturals in layouts:
        start = lo if lo < 15 - ln else 15 - ln
        base = s * 13 - 1  # value v is card index base + v (the high ace: base + 1)
        slots: list[Card | None] = [_CARD[base + (v if v < 14 else 1)] if v in naturals else None
                                    for v in range(start, start + ln)]
        drafts.append(_Draft(run_idx[ri], RUN, run_len[ri], 0, s, start, slots, False))
    set_len = plan.set_len
    set_idx = plan.set_idx
    for rank, members in groups:
        twos = plan.wd and rank == 2
        i0 = rank - 1
        # naturals per set: half of each first, then fill up to length, in order
        total = cnt[i0] + cnt[i0 + 13] + cnt[i0 + 26] + cnt[i0 + 39]
        per = [(set_len[i] + 1) // 2 for i in members]
        extra = min(total, sum([set_len[i] for i in members])) - sum(per)
        for x, i in enumerate(members):
            L = set_len[i]
            n = per[x]
            if extra:  # (negative only if short of naturals: as before, the first set gives)
                add = L - n if L - n < extra else extra
                n += add
                extra -= add
            # n naturals of the rank, suits in order
            got: list[Card | None] = []
            idx = i0
            while len(got) < n:
                while not cnt[idx]:
                    idx += 13
                cnt[idx] -= 1
                got.append(_CARD[idx])
            if twos and jokers and L > n:
                use = L - n if L - n < jokers else jokers
                jokers -= use
                got.extend([JOKER] * use)
            if L > len(got):
                got.extend([None] * (L - len(got)))
            drafts.append(_Draft(set_idx[i], SET, L, rank, 0, 0, got, twos))
    assert len(drafts) == len(plan.contract.melds)
    return drafts, jokers


def _finish(drafts: list[_Draft], cnt: list[int], jokers: int, wd: bool) -> list[Meld]:
    """Fill wild slots (jokers first, then 2s) and build the melds in spec order."""
    melds: list[Meld | None] = [None] * len(drafts)
    for d in drafts:
        cards: list[Card] = []
        for c in d.slots:
            if c is None:
                if jokers:
                    jokers -= 1
                    c = JOKER
                else:
                    c = _take_two(cnt, wd)
            cards.append(c)
        melds[d.spec] = make_run(cards, wd) if d.kind == RUN else make_set(cards, wd)
    return melds  # type: ignore[return-value]


def _take_two(cnt: list[int], wd: bool) -> Card:
    if wd:
        for s in range(4):
            if cnt[s * 13 + 1]:
                cnt[s * 13 + 1] -= 1
                return card(2, SUITS[s])
    raise AssertionError("finder: ran out of wild cards (wild accounting bug)")
