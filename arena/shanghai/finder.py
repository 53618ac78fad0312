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
lowest and highest natural and takes every card in between that is still
in hand.  Taking a card never costs a wild overall: it saves the run one,
and costs at most one to whoever else could have used it.  It only matters
for the per-meld limit (wilds <= naturals), and that is settled lazily:

- a later run of the same suit may *borrow* a card an earlier run holds
  strictly inside its window, if the lender stays legal (the lender gets a
  wild there, the borrower the natural: the same wild count);
- at the leaf, a set may *reclaim* a card of its rank the same way, when it
  lacks the naturals to be legal (same wild count again).

So no run ever has to decide up front to leave a card for someone else,
which would multiply the branches by every subset of its inner cards.  This
loses no solution: take any solution and place its runs in search order.  A
card a run leaves out of its window was either unused (put it in: one wild
fewer), or used by a set that has a spare card of that rank (swap them, then
put it in), or used by a set without a spare (a reclaim), or used by a later
run of the suit (a borrow).  Borrowing the bare minimum suffices for the last
run when there are no sets; otherwise every way to borrow is tried, since
who holds which card decides what can still be lent or reclaimed.

A 2 in its own suit at value 2 is always used as a natural there: a joker
there instead and the 2 elsewhere as a wild is the same wild count with one
natural fewer; a set of 2s can still reclaim it.

Sets, given the cards left: a rank with n naturals hosting sets of lengths
L_i is feasible iff n >= sum(ceil(L_i / 2)) and costs max(0, sum(L_i) - n)
wilds; a set of 2s (wild deuces) costs its whole length in wild units but
needs ceil(L/2) real 2s.  Equal lengths are solved greedily (sorted costs, or
convex marginal costs when ranks may repeat); mixed lengths, and reclaims,
by a small DP over ranks x subsets of sets.
"""

from __future__ import annotations

from itertools import combinations, combinations_with_replacement
from typing import Callable, Iterator, Sequence

from .cards import JOKER, SUITS, Card, card
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


_WINDOWS: dict[tuple[int, int], tuple[tuple[int, int, int, int, tuple[int, ...]], ...]] = {}


def _windows(mask: int, L: int) -> tuple[tuple[int, int, int, int, tuple[int, ...]], ...]:
    """Every run of minimum length L a suit with presence ``mask`` can hold
    on its own: (length, wilds, lo, hi, natural values), lo and hi natural.
    Cached: a suit's mask only changes when a run of that suit is placed."""
    key = (mask, L)
    out = _WINDOWS.get(key)
    if out is not None:
        return out
    bits = _bits(mask)
    nb = len(bits)
    found = []
    for i in range(nb - 1):
        lo = bits[i]
        for j in range(i + 1, nb):
            hi = bits[j]
            span = hi - lo + 1
            if span > 13 or span > 2 * (nb - i):
                break
            k = j - i + 1
            ln = span if span > L else L
            if ln <= 2 * k:
                found.append((ln, ln - k, lo, hi, bits[i:j + 1]))
    out = tuple(found)
    if len(_WINDOWS) > 100_000:
        _WINDOWS.clear()
    _WINDOWS[key] = out
    return out


# ---------------------------------------------------------------------------
# Sets on the cards left: minimum wild units, in closed form where possible.
#
# Every cost function takes ``nat`` (naturals left per rank; with wild deuces
# nat[2] counts the 2s) and ``extra`` (None, or per rank how many more
# naturals runs could give back): extra only loosens feasibility, the cost is
# always max(0, L - n) from the naturals actually left, which is what the
# wild count comes to after a reclaim too.  With extra it is a lower bound.
# ---------------------------------------------------------------------------

def _set_ranks(wd: bool) -> tuple[int, ...]:
    return tuple(r for r in range(1, 14) if not (wd and r == 2))


def _cost_equal_distinct(L: int, k: int, wd: bool) -> Callable[[list[int], list[int] | None], int]:
    """k sets of length L, all ranks different: take the k cheapest ranks."""
    h = (L + 1) // 2
    ranks = _set_ranks(wd)

    def cost(nat: list[int], extra: list[int] | None) -> int:
        zero = 0
        small: list[int] = []
        for r in ranks:
            n = nat[r]
            if n >= L:
                zero += 1
                if zero >= k:
                    return 0
            elif n >= h or (extra is not None and n + extra[r] >= h):
                small.append(L - n)
        need = k - zero
        if wd and nat[2] + (extra[2] if extra is not None else 0) >= h:
            small.append(L)
        if len(small) < need:
            return _BIG
        small.sort()
        return sum(small[:need])

    return cost


