"""Contract finder: can this hand go down, and with which melds?

Players ask this on every turn, so the search works on count vectors, not on
card lists, and is exact: it answers None only when no way to lay down the
contract exists.

How the search stays both exact and small
-----------------------------------------
Wild cards are interchangeable, so the search only counts wild *units* and
hands out the physical jokers and 2s at the end.  Runs are searched first
(they are the constrained part), sets are then solved in closed form on
what is left.

A run is fully described by its suit and its set N of natural positions:
its window is the span of N, stretched with wilds to the minimum length if
shorter.  A longer window with the same naturals only costs wilds, so it is
never needed; this is why an 8-card run (4 naturals + 4 wilds) is found for
``R7`` although no 7-card window of it is legal.  The search enumerates the
lowest and highest natural (both present in hand) and takes every card in
between, except that it may *withhold* an in-between card for later use.
Withholding is only tried for contested cards: one a later run of the same
suit could need (copies <= later runs) or one whose rank could host a set
and has no spare copies (naturals of the rank <= set demand + later runs).
Any other withheld card can be put back into the run (swapping a set's copy
for a spare of the same rank if needed), which frees a wild and keeps every
meld legal, so skipping those choices loses no solution.

A 2 in its own suit at value 2 is always used as a natural there: putting a
joker there instead and the 2 elsewhere as a wild is the same wild count
with one natural fewer.  The 2 is only withheld for a set of 2s or another
run, like any contested card.

Sets, given the cards left: a rank with n naturals hosting sets of lengths
L_i is feasible iff n >= sum(ceil(L_i / 2)) and costs max(0, sum(L_i) - n)
wilds; a set of 2s (wild deuces) costs its whole length in wild units but
needs ceil(L/2) real 2s.  Equal lengths are solved greedily (sorted costs, or
convex marginal costs when ranks may repeat); mixed lengths by a small DP
over ranks x subsets of sets.
"""

from __future__ import annotations

from itertools import combinations, combinations_with_replacement
from typing import Callable, Sequence

from .cards import JOKER, SUITS, Card, card
from .errors import IllegalAction
from .melds import Meld, make_run, make_set
from .ruleset import RUN, SET, Contract, Ruleset

__all__ = ["find_contract", "find_best_contract", "could_go_down"]

_BIG = 1 << 30
_SUIT_BASE = {"C": 0, "D": 13, "H": 26, "S": 39}

# Run positions are values 1..14 (1 = low ace, 14 = high ace).
_VRANK = [0] + list(range(1, 14)) + [1]          # value -> rank
_VOFF = [0] + list(range(0, 13)) + [0]           # value -> index within suit
# rank -> bits of the presence mask it sets (the ace is both 1 and 14)
_RBITS = [0, (1 << 1) | (1 << 14)] + [1 << r for r in range(2, 14)]
# rank -> penalty when left in hand (same as Card.penalty, by rank)
_PEN = [25, 15, 20, 5, 5, 5, 5, 5, 5, 5, 10, 10, 10, 10]

_BITS_CACHE: dict[int, tuple[int, ...]] = {}


def _bits(mask: int) -> tuple[int, ...]:
    """Set positions of a presence mask, ascending (cached: masks repeat a lot)."""
    b = _BITS_CACHE.get(mask)
    if b is None:
        b = tuple(v for v in range(1, 15) if mask >> v & 1)
        _BITS_CACHE[mask] = b
    return b


# ---------------------------------------------------------------------------
# Sets on the cards left: minimum wild units, in closed form where possible.
# ---------------------------------------------------------------------------

def _set_ranks(wd: bool) -> tuple[int, ...]:
    return tuple(r for r in range(1, 14) if not (wd and r == 2))


