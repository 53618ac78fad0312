"""find_best_contract: among the solutions seen, the one shedding the most."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations, combinations_with_replacement
from operator import mul

from ..cards import JOKER, Card
from ..melds import Meld
from ..ruleset import RUN, SET, Contract, Ruleset
from .counts import _PEN, _State
from .find import find_contract
from .layout import _CARD, _Draft, _drafts, _finish, _Layout, _layouts
from .plan import _Plan, _plan, _quick_no
from .search import _Run, _search

# -- best solution ------------------------------------------------------------

_LEAF_CAP = 16
_SET_CHOICES_CAP = 200
_SET_KEEP = 3


def _set_choices(plan: _Plan, nat: list[int], pool: int) -> list[list[tuple[int, list[int]]]]:
    """A few affordable set assignments (no reclaims), the most points shed first."""
    lens = plan.set_len
    k = len(lens)
    if k == 0 or len(set(lens)) != 1:
        return []
    wd = plan.wd
    out: list[tuple[tuple[int, int], list[tuple[int, list[int]]]]] = []
    L = lens[0]
    h = (L + 1) // 2
    cands = [r for r in range(1, 14) if nat[r] >= h]
    combos = (combinations(cands, k) if plan.distinct
              else combinations_with_replacement(cands, k))
    for x, combo in enumerate(combos):
        if x >= _SET_CHOICES_CAP:
            break
        cost = 0
        shed = 0
        ok = True
        for r in set(combo):
            m = combo.count(r)
            n = nat[r]
            if n < m * h:
                ok = False
                break
            if wd and r == 2:
                cost += m * L
            else:
                cost += max(0, m * L - n)
                shed += n * _PEN[r]
        if not ok or cost > pool:
            continue
        groups: list[tuple[int, list[int]]] = []
        i = 0
        for r in sorted(set(combo)):
            m = combo.count(r)
            groups.append((r, list(range(i, i + m))))
            i += m
        out.append(((-shed, cost), groups))
    out.sort(key=lambda t: t[0])
    return [g for _, g in out[:_SET_KEEP]]


def _improve(drafts: list[_Draft], cnt: list[int], wd: bool, spare: int) -> int:
    """Shed more naturals into the drafts and drop wilds they no longer need.

    Returns the spare wild units left.  Every change keeps each draft legal:
    a natural replacing a wild or extending a meld only helps the wild limit,
    and a wild is only added (to bridge a gap) when the limit still holds.
    A natural 2 at value 2 of its run costs a spare wild unit: it is one.
    Card index of value v in suit s: s * 13 - 1 + v (the high ace: s * 13).
    """
    runs = [d for d in drafts if d.kind == RUN]
    sets = [d for d in drafts if d.kind == SET]
    spare = _naturals_for_wilds(runs, cnt, wd, spare)
    changed = True
    while changed:
        changed = False
        for d in runs:
            spare, up = _extend_up(d, cnt, wd, spare)
            spare, down = _extend_down(d, cnt, wd, spare)
            changed = changed or up or down
    spare = _sets_absorb(sets, cnt, wd, spare)
    return _trim_wilds(runs, sets, spare)


def _naturals_for_wilds(runs: list[_Draft], cnt: list[int], wd: bool, spare: int) -> int:
    """Step 1: naturals replace wild slots in runs (a 2 there fills its own slot: even)."""
    for d in runs:
        slots = d.slots
        if None not in slots:
            continue
        base = d.suit * 13 - 1
        start = d.start
        for x, c in enumerate(slots):
            if c is None:
                v = start + x
                i = base + (v if v < 14 else 1)
                if cnt[i]:
                    cnt[i] -= 1
                    slots[x] = _CARD[i]
                    if not (wd and v == 2):
                        spare += 1
    return spare


def _extend_up(d: _Draft, cnt: list[int], wd: bool, spare: int) -> tuple[int, bool]:
    """Step 2, upwards: extend run ``d`` with the next natural above it,
    bridging a gap with spare wilds.  Returns (spare, whether it grew)."""
    slots = d.slots
    base = d.suit * 13 - 1
    w = slots.count(None)
    n = len(slots) - w
    lo = d.start
    hi = lo + len(slots) - 1
    for gap in range(0, spare + 1):
        v = hi + gap + 1
        if v > 14 or v - lo + 1 > 13 or w + gap > n + 1:
            break
        i = base + (v if v < 14 else 1)
        if cnt[i]:
            cost = gap + 1 if wd and v == 2 else gap
            if cost <= spare:
                cnt[i] -= 1
                if gap:
                    slots.extend([None] * gap)
                slots.append(_CARD[i])
                return spare - cost, True
            break
    return spare, False


def _extend_down(d: _Draft, cnt: list[int], wd: bool, spare: int) -> tuple[int, bool]:
    """Step 2, downwards: as _extend_up, with the next natural below."""
    slots = d.slots
    base = d.suit * 13 - 1
    w = slots.count(None)
    n = len(slots) - w
    hi = d.start + len(slots) - 1
    for gap in range(0, spare + 1):
        v = d.start - gap - 1
        if v < 1 or hi - v + 1 > 13 or w + gap > n + 1:
            break
        i = base + v
        if cnt[i]:
            cost = gap + 1 if wd and v == 2 else gap
            if cost <= spare:
                cnt[i] -= 1
                slots[:0] = [_CARD[i]] + [None] * gap
                d.start = v
                return spare - cost, True
            break
    return spare, False


def _sets_absorb(sets: list[_Draft], cnt: list[int], wd: bool, spare: int) -> int:
    """Step 3: sets absorb every natural of their rank left (2s only into sets of 2s)."""
    for d in sets:
        if wd and d.rank == 2:
            continue  # more 2s in a set of 2s shed no natural points, cost wilds
        slots = d.slots
        i0 = d.rank - 1
        for idx in (i0, i0 + 13, i0 + 26, i0 + 39):
            k = cnt[idx]
            if not k:
                continue
            cnt[idx] = 0
            c = _CARD[idx]
            for _ in range(k):
                if None in slots:
                    slots[slots.index(None)] = c
                    spare += 1
                else:
                    slots.append(c)
    return spare


def _trim_wilds(runs: list[_Draft], sets: list[_Draft], spare: int) -> int:
    """Step 4: trim wild slots a meld no longer needs."""
    for d in runs:
        slots = d.slots
        L = d.min_len
        while len(slots) > L and slots[-1] is None:
            slots.pop()
            spare += 1
        while len(slots) > L and slots[0] is None:
            slots.pop(0)
            d.start += 1
            spare += 1
    for d in sets:
        slots = d.slots
        while len(slots) > d.min_len and None in slots:
            slots.remove(None)
            spare += 1
    return spare


# penalty of each card index when left in hand
_PEN52 = tuple(_PEN[i % 13 + 1] for i in range(52))
_TWO_IDX = (1, 14, 27, 40)  # the 2 of each suit


def _draft_score(drafts: list[_Draft], cnt: list[int], jokers: int, wd: bool) -> tuple[int, int, int]:
    """(natural points left in hand, wilds used, all points left) of the melds
    ``_finish`` would build from these drafts, without building them.

    It fills the wild slots the same way (jokers first, then the 2s of the
    first suits that have one) and counts a card as wild exactly as
    make_run / make_set mark it: a joker always; a 2 unless it stands for
    itself (in a set of 2s, or at value 2 of a run of its suit).  Only the
    best of a leaf's options is then built.
    """
    total = sum(map(mul, cnt, _PEN52))
    twos = [cnt[1], cnt[14], cnt[27], cnt[40]] if wd else [0, 0, 0, 0]
    wilds = 0
    for d in drafts:
        slots = d.slots
        if d.twos:
            wilds += slots.count(JOKER)
        if None not in slots:
            continue
        run = d.kind == RUN
        for x, c in enumerate(slots):
            if c is not None:
                continue
            if jokers:
                jokers -= 1
                wilds += 1
                continue
            for s in range(4):
                if twos[s]:
                    twos[s] -= 1
                    break
            else:  # pragma: no cover - the search checked the wild budget
                raise AssertionError("finder: ran out of wild cards (wild accounting bug)")
            total -= 20
            if run:
                if s != d.suit or d.start + x != 2:
                    wilds += 1
            elif not d.twos:
                wilds += 1
    natural = total - 20 * sum(twos) if wd else total
    return natural, wilds, total


def _scored_option(plan: _Plan, jokers: int, frozen: tuple[_Layout, ...], cnt: list[int],
                   set_groups: list[tuple[int, list[int]]],
                   ) -> tuple[tuple[int, int, int], list[_Draft], list[int], int] | None:
    """One option of a leaf, improved and scored: (score, drafts, cards left,
    jokers left); None if its wild slots outnumber the wilds."""
    wd = plan.wd
    drafts, jokers = _drafts(plan, jokers, frozen, cnt, set_groups)
    twos_left = cnt[1] + cnt[14] + cnt[27] + cnt[40] if wd else 0
    spare = jokers + twos_left - sum(d.slots.count(None) for d in drafts)
    if spare < 0:
        return None  # pragma: no cover - the search checked the wild budget
    _improve(drafts, cnt, wd, spare)
    return _draft_score(drafts, cnt, jokers, wd), drafts, cnt, jokers


def find_best_contract(hand: Sequence[Card], contract: Contract, rules: Ruleset) -> list[Meld] | None:
    """Like find_contract, but among the solutions it sees prefers the one
    leaving the fewest natural-card points in hand, then using the fewest wilds.

    Wilds kept in hand are not counted as points: after going down they can
    still be laid off onto any meld, whereas an unplaceable natural cannot.
    The search looks at a bounded number of run layouts and set choices, so
    the result is a good solution, not a proven optimum; it is None exactly
    when find_contract is None.
    """
    plan = _plan(contract, rules)
    st = _State(hand)
    if _quick_no(st, plan):
        return None
    wd = plan.wd
    # the best option so far: its score, and its drafts, cards left and
    # jokers left before the wild slots are filled (built into melds at the end)
    best: list[tuple[tuple[int, int, int], list[_Draft], list[int], int]] = []
    tried: set[tuple[object, ...]] = set()
    leaves = 0

    def on_leaf(runs: list[_Run], groups: list[tuple[int, list[int]]],
                reclaims: list[tuple[int, int]], used: int) -> bool:
        nonlocal leaves
        leaves += 1
        pool = st.jokers - used + (st.nat[2] if wd else 0)
        options = [(groups, reclaims)] + [(g, []) for g in _set_choices(plan, st.nat, pool)]
        plain: tuple[tuple[_Layout, ...], list[int]] | None = None  # the runs without reclaims
        for set_groups, back in options:
            if back:
                layouts, cnt = _layouts(st, runs, back)
                frozen = tuple(layouts)
            else:
                if plain is None:
                    layouts, cnt = _layouts(st, runs, back)
                    plain = (tuple(layouts), cnt)
                frozen, cnt = plain[0], list(plain[1])
            # The same layout and sets give the same melds and score, which
            # cannot beat itself: a third of the options repeat (the search's
            # own sets are often among the set choices).  The cards left are
            # the hand less the layout's naturals, so they need no place in
            # the key.
            key = (frozen, tuple((r, tuple(m)) for r, m in set_groups))
            if key in tried:
                continue
            tried.add(key)
            option = _scored_option(plan, st.jokers, frozen, cnt, set_groups)
            if option is not None and (not best or option[0] < best[0][0]):
                best[:] = [option]
        # stop at the cap, or when nothing natural is left and no wild was used
        return leaves >= _LEAF_CAP or bool(best) and best[0][0][:2] == (0, 0)

    _search(st, plan, on_leaf, best_mode=True)
    if best:
        _score_, drafts, cnt, jokers = best[0]
        return _finish(drafts, cnt, jokers, wd)
    if leaves:  # pragma: no cover - every leaf yields a scored solution
        return find_contract(hand, contract, rules)
    return None
