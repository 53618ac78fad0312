"""Per-contract plan: the contract's runs and sets, sized and cached."""

from __future__ import annotations

from collections.abc import Callable

from ..ruleset import RUN, SET, Contract, Ruleset
from .counts import _State
from .sets import _cost_equal_distinct, _cost_equal_shared, _cost_mixed

# ---------------------------------------------------------------------------
# Per-contract plan (cached: contracts are few and long-lived).
# ---------------------------------------------------------------------------

class _Plan:
    __slots__ = ("contract", "set_idx", "set_len", "run_idx", "run_len", "set_cost",
                 "size", "nat_need", "wd", "distinct", "still_needed", "same_len")

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
        n = len(self.run_len)
        # cards still needed once runs[:ri] are placed: the other runs and the sets
        self.still_needed = tuple(sum(self.run_len[ri:]) + sum(self.set_len) for ri in range(n + 1))
        # runs from ri on with the same minimum length as run ri
        self.same_len = tuple(self.run_len[ri:].count(self.run_len[ri]) for ri in range(n))
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


def _quick_no(st: _State, plan: _Plan) -> bool:
    """Cheap necessary conditions; True means certainly impossible."""
    if st.n < plan.size:
        return True
    # every meld needs ceil(L/2) naturals; jokers are never natural
    return st.n - st.jokers < plan.nat_need