def _cost_equal_distinct(L: int, k: int, wd: bool) -> Callable[[list[int]], int]:
    """k sets of length L, all ranks different: take the k cheapest ranks."""
    h = (L + 1) // 2
    ranks = _set_ranks(wd)

    def cost(nat: list[int]) -> int:
        zero = 0
        small: list[int] = []
        for r in ranks:
            n = nat[r]
            if n >= L:
                zero += 1
                if zero >= k:
                    return 0
            elif n >= h:
                small.append(L - n)
        need = k - zero
        if wd and nat[2] >= h:
            small.append(L)
        if len(small) < need:
            return _BIG
        small.sort()
        return sum(small[:need])

    return cost


def _cost_equal_shared(L: int, k: int, wd: bool) -> Callable[[list[int]], int]:
    """k sets of length L, ranks may repeat.

    The cost of m sets on one rank, max(0, m*L - n), is convex in m, so taking
    the k cheapest marginal costs over all ranks is optimal.
    """
    h = (L + 1) // 2
    ranks = _set_ranks(wd)

    def cost(nat: list[int]) -> int:
        zero = 0
        margins: list[int] = []
        for r in ranks:
            n = nat[r]
            if n < h:
                continue
            z = n // L
            zero += z
            if zero >= k:
                return 0
            prev = 0
            for m in range(z + 1, n // h + 1):
                c = m * L - n
                margins.append(c - prev)
                prev = c
        need = k - zero
        if wd and nat[2] >= h:
            margins.extend([L] * min(need, nat[2] // h))
        if len(margins) < need:
            return _BIG
        margins.sort()
        return sum(margins[:need])

    return cost


def _sets_dp(lengths: Sequence[int], nat: Sequence[int], wd: bool, distinct: bool
             ) -> tuple[int, list[tuple[int, int]]]:
    """Exact minimum wild units for sets of any lengths, with the assignment.

    Returns (cost, [(rank, subset bitmask of set indices), ...]); rank 2 with
    wild deuces means a set of 2s.  Small: ranks x 3^k with k sets.
    """
    k = len(lengths)
    full = (1 << k) - 1
    if k == 0:
        return 0, []
    sum_l = [0] * (full + 1)
    sum_h = [0] * (full + 1)
    for sub in range(1, full + 1):
        low = sub & -sub
        i = low.bit_length() - 1
        sum_l[sub] = sum_l[sub ^ low] + lengths[i]
        sum_h[sub] = sum_h[sub ^ low] + (lengths[i] + 1) // 2
    min_h = min(sum_h[1 << i] for i in range(k))
    options = [(r, nat[r], False) for r in _set_ranks(wd)]
    if wd:
        options.append((2, nat[2], True))
    dp: dict[int, int] = {0: 0}
    layers: list[tuple[int, dict[int, tuple[int, int]]]] = []
    for r, n, twos in options:
        if n < min_h:
            continue
        new = dict(dp)
        back: dict[int, tuple[int, int]] = {}
        for mask, c in dp.items():
            rest = full ^ mask
            sub = rest
            while sub:
                if (not distinct or sub & (sub - 1) == 0) and n >= sum_h[sub]:
                    sl = sum_l[sub]
                    g = sl if twos else (sl - n if sl > n else 0)
                    nm = mask | sub
                    if c + g < new.get(nm, _BIG):
                        new[nm] = c + g
                        back[nm] = (mask, sub)
                sub = (sub - 1) & rest
        layers.append((r, back))
        dp = new
    best = dp.get(full, _BIG)
    if best >= _BIG:
        return _BIG, []
    groups: list[tuple[int, int]] = []
    m = full
    for r, back in reversed(layers):
        if m and m in back:
            prev, sub = back[m]
            groups.append((r, sub))
            m = prev
    return best, groups


def _cost_mixed(lengths: tuple[int, ...], wd: bool, distinct: bool) -> Callable[[list[int]], int]:
    memo: dict[tuple[int, ...], int] = {}

    def cost(nat: list[int]) -> int:
        key = tuple(nat)
        c = memo.get(key)
        if c is None:
            if len(memo) > 4096:
                memo.clear()
            c = memo[key] = _sets_dp(lengths, nat, wd, distinct)[0]
        return c

    return cost


# ---------------------------------------------------------------------------
# Per-contract plan (cached: contracts are few and long-lived).
# ---------------------------------------------------------------------------

class _Plan:
    __slots__ = ("contract", "set_idx", "set_len", "run_idx", "run_len", "set_cost",
                 "hmin", "demand", "size", "nat_need", "wd", "distinct")

    def __init__(self, contract: Contract, wd: bool, distinct: bool) -> None:
        self.contract = contract
        self.wd = wd
        self.distinct = distinct
        sets = [(i, m.min_len) for i, m in enumerate(contract.melds) if m.kind == SET]
        runs = [(i, m.min_len) for i, m in enumerate(contract.melds) if m.kind == RUN]
        runs.sort(key=lambda t: -t[1])  # longest first: most constrained
        self.set_idx = tuple(i for i, _ in sets)
        self.set_len = tuple(L for _, L in sets)
        self.run_idx = tuple(i for i, _ in runs)
        self.run_len = tuple(L for _, L in runs)
        self.size = sum(m.min_len for m in contract.melds)
        self.nat_need = sum((m.min_len + 1) // 2 for m in contract.melds)
        lens = self.set_len
        if not lens:
            self.set_cost = None
            self.hmin = _BIG
            self.demand = 0
        else:
            self.hmin = min((L + 1) // 2 for L in lens)
            self.demand = max(lens) if distinct else sum(lens)
            if len(set(lens)) == 1:
                maker = _cost_equal_distinct if distinct else _cost_equal_shared
                self.set_cost = maker(lens[0], len(lens), wd)
            else:
                self.set_cost = _cost_mixed(lens, wd, distinct)


_PLANS: dict[tuple[int, bool, bool], _Plan] = {}


def _plan(contract: Contract, rules: Ruleset) -> _Plan:
    key = (id(contract), rules.wild_deuces, rules.distinct_set_ranks)
    p = _PLANS.get(key)
    if p is None or p.contract is not contract:
        if len(_PLANS) > 1024:
            _PLANS.clear()
        p = _PLANS[key] = _Plan(contract, rules.wild_deuces, rules.distinct_set_ranks)
    return p


# ---------------------------------------------------------------------------
# The search.
# ---------------------------------------------------------------------------

class _State:
    """Count vectors of a hand: cards by index, naturals by rank, suit masks."""

    __slots__ = ("cnt", "nat", "masks", "jokers", "n")

    def __init__(self, hand: Sequence[Card]) -> None:
        cnt = [0] * 52
        nat = [0] * 14
        masks = [0, 0, 0, 0]
        jokers = 0
        base = _SUIT_BASE
        rbits = _RBITS
        for c in hand:
            r = c.rank
            if r:
                b = base[c.suit]
                cnt[b + r - 1] += 1
                nat[r] += 1
                masks[b // 13] |= rbits[r]
            else:
                jokers += 1
        self.cnt = cnt
        self.nat = nat
        self.masks = masks
        self.jokers = jokers
        self.n = len(hand)


# A path step: (run slot, suit, lo, hi, window length, natural values used)
_Step = tuple[int, int, int, int, int, tuple[int, ...]]


def _quick_no(st: _State, plan: _Plan) -> bool:
    """Cheap necessary conditions; True means certainly impossible."""
    if st.n < plan.size:
        return True
    wild_only = st.jokers  # 2s can be natural (sets of 2s, own run position)
    if st.n - wild_only < plan.nat_need:
        return True
    return False


def _search(st: _State, plan: _Plan, on_leaf: Callable[[list[_Step], int], bool],
            best_mode: bool = False) -> bool:
    """Depth-first over run choices; sets are checked (and pruned) at every node."""
    cnt, nat, masks = st.cnt, st.nat, st.masks
    J = st.jokers
    wd = plan.wd
    run_len = plan.run_len
    nruns = len(run_len)
    set_cost = plan.set_cost
    has_sets = set_cost is not None
    hmin = plan.hmin
    demand = plan.demand
    path: list[_Step] = []
    used_wilds = 0

    def rec(ri: int, bound: int) -> bool:
        nonlocal used_wilds
        pool = J - used_wilds + (nat[2] if wd else 0)
        if pool < 0:
            return False
        if has_sets and set_cost(nat) > pool:
            return False
        if ri == nruns:
            return on_leaf(path, used_wilds)
        L = run_len[ri]
        later = nruns - ri - 1
        same_next = later > 0 and run_len[ri + 1] == L
        cands: list[tuple[int, int, int, int, int, int, tuple[int, ...]]] = []
        for s in range(4):
            bits = _bits(masks[s])
            nb = len(bits)
            if nb < 2 or (s << 8) + 0xFF < bound:
                continue
            sbase = s * 13
            for i in range(nb - 1):
                lo = bits[i]
                for j in range(i + 1, nb):
                    hi = bits[j]
                    span = hi - lo + 1
                    if span > 13 or span > 2 * (nb - i):
                        break
                    k_all = j - i + 1
                    ln = span if span > L else L
                    if ln > 2 * k_all:
                        continue
                    base_w = ln - k_all
                    if base_w > pool:
                        continue
                    key = (s << 8) | (lo << 4) | hi
                    if key < bound:
                        continue
                    seg = bits[i:j + 1]
                    cands.append((k_all, base_w, s, lo, hi, ln, seg))
                    maxw = min(pool - base_w, k_all - (ln + 1) // 2)
                    if maxw <= 0 or k_all <= 2:
                        continue
                    cont = []
                    for v in bits[i + 1:j]:
                        if cnt[sbase + v - 1] <= later or (
                            has_sets and hmin <= nat[v] <= demand + later
                        ):
                            cont.append(v)
                    if not cont:
                        continue
                    for size in range(1, min(maxw, len(cont)) + 1):
                        for held in combinations(cont, size):
                            used = tuple(v for v in seg if v not in held)
                            cands.append((k_all - size, base_w + size, s, lo, hi, ln, used))
        if best_mode:
            cands.sort(key=lambda t: (-t[0], t[1]))
        for _k, w, s, lo, hi, ln, used in cands:
            sbase = s * 13
            for v in used:
                idx = sbase + _VOFF[v]
                r = _VRANK[v]
                cnt[idx] -= 1
                nat[r] -= 1
                if not cnt[idx]:
                    masks[s] &= ~_RBITS[r]
            used_wilds += w
            path.append((ri, s, lo, hi, ln, used))
            ok = rec(ri + 1, ((s << 8) | (lo << 4) | hi) if same_next else 0)
            path.pop()
            used_wilds -= w
            for v in used:
                idx = sbase + _VOFF[v]
                r = _VRANK[v]
                if not cnt[idx]:
                    masks[s] |= _RBITS[r]
                cnt[idx] += 1
                nat[r] += 1
            if ok:
                return True
        return False

    return rec(0, 0)


# ---------------------------------------------------------------------------
# Turning a search leaf into melds.
# ---------------------------------------------------------------------------

def _set_groups(plan: _Plan, nat: Sequence[int]) -> list[tuple[int, list[int]]] | None:
    """Rank of every set (as groups of set slots), at minimum wild cost."""
    cost, groups = _sets_dp(plan.set_len, nat, plan.wd, plan.distinct)
    if cost >= _BIG:
        return None
    k = len(plan.set_len)
    return [(r, [i for i in range(k) if sub >> i & 1]) for r, sub in groups]


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


def _drafts(plan: _Plan, st: _State, path: Sequence[_Step], cnt: list[int],
            groups: list[tuple[int, list[int]]]) -> tuple[list[_Draft], int]:
    """Lay out runs (from the path) and sets (from groups); consumes from cnt.

    Returns the drafts and the jokers left.  Wild slots of sets of 2s are filled
    here (with 2s first, they are natural there); other wild slots stay None.
    """
    contract = plan.contract
    drafts: list[_Draft] = []
    jokers = st.jokers
    for ri, s, lo, hi, ln, used in path:
        d = _Draft(plan.run_idx[ri], RUN, plan.run_len[ri])
        d.suit = s
        start = min(lo, 15 - ln)
        d.start = start
        uset = set(used)
        d.slots = [card(_VRANK[v], SUITS[s]) if v in uset else None for v in range(start, start + ln)]
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
            naturals = _take(cnt, rank, per[x])
            d.slots = list(naturals) + [None] * (set_len[i] - per[x])
            if twos:
                for y, c in enumerate(d.slots):
                    if c is None:
                        if jokers:
                            jokers -= 1
                            d.slots[y] = JOKER
            drafts.append(d)
    assert len(drafts) == len(contract.melds)
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


# ---------------------------------------------------------------------------
# Public API.
# ---------------------------------------------------------------------------

def find_contract(hand: Sequence[Card], contract: Contract, rules: Ruleset) -> list[Meld] | None:
    """Melds laying down ``contract`` from ``hand``, or None if no way exists.

    ``result[i]`` is the meld for ``contract.melds[i]``.  Built with make_set /
    make_run, so each meld is legal; runs are in ascending order.  The answer
    uses few cards (minimum lengths, wilds only where needed); it is the first
    solution found, not the best one (see find_best_contract).
    """
    plan = _plan(contract, rules)
    st = _State(hand)
    if _quick_no(st, plan):
        return None
    found: list[list[Meld]] = []

    def on_leaf(path: list[_Step], _used: int) -> bool:
        groups = _set_groups(plan, st.nat) if plan.set_len else []
        assert groups is not None
        cnt = list(st.cnt)
        drafts, jokers = _drafts(plan, st, path, cnt, groups)
        found.append(_finish(drafts, cnt, jokers, plan.wd))
        return True

    if _search(st, plan, on_leaf):
        return found[0]
    return None


def could_go_down(hand: Sequence[Card], contract: Contract, rules: Ruleset) -> bool:
    """Whether ``hand`` can lay down ``contract``; cheaper than building melds."""
    plan = _plan(contract, rules)
    st = _State(hand)
    if _quick_no(st, plan):
        return False
    return _search(st, plan, lambda _p, _u: True)


# -- best solution ------------------------------------------------------------

_LEAF_CAP = 24
_SET_CHOICES_CAP = 200
_SET_KEEP = 3


def _set_choices(plan: _Plan, nat: list[int], pool: int) -> list[list[tuple[int, list[int]]]]:
    """A few affordable set assignments, the most points shed first."""
    lens = plan.set_len
    k = len(lens)
    if k == 0:
        return [[]]
    wd = plan.wd
    best = _set_groups(plan, nat)
    out: list[tuple[tuple[int, int], list[tuple[int, list[int]]]]] = []
    if best is not None:
        out.append(((0, 0), best))
    if len(set(lens)) == 1:
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
    return [g for _, g in out[:_SET_KEEP + 1]]


def _improve(drafts: list[_Draft], cnt: list[int], wd: bool, spare: int) -> int:
    """Shed more naturals into the drafts and drop wilds they no longer need.

    Returns the spare wild units left.  Every change keeps each draft legal:
    a natural replacing a wild or extending a meld only helps the wild limit,
    and a wild is only added (to bridge a gap) when the limit still holds.
    """
    runs = [d for d in drafts if d.kind == RUN]
    sets = [d for d in drafts if d.kind == SET]

    def have(s: int, v: int) -> bool:
        return cnt[s * 13 + _VOFF[v]] > 0

    def grab(s: int, v: int) -> Card:
        cnt[s * 13 + _VOFF[v]] -= 1
        return card(_VRANK[v], SUITS[s])

    def counts(d: _Draft) -> tuple[int, int]:
        w = d.slots.count(None)
        return len(d.slots) - w, w

    def price(v: int) -> int:
        """Spare wild units a natural at value v costs: a 2 is also a spare wild."""
        return 1 if wd and v == 2 else 0

    # 1. naturals replace wild slots in runs (a 2 there fills its own slot: even)
    for d in runs:
        for x, c in enumerate(d.slots):
            if c is None and have(d.suit, d.start + x):
                d.slots[x] = grab(d.suit, d.start + x)
                spare += 1 - price(d.start + x)
    # 2. extend runs with adjacent naturals, bridging gaps with spare wilds
    changed = True
    while changed:
        changed = False
        for d in runs:
            n, w = counts(d)
            hi = d.start + len(d.slots) - 1
            lo = d.start
            for gap in range(0, spare + 1):
                v = hi + gap + 1
                if v > 14 or v - lo + 1 > 13 or w + gap > n + 1:
                    break
                if have(d.suit, v):
                    if gap + price(v) <= spare:
                        d.slots.extend([None] * gap + [grab(d.suit, v)])
                        spare -= gap + price(v)
                        changed = True
                    break
            n, w = counts(d)
            hi = d.start + len(d.slots) - 1
            for gap in range(0, spare + 1):
                v = d.start - gap - 1
                if v < 1 or hi - v + 1 > 13 or w + gap > n + 1:
                    break
                if have(d.suit, v):
                    if gap + price(v) <= spare:
                        d.slots[:0] = [grab(d.suit, v)] + [None] * gap
                        d.start = v
                        spare -= gap + price(v)
                        changed = True
                    break
    # 3. sets absorb every natural of their rank left (2s only into sets of 2s)
    for d in sets:
        if wd and d.rank == 2:
            continue  # more 2s in a set of 2s shed no natural points, cost wilds
        for s in range(4):
            idx = s * 13 + d.rank - 1
            while cnt[idx]:
                cnt[idx] -= 1
                c = card(d.rank, SUITS[s])
                if None in d.slots:
                    d.slots[d.slots.index(None)] = c
                    spare += 1
                else:
                    d.slots.append(c)
    # 4. trim wild slots a meld no longer needs
    for d in runs:
        while len(d.slots) > d.min_len and d.slots[-1] is None:
            d.slots.pop()
            spare += 1
        while len(d.slots) > d.min_len and d.slots[0] is None:
            d.slots.pop(0)
            d.start += 1
            spare += 1
    for d in sets:
        while len(d.slots) > d.min_len and None in d.slots:
            d.slots.remove(None)
            spare += 1
    return spare


def _score(hand_cnt: list[int], melds: list[Meld], wd: bool) -> tuple[int, int, int]:
    """(natural points left in hand, wilds used, all points left)."""
    left = list(hand_cnt)
    wilds = 0
    for m in melds:
        for c, w in zip(m.cards, m.wild):
            wilds += w
            if c.rank:
                left[_SUIT_BASE[c.suit] + c.rank - 1] -= 1
    natural = 0
    total = 0
    for idx, n in enumerate(left):
        if n:
            r = idx % 13 + 1
            total += n * _PEN[r]
            if not (wd and r == 2):
                natural += n * _PEN[r]
    return natural, wilds, total


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
    hand_cnt = list(st.cnt)
    best: list[tuple[tuple[int, int, int], list[Meld]]] = []
    leaves = 0

    def on_leaf(path: list[_Step], used: int) -> bool:
        nonlocal leaves
        leaves += 1
        pool = st.jokers - used + (st.nat[2] if wd else 0)
        for groups in _set_choices(plan, st.nat, pool):
            cnt = list(st.cnt)
            try:
                drafts, jokers = _drafts(plan, st, path, cnt, groups)
                twos_left = sum(cnt[s * 13 + 1] for s in range(4)) if wd else 0
                needed = sum(d.slots.count(None) for d in drafts)
                spare = jokers + twos_left - needed
                if spare < 0:
                    continue
                _improve(drafts, cnt, wd, spare)
                melds = _finish(drafts, cnt, jokers, wd)
            except (IllegalAction, AssertionError):  # pragma: no cover - guarded by tests
                continue
            score = _score(hand_cnt, melds, wd)
            if not best or score < best[0][0]:
                best[:] = [(score, melds)]
        return leaves >= _LEAF_CAP

    _search(st, plan, on_leaf, best_mode=True)
    if best:
        return best[0][1]
    return find_contract(hand, contract, rules)
