"""Which table the league plays next: new versions first, then where the table is least certain.

A table is ``k`` playing versions, played in ``k`` seatings on one duplicate
deal (``plan``).  Its **focus** is the version that most needs matches: a
version still in its placement (fewer than ``placement_matches`` matches,
fewest first: "new versions first"), else the version whose rating is least
certain (largest TrueSkill sigma).  The other seats go to the versions a
match with the focus tells most about: those rated closest to it, in units
of the two ratings' combined uncertainty (a game between two players far
apart in rating is one whose result was known before it was played), with
a little seeded noise so that a version meets a spread of its neighbours
rather than the same two every time.

The ratings are ``arena.ranking.live``'s: the batch fit in plain Python,
since the run forks its workers and must not load numpy (``live``'s doc).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from ..ranking.model import Prior, Rating

__all__ = ["NOISE", "next_table"]

# Up to this many combined sigmas of noise in how close an opponent counts:
# enough to vary a table among neighbours, never to seat a version far off.
NOISE = 0.5


def next_table(playing: Sequence[str], counts: Mapping[str, int], ratings: Mapping[str, Rating], k: int,
               placement_matches: int, rng: random.Random) -> tuple[str, ...] | None:
    """The next table's versions (sorted), or None when fewer than ``k`` play."""
    if len(playing) < k:
        return None
    prior = Prior()
    rated = {v: ratings.get(v, Rating(prior.mu, prior.sigma)) for v in playing}
    new = [v for v in playing if counts.get(v, 0) < placement_matches]
    if new:
        focus = min(new, key=lambda v: (counts.get(v, 0), v))
    else:
        focus = max(playing, key=lambda v: (rated[v].sigma, -counts.get(v, 0), v))
    f = rated[focus]

    def distance(v: str) -> float:
        r = rated[v]
        return abs(r.mu - f.mu) / (r.sigma + f.sigma) + NOISE * rng.random()

    others = sorted((v for v in playing if v != focus), key=lambda v: (distance(v), v))
    return tuple(sorted((focus, *others[:k - 1])))
