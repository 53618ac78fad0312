"""Games kept as the bootstrap reads them, for a fit of a store that keeps growing.

``assess`` takes a list of ``Game`` objects: a league's page (``arena league
serve``) that built one of every hand stored, from every match read whole,
grew with the league (145 MB at 500 versions; benchmarks/league.py --only d).
What the fit and its bootstrap read of a game is less: its players by seat,
their ranks, its duplicate group; and the games of one match that agree in
all three (the same order in two hands) are one outcome counted twice.  So
``Counted`` keeps, per table size, one row of small integers per distinct
outcome of a match (its seats' players, as indices, their ranks, its group,
how often), in ``array`` buffers: about 25 bytes an outcome, against the
few hundred a ``Game`` held, and the matches themselves not at all.
``confidence.assess_counted`` fits it, with the same numbers ``assess`` of the
same games gives, to the bit (the outcomes are summed as integers either
way; tests/test_league_memory.py holds them equal).

The groups themselves are kept (a name each): the bootstrap resamples whole
duplicate groups, so what it needs grows with the groups played, one row
per outcome; that is the floor of an honest interval, not a copy of the
matches.  No numpy here: the arrays are read as numpy's once, at the fit.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterable

from .games import Game, draw_rate

__all__ = ["Counted"]


class Counted:
    """Ranked games added a match at a time (``add``), kept by distinct outcome."""

    def __init__(self) -> None:
        self.players: dict[str, int] = {}          # name -> index, in the order first seen
        self.groups: dict[str, int] = {}           # duplicate group -> index, likewise
        # Per table size k: k player indices a row (by seat), k ranks, the group, how many games.
        self.who: dict[int, array[int]] = {}
        self.ranks: dict[int, array[int]] = {}
        self.group: dict[int, array[int]] = {}
        self.times: dict[int, array[int]] = {}
        self.ties = self.pairs = 0
        self.games = 0

    def add(self, games: Iterable[Game]) -> None:
        """Games of one match (or any): equal ones among them are kept once, counted."""
        merged: dict[tuple[tuple[str, ...], tuple[int, ...], str], int] = {}
        for g in games:
            ties, pairs = draw_rate((g,))
            self.ties, self.pairs = self.ties + ties, self.pairs + pairs
            self.games += 1
            for p in g.players:
                if p not in self.players:
                    self.players[sys.intern(p)] = len(self.players)
            if g.group not in self.groups:
                self.groups[g.group] = len(self.groups)
            if len(g.players) >= 2:
                key = (g.players, g.ranks, g.group)
                merged[key] = merged.get(key, 0) + 1
        for (players, ranks, group), times in merged.items():
            k = len(players)
            if k not in self.who:
                self.who[k], self.ranks[k] = array("i"), array("b")
                self.group[k], self.times[k] = array("i"), array("i")
            self.who[k].extend(self.players[p] for p in players)
            self.ranks[k].extend(ranks)
            self.group[k].append(self.groups[group])
            self.times[k].append(times)

    def __len__(self) -> int:
        """The games added."""
        return self.games

    def rows(self) -> int:
        """The outcomes kept: what the memory grows with."""
        return sum(len(g) for g in self.group.values())
