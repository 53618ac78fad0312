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

from .best import find_best_contract
from .find import could_go_down, find_contract

__all__ = ["find_contract", "find_best_contract", "could_go_down"]
