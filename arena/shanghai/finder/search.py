"""The depth-first search over run choices (see the package docstring for why
it is exact), with sets solved at every node and leaf."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator
from itertools import combinations, compress
from operator import itemgetter

from .counts import _BIG, _RBITS, _VOFF, _VRANK, _Cand, _cells, _State, _suit_cands, _windows
from .plan import _Plan
from .sets import _assign_equal, _sets_dp, _sets_reclaim

# ---------------------------------------------------------------------------
# The search.
# ---------------------------------------------------------------------------

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


_UNITS = itemgetter(10)  # wild units: wilds and the suit's own 2 as a natural
_FIND_ORDER = itemgetter(0, 1)   # (length, wilds)
_BEST_ORDER = itemgetter(9, 1)   # (-naturals in the window, wilds)

# on_leaf(runs, set groups, reclaims (run index, rank), wild units used by runs)
_Leaf = Callable[[list[_Run], list[tuple[int, list[int]]], list[tuple[int, int]], int], bool]


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


def _slots_need(cands: list[_Cand], R: int, cnt: list[int], budget: int) -> bool:
    """Whether R runs from ``cands`` surely need more than ``budget`` wild units.

    This run and the R - 1 later ones of its length all come from these
    candidates: each later run's window (lo, hi) is one of them, as lo and hi
    are cards still in hand, with at most the wild units it has now (cards
    only leave the hand deeper down).  Two runs on one window each took a
    copy of lo and of hi, so a window serves at most min(copies of lo, copies
    of hi) runs (a suit that could borrow: no limit).  So the R cheapest
    slots bound the wild units from below.
    """
    need = R
    total = 0
    for c in sorted(cands, key=_UNITS):
        w = c[10]
        if total + need * w > budget:
            return True
        cells = c[7]
        k = need if cells is None else min(cnt[cells[0][0]], cnt[cells[-1][0]], need)
        total += k * w
        need -= k
        if not need:
            return total > budget
    return True


def _with_a_next(cands: list[_Cand], R: int, cnt: list[int], budget: int) -> list[_Cand]:
    """The candidates after which the R - 1 later runs of their length can
    still be paid for: those runs come from the candidates with a key (suit,
    lo, hi) no lower, the candidate itself only when its suit holds a second
    copy of its lo and hi (or could borrow), and each costs at least the
    wild units of the cheapest of them (see _slots_need).  ``cands`` is in key order; the order is kept, and a
    dropped candidate is one whose subtree has no leaf.
    """
    nxt = _BIG  # the cheapest candidate after this one
    keep = [False] * len(cands)
    for i in range(len(cands) - 1, -1, -1):
        c = cands[i]
        w = c[10]
        cells = c[7]
        again = nxt
        if w < again and (cells is None or (cnt[cells[0][0]] > 1 and cnt[cells[-1][0]] > 1)):
            again = w
        keep[i] = w + (R - 1) * again <= budget
        if w < nxt:
            nxt = w
    return list(compress(cands, keep))


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
    still_needed = plan.still_needed
    same_len = plan.same_len
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
        if set_cost(nat, None) <= pool:  # type: ignore[misc]  # has_sets: not None
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
        sets_need = set_cost(nat, extra_naturals() if runs else None) if has_sets else 0  # type: ignore[misc]  # has_sets: not None
        if sets_need > pool:
            return False
        if ri == nruns:
            return leaf(pool)
        L = run_len[ri]
        later = nruns - ri - 1
        same_next = later > 0 and run_len[ri + 1] == L
        exhaustive = later > 0 or has_sets
        cands: list[_Cand] = []
        # per suit, the inner cards placed runs could lend (once per node, not per suit)
        lends = [0, 0, 0, 0]
        for r in runs:
            if r.held and r.k > (r.ln + 1) // 2:
                lend = lends[r.s]
                for v in r.held:
                    lend |= 1 << v
                lends[r.s] = lend
        # runs of equal length come in (suit, lo, hi) order: this one's key >= bound
        bs = bound >> 8
        blohi = bound & 0xFF
        cpool = pool if pool < 7 else 7  # no run needs more: w <= ln // 2 <= 6, and a 2
        for s in range(bs, 4):
            own = masks[s]
            lend = lends[s]
            if not lend:
                keys, suit_cands = _suit_cands(own, L, s, cpool, wd)
                if s == bs and blohi:
                    cands.extend(suit_cands[bisect_left(keys, blohi):])
                else:
                    cands.extend(suit_cands)
                continue
            # the windows it could hold with the cards lendable to it back in
            # hand; w is then ln minus the naturals it really owns in there
            for ln, _w, lo, hi, seg in _windows(own | lend, L):
                if (s << 8) | (lo << 4) | hi < bound:
                    continue
                own_in = (own >> lo & ((1 << (hi - lo + 1)) - 1)).bit_count()
                units = ln - own_in + 1 if wd and lo <= 2 <= hi and own & 4 else ln - own_in
                if units > pool:
                    continue
                cands.append((ln, ln - own_in, s, lo, hi, seg, own_in, None, seg[1:-1], -len(seg), units))
        if not cands:
            return False
        # this run and the later ones of the same length each need >= min wilds
        R = same_len[ri]
        if R * min(map(_UNITS, cands)) + sets_need > pool:
            return False
        if R > 1:
            if _slots_need(cands, R, cnt, pool - sets_need):
                return False
            cands = _with_a_next(cands, R, cnt, pool - sets_need)
            if not cands:
                return False
        if len(cands) > 1:
            if best_mode:
                cands.sort(key=_BEST_ORDER)
            elif later or has_sets:
                # short windows first: they leave the most cards for the other melds
                cands.sort(key=_FIND_ORDER)
        for ln, w, s, lo, hi, seg, own_in, cells, inner, _, _ in cands:
            if own_in == len(seg):
                # every natural its own: nothing to borrow (the usual case)
                if cells is None:
                    cells = _cells(s, seg)
                m0 = masks[s]
                for idx, rk, nbits in cells:
                    left = cnt[idx] - 1
                    cnt[idx] = left
                    nat[rk] -= 1
                    if not left:
                        masks[s] &= nbits
                runs.append(_Run(ri, s, lo, hi, ln, set(inner), own_in))
                used_wilds += w
                used_naturals += own_in
                ok = rec(ri + 1, ((s << 8) | (lo << 4) | hi) if same_next else 0)
                used_naturals -= own_in
                used_wilds -= w
                runs.pop()
                for idx, rk, _nbits in cells:
                    cnt[idx] += 1
                    nat[rk] += 1
                masks[s] = m0
                if ok:
                    return True
                continue
            own = masks[s]
            sbase = s * 13
            mine = [v for v in seg if own >> v & 1]
            need = [v for v in (lo, hi) if not own >> v & 1]
            optional = [v for v in inner if not own >> v & 1]
            b_min = max(0, (ln + 1) // 2 - own_in - len(need))
            lenders = [r for r in runs if r.s == s and r.held]
            for way in _borrow_plans(need, optional, b_min, lenders, exhaustive):
                for v in mine:
                    idx = sbase + _VOFF[v]
                    rk = _VRANK[v]
                    cnt[idx] -= 1
                    nat[rk] -= 1
                    if not cnt[idx]:
                        masks[s] &= ~_RBITS[rk]
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
                    rk = _VRANK[v]
                    if not cnt[idx]:
                        masks[s] |= _RBITS[rk]
                    cnt[idx] += 1
                    nat[rk] += 1
                if ok:
                    return True
        return False

    return rec(0, 0)
