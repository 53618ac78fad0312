"""Which match an idle worker plays next.

Each worker keeps its own pool of bot processes (``BotPool``), and a process
never plays two matches of one deal (with duplicate deals, every rotation of
a table gets the same cards).  The schedule puts the rotations of a deal next
to each other, so handing matches out in schedule order gives each worker
several rotations of one deal, and each rotation needs processes of its own:
at ``--jobs 2`` a round robin of six bots at 4-seat tables started 36 bot
processes where ``--jobs 1`` started 24.

So an idle worker is given, of the next ``LOOKAHEAD`` matches, the first (in
schedule order) that needs the fewest new processes in its pool, as far as
this side can tell: it counts, per worker, the processes of each bot and the
deals each bot has played there.  Workers then tend to take whole rotations
(worker 0 rotations 0 and 1 of every table, worker 1 rotations 2 and 3) and
start as many processes as one worker would.  When jobs do not divide the
rotations (3 rotations on 2 workers) some extra starts remain: balancing the
workers' load needs them.

The count is a model, not the pool itself: a process the pool stops (a
forfeit, its CPU limit, too many idle) is still counted.  It only orders the
matches; every match is played all the same.  Only the order in which
matches start changes, never what is played or stored.
"""

from __future__ import annotations

import logging
from collections import Counter, deque
from collections.abc import Hashable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...match.spec import MatchSpec

__all__ = ["Assigner", "PoolModel", "LOOKAHEAD"]

LOG = logging.getLogger(__name__)

# How many of the next matches an idle worker chooses from.  Enough for the
# rotations of a few deals of 8-seat tables; a match waits at most this many
# hand-outs longer than in schedule order.
LOOKAHEAD = 32


class PoolModel:
    """One worker's pool as seen from here: processes per bot, deals per bot."""

    def __init__(self) -> None:
        self.kept: Counter[Hashable] = Counter()
        self.seen: dict[Hashable, Counter[Hashable]] = {}

    def new_starts(self, keys: tuple[Hashable, ...], deal: Hashable) -> int:
        """Processes the worker would start to play a match of ``keys`` on ``deal``."""
        starts = 0
        for key, wanted in Counter(keys).items():
            seen = self.seen.get(key)
            free = self.kept[key] - (seen[deal] if seen else 0)
            starts += max(0, wanted - free)
        return starts

    def play(self, keys: tuple[Hashable, ...], deal: Hashable) -> None:
        for key, wanted in Counter(keys).items():
            seen = self.seen.setdefault(key, Counter())
            free = self.kept[key] - seen[deal]
            self.kept[key] += max(0, wanted - free)
            seen[deal] += wanted


class Assigner:
    """Hands out the matches of ``specs`` to ``workers`` workers (see the module).

    With one worker the matches go in schedule order: then the order changes
    nothing of what is started.
    """

    def __init__(self, specs: Iterator[MatchSpec], workers: int, lookahead: int = LOOKAHEAD,
                 pools: dict[Hashable, PoolModel] | None = None) -> None:
        # ``pools``: the workers' pools as an earlier Assigner of the same
        # executor left them (the rounds of a Swiss tournament), updated here.
        self._specs = specs
        self._pending: deque[MatchSpec] = deque()
        self._lookahead = max(1, lookahead) if workers > 1 else 1
        self._pools: dict[Hashable, PoolModel] = {} if pools is None else pools
        self._more = True

    def next_for(self, worker: Hashable) -> MatchSpec | None:
        """The match ``worker`` (any name that stays the worker's) plays next,
        or None when none is left."""
        self._fill()
        if not self._pending:
            return None
        pool = self._pools.setdefault(worker, PoolModel())
        best, fewest = 0, None
        for i, spec in enumerate(self._pending):
            starts = pool.new_starts(spec.process_keys(), spec.deal_key)
            if fewest is None or starts < fewest:
                best, fewest = i, starts
                if starts == 0:
                    break
        spec = self._pending[best]
        del self._pending[best]
        LOG.debug("worker %s plays %s: %d new bot processes", worker, spec.match_id, fewest)
        pool.play(spec.process_keys(), spec.deal_key)
        return spec

    def forget(self, worker: Hashable) -> None:
        """``worker`` was replaced or lost: its pool is gone."""
        self._pools.pop(worker, None)

    @property
    def processes(self) -> int:
        """Bot processes the workers' pools started so far, as modelled."""
        return sum(sum(pool.kept.values()) for pool in self._pools.values())

    def _fill(self) -> None:
        while self._more and len(self._pending) < self._lookahead:
            spec = next(self._specs, None)
            if spec is None:
                self._more = False
            else:
                self._pending.append(spec)
