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
    return _Search(st, plan, on_leaf, best_mode, build).rec(0, 0)


def _lendable(runs: list[_Run]) -> list[int]:
    """Per suit, a mask of the inner values placed runs could lend (those
    with slack to spare)."""
    lends = [0, 0, 0, 0]
    for r in runs:
        if r.held and r.k > (r.ln + 1) // 2:
            lend = lends[r.s]
            for v in r.held:
                lend |= 1 << v
            lends[r.s] = lend
    return lends


def _run_cands(runs: list[_Run], masks: list[int], L: int, bound: int, pool: int,
               wd: bool) -> list[_Cand]:
    """The windows run ``L`` could take at this node: key (suit, lo, hi) >=
    ``bound`` (runs of equal length come in key order), at most ``pool`` wild
    units; in a suit placed runs could lend to, the windows it could hold
    with the lendable cards back in hand."""
    cands: list[_Cand] = []
    lends = _lendable(runs)  # once per node, not per suit
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
        # w is then ln minus the naturals it really owns in there
        for ln, _w, lo, hi, seg in _windows(own | lend, L):
            if (s << 8) | (lo << 4) | hi < bound:
                continue
            own_in = (own >> lo & ((1 << (hi - lo + 1)) - 1)).bit_count()
            units = ln - own_in + 1 if wd and lo <= 2 <= hi and own & 4 else ln - own_in
            if units > pool:
                continue
            cands.append((ln, ln - own_in, s, lo, hi, seg, own_in, None, seg[1:-1], -len(seg), units))
    return cands


def _affordable(cands: list[_Cand], R: int, cnt: list[int], pool: int,
                sets_need: int) -> list[_Cand]:
    """``cands`` less those after which this run and the R - 1 later ones of
    its length, with the sets, cannot be paid for from ``pool`` (empty: the
    node has no leaf)."""
    if R * min(map(_UNITS, cands)) + sets_need > pool:
        return []
    if R > 1:
        if _slots_need(cands, R, cnt, pool - sets_need):
            return []
        return _with_a_next(cands, R, cnt, pool - sets_need)
    return cands


