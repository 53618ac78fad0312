"""find_contract and could_go_down: the first solution the search finds."""

from __future__ import annotations

from collections.abc import Sequence

from ..cards import Card
from ..melds import Meld
from ..ruleset import Contract, Ruleset
from .counts import _State
from .layout import _drafts, _finish, _layouts
from .plan import _plan, _quick_no
from .search import _Run, _search

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