def _cost_equal_shared(L: int, k: int, wd: bool) -> Callable[[list[int], list[int] | None], int]:
    """k sets of length L, ranks may repeat.

    The cost of m sets on one rank, max(0, m*L - n), is convex in m, so taking
    the k cheapest marginal costs over all ranks is optimal.
    """
    h = (L + 1) // 2
    ranks = _set_ranks(wd)

    def cost(nat: list[int], extra: list[int] | None) -> int:
        zero = 0
        margins: list[int] = []
        for r in ranks:
            n = nat[r]
            a = n + extra[r] if extra is not None else n
            if a < h:
                continue
            z = n // L
            zero += z
            if zero >= k:
                return 0
            prev = 0
            for m in range(z + 1, a // h + 1):
                c = m * L - n
                margins.append(c - prev)
                prev = c
        need = k - zero
        if wd:
            a2 = nat[2] + (extra[2] if extra is not None else 0)
            if a2 >= h:
                margins.extend([L] * min(need, a2 // h))
        if len(margins) < need:
            return _BIG
        margins.sort()
        return sum(margins[:need])

    return cost


def _subset_sums(lengths: Sequence[int]) -> tuple[list[int], list[int]]:
    full = (1 << len(lengths)) - 1
    sum_l = [0] * (full + 1)
    sum_h = [0] * (full + 1)
    for sub in range(1, full + 1):
        low = sub & -sub
        i = low.bit_length() - 1
        sum_l[sub] = sum_l[sub ^ low] + lengths[i]
        sum_h[sub] = sum_h[sub ^ low] + (lengths[i] + 1) // 2
    return sum_l, sum_h


def _sets_dp(lengths: Sequence[int], nat: Sequence[int], wd: bool, distinct: bool,
             extra: Sequence[int] | None = None) -> tuple[int, list[tuple[int, int]]]:
    """Exact minimum wild units for sets of any lengths, with the assignment.

    Returns (cost, [(rank, subset bitmask of set indices), ...]); rank 2 with
    wild deuces means a set of 2s.  Small: ranks x 3^k with k sets.
    """
    k = len(lengths)
    full = (1 << k) - 1
    if k == 0:
        return 0, []
    sum_l, sum_h = _subset_sums(lengths)
    min_h = min(sum_h[1 << i] for i in range(k))
    options = [(r, nat[r], False) for r in _set_ranks(wd)]
    if wd:
        options.append((2, nat[2], True))
    dp: dict[int, int] = {0: 0}
    layers: list[tuple[int, dict[int, tuple[int, int]]]] = []
    for r, n, twos in options:
        a = n + extra[r] if extra is not None else n
        if a < min_h:
            continue
        new = dict(dp)
        back: dict[int, tuple[int, int]] = {}
        for mask, c in dp.items():
            rest = full ^ mask
            sub = rest
            while sub:
                if (not distinct or sub & (sub - 1) == 0) and a >= sum_h[sub]:
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


def _assign_equal(L: int, k: int, nat: Sequence[int], wd: bool, distinct: bool
                  ) -> list[tuple[int, int]]:
    """The assignment behind _cost_equal_distinct / _cost_equal_shared, as
    (rank, subset bitmask of set indices); assumes it is feasible."""
    h = (L + 1) // 2
    items: list[tuple[int, int]] = []  # (marginal cost, rank)
    for r in _set_ranks(wd):
        n = nat[r]
        if distinct:
            if n >= h:
                items.append((max(0, L - n), r))
        else:
            prev = 0
            for m in range(1, n // h + 1):
                c = max(0, m * L - n)
                items.append((c - prev, r))
                prev = c
    if wd and nat[2] >= h:
        items.extend([(L, 2)] * (1 if distinct else min(k, nat[2] // h)))
    items.sort(key=lambda t: t[0])  # stable: a rank's marginals stay in order
    subs: dict[int, int] = {}
    for i, (_c, r) in enumerate(items[:k]):
        subs[r] = subs.get(r, 0) | 1 << i
    return list(subs.items())


def _cost_mixed(lengths: tuple[int, ...], wd: bool, distinct: bool
                ) -> Callable[[list[int], list[int] | None], int]:
    memo: dict[tuple[tuple[int, ...], tuple[int, ...] | None], int] = {}

    def cost(nat: list[int], extra: list[int] | None) -> int:
        key = (tuple(nat), tuple(extra) if extra is not None else None)
        c = memo.get(key)
        if c is None:
            if len(memo) > 4096:
                memo.clear()
            c = memo[key] = _sets_dp(lengths, nat, wd, distinct, extra)[0]
        return c

    return cost


def _sets_reclaim(lengths: Sequence[int], nat: Sequence[int], wd: bool, distinct: bool,
                  holders: dict[int, list[int]], slacks: tuple[int, ...]
                  ) -> tuple[int, list[tuple[int, int]], list[tuple[int, int]]]:
    """Sets that may take back cards of their rank from runs, exactly.

    ``holders[r]`` lists the runs holding a card of rank r strictly inside
    their window; ``slacks[i]`` is how many naturals run i can spare.  A rank
    short of ceil(L/2) naturals per set reclaims the shortfall from distinct
    holders.  DP over ranks with state (sets placed, slacks left).  Returns
    (cost, groups, reclaims as (run, rank)), cost _BIG if impossible.
    """
    k = len(lengths)
    full = (1 << k) - 1
    sum_l, sum_h = _subset_sums(lengths)
    options = [(r, nat[r], False) for r in _set_ranks(wd)]
    if wd:
        options.append((2, nat[2], True))
    min_h = min(sum_h[1 << i] for i in range(k))
    Back = tuple[tuple[int, tuple[int, ...]], int, tuple[int, ...]]
    dp: dict[tuple[int, tuple[int, ...]], int] = {(0, slacks): 0}
    layers: list[tuple[int, dict[tuple[int, tuple[int, ...]], Back]]] = []
    for r, n, twos in options:
        hold = holders.get(r, ())
        if n + len(hold) < min_h:
            continue
        new = dict(dp)
        back: dict[tuple[int, tuple[int, ...]], Back] = {}
        for (mask, sl), c in dp.items():
            rest = full ^ mask
            sub = rest
            while sub:
                if not distinct or sub & (sub - 1) == 0:
                    short = sum_h[sub] - n
                    lend = [i for i in hold if sl[i] > 0]
                    if short <= len(lend):
                        total = sum_l[sub]
                        g = total if twos else (total - n if total > n else 0)
                        for chosen in combinations(lend, max(0, short)):
                            nsl = list(sl)
                            for i in chosen:
                                nsl[i] -= 1
                            key = (mask | sub, tuple(nsl))
                            if c + g < new.get(key, _BIG):
                                new[key] = c + g
                                back[key] = ((mask, sl), sub, chosen)
                sub = (sub - 1) & rest
        layers.append((r, back))
        dp = new
    best_key = None
    best = _BIG
    for key, c in dp.items():
        if key[0] == full and c < best:
            best, best_key = c, key
    if best_key is None:
        return _BIG, [], []
    groups: list[tuple[int, int]] = []
    reclaims: list[tuple[int, int]] = []
    key = best_key
    for r, back in reversed(layers):
        if key[0] and key in back:
            prev, sub, chosen = back[key]
            groups.append((r, sub))
            reclaims.extend((i, r) for i in chosen)
            key = prev
    return best, groups, reclaims


# ---------------------------------------------------------------------------
# Per-contract plan (cached: contracts are few and long-lived).
# ---------------------------------------------------------------------------

class _Plan:
    __slots__ = ("contract", "set_idx", "set_len", "run_idx", "run_len", "set_cost",
                 "size", "nat_need", "wd", "distinct")

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
        self.set_cost: Callable[[list[int], list[int] | None], int] | None
        if not lens:
            self.set_cost = None
        elif len(set(lens)) == 1:
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


class _Run:
    """A placed run: window lo..hi (values), length ln, the inner values it holds."""

    __slots__ = ("ri", "s", "lo", "hi", "ln", "held", "k")

    def __init__(self, ri: int, s: int, lo: int, hi: int, ln: int, held: set[int], k: int) -> None:
        self.ri = ri
        self.s = s
        self.lo = lo
        self.hi = hi
        self.ln = ln
        self.held = held  # naturals strictly between lo and hi
        self.k = k        # naturals in all (lo and hi included)

    @property
    def slack(self) -> int:
        """Naturals it can give up and stay legal."""
        return self.k - (self.ln + 1) // 2


# on_leaf(runs, set groups, reclaims (run index, rank), wild units used by runs)
_Leaf = Callable[[list[_Run], list[tuple[int, list[int]]], list[tuple[int, int]], int], bool]


def _quick_no(st: _State, plan: _Plan) -> bool:
    """Cheap necessary conditions; True means certainly impossible."""
    if st.n < plan.size:
        return True
    # every meld needs ceil(L/2) naturals; jokers are never natural
    return st.n - st.jokers < plan.nat_need


def _groups(plan: _Plan, raw: list[tuple[int, int]]) -> list[tuple[int, list[int]]]:
    k = len(plan.set_len)
    return [(r, [i for i in range(k) if sub >> i & 1]) for r, sub in raw]


def _borrow_plans(need: list[int], optional: list[int], b_min: int, lenders: list[_Run],
                  exhaustive: bool) -> Iterator[list[tuple[int, _Run]]]:
    """Ways to borrow: all of ``need`` plus b >= b_min of ``optional``, each
    value from a lender holding it with slack to spare.  Yields lists of
    (value, lender).  Not exhaustive: the first way only (any is as good)."""
    sizes = range(b_min, len(optional) + 1) if exhaustive else (b_min,)
    for b in sizes:
        for extra in combinations(optional, b):
            values = need + list(extra)
            used: dict[int, int] = {}
            chosen: list[tuple[int, _Run]] = []

            def assign(x: int) -> Iterator[list[tuple[int, _Run]]]:
                if x == len(values):
                    yield list(chosen)
                    return
                v = values[x]
                for lender in lenders:
                    if v in lender.held and lender.slack - used.get(id(lender), 0) > 0:
                        used[id(lender)] = used.get(id(lender), 0) + 1
                        chosen.append((v, lender))
                        yield from assign(x + 1)
                        chosen.pop()
                        used[id(lender)] -= 1

            for way in assign(0):
                yield way
                if not exhaustive:
                    return


def _search(st: _State, plan: _Plan, on_leaf: _Leaf, best_mode: bool = False,
            build: bool = True) -> bool:
    """Depth-first over run choices, longest minimum first.

    Every node prunes on cheap lower bounds: cards left against cards still
    needed; the sets' minimum wilds (cards runs could give back counted as
    available); and, for this run and the later ones of the same minimum
    length, the wilds of the cheapest window left.  Runs of equal minimum
    length are placed in (suit, lo, hi) order, so each layout is seen once.
    ``build`` False: only the answer matters, the leaf skips the set layout.
    """
    cnt, nat, masks = st.cnt, st.nat, st.masks
    J = st.jokers
    wd = plan.wd
    run_len = plan.run_len
    nruns = len(run_len)
    set_cost = plan.set_cost
    has_sets = set_cost is not None
    runs: list[_Run] = []
    used_wilds = 0
    used_naturals = 0
    # cards still needed once runs[:ri] are placed: the other runs and the sets
    still_needed = [sum(run_len[ri:]) + sum(plan.set_len) for ri in range(nruns + 1)]
    # runs from ri on with the same minimum length as run ri
    same_len = [run_len[ri:].count(run_len[ri]) for ri in range(nruns)]
    total = st.n

    def extra_naturals() -> list[int] | None:
        """Per rank, how many placed runs could give a card of it back."""
        extra = None
        for r in runs:
            if r.held and r.k > (r.ln + 1) // 2:  # some slack
                if extra is None:
                    extra = [0] * 14
                for v in r.held:
                    extra[v] += 1
        return extra

    def leaf(pool: int) -> bool:
        if not has_sets:
            return on_leaf(runs, [], [], used_wilds)
        if set_cost(nat, None) <= pool:
            if not build:
                return True
            lens = plan.set_len
            if len(set(lens)) == 1:
                raw = _assign_equal(lens[0], len(lens), nat, wd, plan.distinct)
            else:
                raw = _sets_dp(lens, nat, wd, plan.distinct)[1]
            return on_leaf(runs, _groups(plan, raw), [], used_wilds)
        holders: dict[int, list[int]] = {}
        for i, r in enumerate(runs):
            for v in r.held:
                holders.setdefault(v, []).append(i)
        slacks = tuple(r.slack for r in runs)
        c, raw, reclaims = _sets_reclaim(plan.set_len, nat, wd, plan.distinct, holders, slacks)
        if c > pool:
            return False
        return on_leaf(runs, _groups(plan, raw), reclaims, used_wilds)

    def rec(ri: int, bound: int) -> bool:
        nonlocal used_wilds, used_naturals
        if total - used_naturals - used_wilds < still_needed[ri]:
            return False
        pool = J - used_wilds + (nat[2] if wd else 0)
        if pool < 0:
            return False
        sets_need = set_cost(nat, extra_naturals() if runs else None) if has_sets else 0
        if sets_need > pool:
            return False
        if ri == nruns:
            return leaf(pool)
        L = run_len[ri]
        later = nruns - ri - 1
        same_next = later > 0 and run_len[ri + 1] == L
        exhaustive = later > 0 or has_sets
        cands: list[tuple[int, int, int, int, int, tuple[int, ...], int]] = []
        for s in range(4):
            if (s << 8) + 0xFF < bound:
                continue
            own = masks[s]
            lend = 0
            for r in runs:
                if r.s == s and r.held and r.k > (r.ln + 1) // 2:
                    for v in r.held:
                        lend |= 1 << v
            if not lend:
                sk = s << 8
                for ln, w, lo, hi, seg in _windows(own, L):
                    if w <= pool and sk | (lo << 4) | hi >= bound:
                        cands.append((ln, w, s, lo, hi, seg, len(seg)))
                continue
            bits = _bits(own | lend)
            nb = len(bits)
            if nb < 2:
                continue
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
                    key = (s << 8) | (lo << 4) | hi
                    if key < bound:
                        continue
                    own_in = (own >> lo & ((1 << span) - 1)).bit_count()
                    if ln - own_in > pool:
                        continue
                    cands.append((ln, ln - own_in, s, lo, hi, bits[i:j + 1], own_in))
        if not cands:
            return False
        # this run and the later ones of the same length each need >= min wilds
        if same_len[ri] * min(c[1] for c in cands) + sets_need > pool:
            return False
        if len(cands) > 1:
            if best_mode:
                cands.sort(key=lambda t: (-len(t[5]), t[1]))
            elif later or has_sets:
                # short windows first: they leave the most cards for the other melds
                cands.sort(key=lambda t: (t[0], t[1]))
        for ln, w, s, lo, hi, seg, own_in in cands:
            own = masks[s]
            sbase = s * 13
            mine = [v for v in seg if own >> v & 1] if own_in < len(seg) else seg
            if own_in < len(seg):
                need = [v for v in (lo, hi) if not own >> v & 1]
                optional = [v for v in seg[1:-1] if not own >> v & 1]
                b_min = max(0, (ln + 1) // 2 - own_in - len(need))
                lenders = [r for r in runs if r.s == s and r.held]
                ways = _borrow_plans(need, optional, b_min, lenders, exhaustive)
            else:
                ways = ((),)
            for way in ways:
                for v in mine:
                    idx = sbase + _VOFF[v]
                    r = _VRANK[v]
                    cnt[idx] -= 1
                    nat[r] -= 1
                    if not cnt[idx]:
                        masks[s] &= ~_RBITS[r]
                held = {v for v in mine if lo < v < hi}
                for v, lender in way:
                    lender.held.discard(v)
                    lender.k -= 1
                    if lo < v < hi:
                        held.add(v)
                runs.append(_Run(ri, s, lo, hi, ln, held, own_in + len(way)))
                used_wilds += w
                used_naturals += own_in
                ok = rec(ri + 1, ((s << 8) | (lo << 4) | hi) if same_next else 0)
                used_naturals -= own_in
                used_wilds -= w
                runs.pop()
                for v, lender in way:
                    lender.held.add(v)
                    lender.k += 1
                for v in mine:
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


def _drafts(plan: _Plan, jokers: int, layouts: list[_Layout], cnt: list[int],
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

    def on_leaf(runs: list[_Run], groups: list[tuple[int, list[int]]],
                reclaims: list[tuple[int, int]], _used: int) -> bool:
        layouts, cnt = _layouts(st, runs, reclaims)
        drafts, jokers = _drafts(plan, st.jokers, layouts, cnt, groups)
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
    return _search(st, plan, lambda *_: True, build=False)


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

    def on_leaf(runs: list[_Run], groups: list[tuple[int, list[int]]],
                reclaims: list[tuple[int, int]], used: int) -> bool:
        nonlocal leaves
        leaves += 1
        pool = st.jokers - used + (st.nat[2] if wd else 0)
        options = [(groups, reclaims)] + [(g, []) for g in _set_choices(plan, st.nat, pool)]
        for set_groups, back in options:
            layouts, cnt = _layouts(st, runs, back)
            drafts, jokers = _drafts(plan, st.jokers, layouts, cnt, set_groups)
            twos_left = sum(cnt[s * 13 + 1] for s in range(4)) if wd else 0
            spare = jokers + twos_left - sum(d.slots.count(None) for d in drafts)
            if spare < 0:
                continue  # pragma: no cover - the search checked the wild budget
            _improve(drafts, cnt, wd, spare)
            melds = _finish(drafts, cnt, jokers, wd)
            score = _score(hand_cnt, melds, wd)
            if not best or score < best[0][0]:
                best[:] = [(score, melds)]
        # stop at the cap, or when nothing natural is left and no wild was used
        return leaves >= _LEAF_CAP or bool(best) and best[0][0][:2] == (0, 0)

    _search(st, plan, on_leaf, best_mode=True)
    if best:
        return best[0][1]
    if leaves:  # pragma: no cover - every leaf yields a scored solution
        return find_contract(hand, contract, rules)
    return None
