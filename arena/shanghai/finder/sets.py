"""Sets on the cards left by the runs: minimum wild units and assignments."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations

from .counts import _BIG

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


_ReclaimKey = tuple[int, tuple[int, ...]]  # (sets placed, slacks left)
_ReclaimBack = tuple[_ReclaimKey, int, tuple[int, ...]]  # (previous key, sets, runs reclaimed from)


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
    dp: dict[_ReclaimKey, int] = {(0, slacks): 0}
    layers: list[tuple[int, dict[_ReclaimKey, _ReclaimBack]]] = []
    for r, n, twos in options:
        hold = holders.get(r, ())
        if n + len(hold) < min_h:
            continue
        new = dict(dp)
        back: dict[_ReclaimKey, _ReclaimBack] = {}
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
    return _reclaim_answer(dp, layers, full)


def _reclaim_answer(dp: dict[_ReclaimKey, int], layers: list[tuple[int, dict[_ReclaimKey, _ReclaimBack]]],
                    full: int) -> tuple[int, list[tuple[int, int]], list[tuple[int, int]]]:
    """_sets_reclaim's answer from its last DP layer: the cheapest state with
    every set placed, traced back through the layers to its groups and
    reclaims."""
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
