"""The progress of a run: one line, redrawn on a terminal, written now and
then elsewhere."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

from ..logsetup import is_quiet
from ..match import MatchResult
from ..ranking.games import Game
from .config.model import RATE_HANDS
from .pairing.schedule import ScheduleEntry
from .standings.faults import FaultTally
from .standings.ratings import games_of


@dataclass
class Progress:
    """Matches done/total, elapsed, ETA, faults, leader; drawn on one line on a terminal.

    Off a terminal (nohup, cron, CI, a pipe to a log) the same text is
    written as a plain line now and then: once a tenth of the matches
    (``PLAIN_SHARE``) and at least ``PLAIN_SECONDS`` have passed since the
    last one, whichever comes later, so an hour's run logs about ten lines
    and a short one none.  No carriage returns, no escapes; none under -q.

    The leader is the top of the leaderboard's own statistic (the batch
    TrueSkill mu over every stored match, fitted without numpy:
    ``ranking.live``), refitted at most every
    ``LEADER_REFRESH`` seconds so a long tournament does not spend its time
    on it.  ``unsettled`` is set by a run that goes on until the order is
    settled: the adjacent pairs its stopping rule has yet to tell apart, at
    the rule's own level (99.5 % for 95 %), so that the line reads 0 only
    when the run could stop at its next look."""

    total: int
    done: int = 0
    faults: int = 0
    stream: TextIO = field(default_factory=lambda: sys.stderr)
    started: float = field(default_factory=time.monotonic)
    games: list[Game] = field(default_factory=list)
    fresh: int = 0
    failed: int = 0
    unsettled: int | None = None
    rating: str = RATE_HANDS
    #: A settling run's leader at its last round's assessment: shown instead
    #: of refitting every game in plain Python, which cost a 12-bot Swiss
    #: run a tenth of its CPU (benchmarks/rounds_cost.py).
    assessed_leader: tuple[str, float] | None = None
    tally: FaultTally = field(default_factory=FaultTally)
    clock: Callable[[], float] = time.monotonic
    _leader: str = "-"
    _leader_at: float | None = None
    _refresh: float = 1.0
    _plain_done: int = 0            # off a terminal: matches done at the last plain line
    _plain_at: float = 0.0          # and when it was written

    LEADER_REFRESH = 1.0
    PLAIN_SHARE = 0.1
    PLAIN_SECONDS = 30.0

    def __post_init__(self) -> None:
        self._plain_done, self._plain_at = self.done, self.started

    @property
    def live(self) -> bool:
        return self.stream.isatty()

    def add(self, entry: ScheduleEntry, result: MatchResult) -> None:
        self.done += 1
        self.fresh += 1
        self.faults += len(result.faults)
        self.tally.add(entry.seats, result, entry.match_id, entry.index)
        self.games += games_of(entry.match_id, entry.deal, entry.seats, result.places, result.forfeited,
                               result.hand_scores, self.rating)
        if self.live:
            self.stream.write("\r" + self.line() + "\x1b[K")
            self.stream.flush()
        else:
            self._plain()

    def fail(self, line: str, unstartable: bool = False) -> None:
        """A match failed: count it, and print ``line`` (on a terminal, above the progress line);
        ``unstartable``: because a bot's program could not be started."""
        self.done += 1
        self.fresh += 1
        self.failed += 1
        self.tally.failed += 1
        self.tally.unstartable += unstartable
        if self.live:
            self.stream.write("\r\x1b[K" + line + "\n" + self.line() + "\x1b[K")
        else:
            self.stream.write(line + "\n")
            self._plain()
        self.stream.flush()

    def _plain(self) -> None:
        """Off a terminal: the progress as a line of its own, when it is due."""
        now = self.clock()
        if (self.done - self._plain_done < self.PLAIN_SHARE * self.total
                or now - self._plain_at < self.PLAIN_SECONDS or is_quiet()):
            return
        self._plain_done, self._plain_at = self.done, now
        self.stream.write(self.line() + "\n")
        self.stream.flush()

    def leader(self) -> str:
        if self.assessed_leader is not None:
            name, mu = self.assessed_leader
            return f"{name} (rating {mu:.1f})"
        now = time.monotonic()
        if self.games and (self._leader_at is None or now - self._leader_at >= self._refresh):
            # The batch fit in plain Python: numpy in this process would cost
            # 14 MB the workers do not share (and a thread, which rules out
            # forking a replacement worker).  Same ratings to about 1e-9.
            from ..ranking.live import ratings as live_ratings

            ratings = live_ratings(self.games)
            best = min(ratings, key=lambda b: (-ratings[b].mu, b))
            done = time.monotonic()
            # A slow fit (thousands of matches, a hopeless bot) is redone less often.
            self._refresh = max(self.LEADER_REFRESH, 10 * (done - now))
            self._leader, self._leader_at = f"{best} (rating {ratings[best].mu:.1f})", done
        return self._leader

    def line(self) -> str:
        elapsed = self.clock() - self.started
        left = self.total - self.done
        eta = elapsed / self.fresh * left if self.fresh else 0.0
        failed = f"failed {self.failed}, " if self.failed else ""
        unsettled = "" if self.unsettled is None else f"pairs to settle {self.unsettled}, "
        # A settling run's total is its budget: it may stop well before.
        total = f"{self.total}" if self.unsettled is None else f"at most {self.total}"
        return (f"[{self.done}/{total}] {_clock(elapsed)} elapsed, ETA {_clock(eta)}, "
                f"faults {self.faults}, {failed}{unsettled}leader {self.leader()}")

    def finish(self) -> None:
        if self.live:
            self.stream.write("\n")
            self.stream.flush()


def _clock(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    return f"{seconds // 60}:{seconds % 60:02d}"
