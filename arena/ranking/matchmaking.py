"""Which tables to play next, for a field too big to play every table.

A Swiss system for multi-player tables.  The field is sorted by rating; for
every adjacent pair not yet separated, the ``k`` bots around the pair (a
window of the order, the pair in its middle) make a table.  Tables that
would only re-test pairs already told apart are not played, so the matches
go where the order is least certain.  The first rounds, before anything is
known, split the field at random into tables that cover every bot, and
every later round has such a random cover besides its windows, so that each
bot keeps meeting a spread of the field, not only its neighbours (see
``arena.tournament.pairing.rounds.swiss_round_tables``).

Each table is then played in every rotation on one duplicate deal, as in a
round robin, so seat and card luck still cancel within a table.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

__all__ = ["cover", "windows"]


def cover(players: Sequence[str], k: int, rng: random.Random) -> list[tuple[str, ...]]:
    """Tables of ``k`` in which every player sits at least once: a random
    split, the last table topped up with players drawn from the others."""
    if not 2 <= k <= len(players):
        raise ValueError(f"tables of {k} need 2 to {len(players)} players")
    shuffled = list(players)
    rng.shuffle(shuffled)
    tables = [shuffled[i:i + k] for i in range(0, len(shuffled), k)]
    if len(tables[-1]) < k:
        others = [p for p in shuffled if p not in tables[-1]]
        tables[-1] += rng.sample(others, k - len(tables[-1]))
    return [tuple(sorted(t)) for t in tables]


def windows(order: Sequence[str], separated: Sequence[bool], k: int) -> list[tuple[str, ...]]:
    """One table per distinct window of ``k`` neighbours around each
    unseparated adjacent pair of ``order`` (best first)."""
    n = len(order)
    if not 2 <= k <= n:
        raise ValueError(f"tables of {k} need 2 to {n} players")
    if len(separated) != n - 1:
        raise ValueError(f"{len(separated)} separations for {n} players")
    starts = sorted({min(max(0, i - (k - 2) // 2), n - k) for i, sep in enumerate(separated) if not sep})
    return [tuple(sorted(order[s:s + k])) for s in starts]
