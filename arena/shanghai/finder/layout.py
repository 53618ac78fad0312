"""Turning a search leaf into melds: lay out the runs and sets, fill the wilds."""

from __future__ import annotations

from collections.abc import Sequence

from ..cards import JOKER, SUITS, Card, card
from ..melds import Meld, make_run, make_set
from ..ruleset import RUN, SET
from .counts import _VRANK, _State
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


def _spread(total: int, members: list[int], lengths: Sequence[int]) -> list[int]:
    """Naturals per set of a group: half of each first, then fill to length."""
    out = [(lengths[i] + 1) // 2 for i in members]
    extra = min(total, sum(lengths[i] for i in members)) - sum(out)
    for x, i in enumerate(members):
        add = min(extra, lengths[i] - out[x])
        out[x] += add
        extra -= add
    return out


def _take(cnt: list[int], rank: int, n: int) -> list[Card]:
    """Remove n natural cards of ``rank`` (any suits) from cnt."""
    got: list[Card] = []
    for s in range(4):
        idx = s * 13 + rank - 1
        while cnt[idx] and len(got) < n:
            cnt[idx] -= 1
            got.append(card(rank, SUITS[s]))
    return got


class _Draft:
    """A meld under construction: slots hold a Card or None (a wild slot)."""

    __slots__ = ("spec", "kind", "rank", "suit", "start", "slots", "min_len", "twos")

    def __init__(self, spec: int, kind: str, min_len: int) -> None:
        self.spec = spec
        self.kind = kind
        self.min_len = min_len
        self.rank = 0
        self.suit = 0
        self.start = 0
        self.slots: list[Card | None] = []
        self.twos = False  # a set of 2s: its 2s are natural


def _drafts(plan: _Plan, jokers: int, layouts: Sequence[_Layout], cnt: list[int],
            groups: list[tuple[int, list[int]]]) -> tuple[list[_Draft], int]:
    """Lay out runs and sets (from groups); sets consume from cnt.

    Returns the drafts and the jokers left.  Wild slots of sets of 2s are filled
    here (2s first, they are natural there); other wild slots stay None.
    """
    drafts: list[_Draft] = []
    for ri, s, lo, ln, naturals in layouts:
        d = _Draft(plan.run_idx[ri], RUN, plan.run_len[ri])
        d.suit = s
        start = min(lo, 15 - ln)
        d.start = start
        d.slots = [card(_VRANK[v], SUITS[s]) if v in naturals else None for v in range(start, start + ln)]
        drafts.append(d)
    set_len = plan.set_len
    for rank, members in groups:
        twos = plan.wd and rank == 2
        total = sum(cnt[s * 13 + rank - 1] for s in range(4))
        per = _spread(total, members, set_len)
        for x, i in enumerate(members):
            d = _Draft(plan.set_idx[i], SET, set_len[i])
            d.rank = rank
            d.twos = twos
            d.slots = list(_take(cnt, rank, per[x])) + [None] * (set_len[i] - per[x])
            if twos:
                for y, c in enumerate(d.slots):
                    if c is None and jokers:
                        jokers -= 1
                        d.slots[y] = JOKER
            drafts.append(d)
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
