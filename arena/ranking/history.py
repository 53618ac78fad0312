"""The fits of a tournament's prefixes, for a chart of the ratings over it.

``arena report`` charts the ratings after the first N matches at up to 24
values of N.  Fitting each prefix afresh made its games again, checked and
sorted them and indexed their outcomes, every time: about 2 CPU-s a point at
1,000 four-seat matches, growing with the tournament.  Here the games are
indexed once, each prefix's problem is a slice of that index
(``Problem.prefix``), its draw rate a running sum, and each fit starts from
the one before it (``fit(warm=)``): the same fits, to the bit, as
``fit(games[:n], players, warm=previous)``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from .games import Game, canonical, draw_rate, players_of
from .model import Prior, shrunk_draw_rate
from .trueskill_batch import Fit, Problem, encoded, fit, fit_problem

__all__ = ["fit_prefixes"]


def fit_prefixes(games: Sequence[Game], cuts: Sequence[int], players: Sequence[str] = (),
                 prior: Prior = Prior()) -> Iterator[tuple[int, Fit]]:
    """(n, the fit of ``games[:n]``) for each n of ``cuts`` (ascending) whose
    prefix has a game, each warm-started from the one before, as
    ``fit(games[:n], players, warm=...)`` gives it."""
    canonical(games)                  # two games with one key: the error fit gives
    everyone = players_of(games, players)
    coded = encoded(games, everyone)
    first: dict[str, int] = {}
    for n, g in enumerate(games):
        for p in g.players:
            first.setdefault(p, n)
    ties, pairs = [0], [0]
    for g in games:
        t, n_pairs = draw_rate([g])
        ties.append(ties[-1] + t)
        pairs.append(pairs[-1] + n_pairs)
    warm = None
    for n in (min(c, len(games)) for c in cuts):
        if n <= 0:
            continue
        if any(first[p] >= n for p in everyone if p in first and p not in players):
            warm = fit(games[:n], players, prior, warm=warm)       # a player yet to come: another index
        else:
            warm = fit_problem(Problem.prefix(games, everyone, coded, n), prior, shrunk_draw_rate(ties[n], pairs[n]),
                               warm)
        yield n, warm