class _Search:
    """The state of one search: the hand's counts (cards leave them as runs
    are placed and come back on the way up), the runs placed, the wild units
    and naturals they use."""

    __slots__ = ("cnt", "nat", "masks", "J", "wd", "plan", "run_len", "nruns", "set_cost",
                 "has_sets", "runs", "used_wilds", "used_naturals", "still_needed", "same_len",
                 "total", "on_leaf", "best_mode", "build")

    def __init__(self, st: _State, plan: _Plan, on_leaf: _Leaf, best_mode: bool,
                 build: bool) -> None:
        self.cnt, self.nat, self.masks = st.cnt, st.nat, st.masks
        self.J = st.jokers
        self.total = st.n
        self.wd = plan.wd
        self.plan = plan
        self.run_len = plan.run_len
        self.nruns = len(plan.run_len)
        self.set_cost = plan.set_cost
        self.has_sets = plan.set_cost is not None
        self.still_needed = plan.still_needed
        self.same_len = plan.same_len
        self.runs: list[_Run] = []
        self.used_wilds = 0
        self.used_naturals = 0
        self.on_leaf = on_leaf
        self.best_mode = best_mode
        self.build = build

    def extra_naturals(self) -> list[int] | None:
        """Per rank, how many placed runs could give a card of it back."""
        extra = None
        for r in self.runs:
            if r.held and r.k > (r.ln + 1) // 2:  # some slack
                if extra is None:
                    extra = [0] * 14
                for v in r.held:
                    extra[v] += 1
        return extra

    def leaf(self, pool: int) -> bool:
        """All runs placed: lay out the sets (reclaiming run cards if need
        be) within ``pool`` wild units and hand the layout to on_leaf."""
        plan, nat, wd, runs = self.plan, self.nat, self.wd, self.runs
        if not self.has_sets:
            return self.on_leaf(runs, [], [], self.used_wilds)
        if self.set_cost(nat, None) <= pool:  # type: ignore[misc]  # has_sets: not None
            if not self.build:
                return True
            lens = plan.set_len
            if len(set(lens)) == 1:
                raw = _assign_equal(lens[0], len(lens), nat, wd, plan.distinct)
            else:
                raw = _sets_dp(lens, nat, wd, plan.distinct)[1]
            return self.on_leaf(runs, _groups(plan, raw), [], self.used_wilds)
        holders: dict[int, list[int]] = {}
        for i, r in enumerate(runs):
            for v in r.held:
                holders.setdefault(v, []).append(i)
        slacks = tuple(r.slack for r in runs)
        c, raw, reclaims = _sets_reclaim(plan.set_len, nat, wd, plan.distinct, holders, slacks)
        if c > pool:
            return False
        return self.on_leaf(runs, _groups(plan, raw), reclaims, self.used_wilds)

    def rec(self, ri: int, bound: int) -> bool:
        """Place run ``ri`` and the ones after it (key >= ``bound``), then the sets."""
        used_wilds = self.used_wilds
        if self.total - self.used_naturals - used_wilds < self.still_needed[ri]:
            return False
        nat = self.nat
        pool = self.J - used_wilds + (nat[2] if self.wd else 0)
        if pool < 0:
            return False
        has_sets = self.has_sets
        runs = self.runs
        sets_need = self.set_cost(nat, self.extra_naturals() if runs else None) if has_sets else 0  # type: ignore[misc]  # has_sets: not None
        if sets_need > pool:
            return False
        nruns = self.nruns
        if ri == nruns:
            return self.leaf(pool)
        run_len = self.run_len
        L = run_len[ri]
        later = nruns - ri - 1
        same_next = later > 0 and run_len[ri + 1] == L
        exhaustive = later > 0 or has_sets
        cands = _run_cands(runs, self.masks, L, bound, pool, self.wd)
        if not cands:
            return False
        # this run and the later ones of the same length each need >= min wilds
        cands = _affordable(cands, self.same_len[ri], self.cnt, pool, sets_need)
        if not cands:
            return False
        if len(cands) > 1:
            if self.best_mode:
                cands.sort(key=_BEST_ORDER)
            elif later or has_sets:
                # short windows first: they leave the most cards for the other melds
                cands.sort(key=_FIND_ORDER)
        for c in cands:
            if c[6] == len(c[5]):
                # every natural its own: nothing to borrow (the usual case)
                if self.place_own(ri, c, same_next):
                    return True
            elif self.place_borrowing(ri, c, same_next, exhaustive):
                return True
        return False

    def place_own(self, ri: int, c: _Cand, same_next: bool) -> bool:
        """Place run ``ri`` on window ``c`` from the hand's own cards and search on."""
        ln, w, s, lo, hi, seg, own_in, cells, inner, _, _ = c
        if cells is None:
            cells = _cells(s, seg)
        cnt, nat, masks, runs = self.cnt, self.nat, self.masks, self.runs
        m0 = masks[s]
        for idx, rk, nbits in cells:
            left = cnt[idx] - 1
            cnt[idx] = left
            nat[rk] -= 1
            if not left:
                masks[s] &= nbits
        runs.append(_Run(ri, s, lo, hi, ln, set(inner), own_in))
        self.used_wilds += w
        self.used_naturals += own_in
        ok = self.rec(ri + 1, ((s << 8) | (lo << 4) | hi) if same_next else 0)
        self.used_naturals -= own_in
        self.used_wilds -= w
        runs.pop()
        for idx, rk, _nbits in cells:
            cnt[idx] += 1
            nat[rk] += 1
        masks[s] = m0
        return ok

    def place_borrowing(self, ri: int, c: _Cand, same_next: bool, exhaustive: bool) -> bool:
        """Place run ``ri`` on window ``c``, borrowing the naturals it lacks
        from placed runs of its suit, each way in turn, and search on."""
        ln, w, s, lo, hi, seg, own_in, _cells_, inner, _, _ = c
        cnt, nat, masks, runs = self.cnt, self.nat, self.masks, self.runs
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
            self.used_wilds += w
            self.used_naturals += own_in
            ok = self.rec(ri + 1, ((s << 8) | (lo << 4) | hi) if same_next else 0)
            self.used_naturals -= own_in
            self.used_wilds -= w
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
