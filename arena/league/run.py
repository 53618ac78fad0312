"""``arena league run``: play the league's tables for as long as it runs.

One run at a time holds the league (the results directory's run lock).  It
checks the versions waiting, then plays: first the matches of tables a
stopped run left unfinished, then new tables (``matchmaking``), each match
stored in the results database as it finishes, in one transaction, by this
process alone, exactly as ``arena run`` stores a tournament's.  So Ctrl-C,
a SIGTERM or a SIGKILL at any moment loses only the matches being played,
and the next run plays those (a table's matches follow from its register
row, ``plan``) and none that is stored.

The matches are handed to the executor one table ahead (its ``lookahead``):
each new table is chosen from the results stored so far, and a version
handed in while the league plays is checked, and placed, within a table or
two.  With nothing to play (fewer playing versions than seats), it waits for
submissions: ``arena league submit``, over HTTP, or a folder dropped in
``DIR/submissions/AUTHOR`` (``watch``).  ``max_matches`` bounds a run
(tests, benchmarks, a cron job).
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ..match import MatchSpec
from ..process.confine import sandbox
from ..ranking.live import Fitting, Tally
from ..ranking.model import Rating
from ..tournament.config.model import RAY, SHARED, ExecutorSettings, TournamentConfig
from ..tournament.executors.choose import AnyExecutor, closed_after, make
from ..tournament.executors.local import MatchFailure, WorkerError
from ..tournament.pairing.schedule import ScheduleEntry
from ..tournament.results.database import DEFAULT_DB_NAME, ResultStore, StoredMatch
from ..tournament.runlock import results_lock
from ..tournament.runner import entry_spec, record_failure, stored_match
from ..tournament.standings.ratings import games_of
from .config import LeagueConfig, LeagueError
from .matchmaking import next_table
from .page import PAGE_LOG, Page, served_beside
from .plan import block_for, table_entries
from .register import PLAYING, REFUSED, SUBMITTED, Register, TableRow
from .versions import check_waiting, league_tournament, register_house
from .watch import SUBMISSIONS, Watcher

__all__ = ["LeagueRun", "run_league"]

POLL_SECONDS = 2.0       # how often an idle league looks for new versions
FIT_SPACING = 3.0        # the matchmaking's refits take at most 1 / (1 + this) of the run's time
FIT_SLICE_MAX = 0.5      # seconds of a refit per table, at most (``fit_slice``): a run stopped for an hour
                         # (SIGSTOP) does not then fit for 20 minutes while its workers wait


@dataclass
class LeagueRun:
    """What one run did."""

    played: int = 0
    failed: int = 0
    tables: int = 0
    checked: list[str] = field(default_factory=list)


def run_league(config: LeagueConfig, jobs: int | None = None, max_matches: int | None = None,
               echo: Callable[[str], None] = print, idle_exit: bool = False,
               serve: tuple[str, int] | None = None, ray: str | None = None) -> LeagueRun:
    """Play until stopped, or ``max_matches`` are played; ``idle_exit``: stop
    instead of waiting when nothing can be played; ``serve``: (host, port)
    of the live page, served while the run holds the league (``page``);
    ``ray``: play on Ray, at that address ("": ``RAY_ADDRESS``, else a Ray of
    its own), the league's folder at the same path on every node (``SHARED``:
    versions come while it plays, and Ray ships a run's files once, at its start)."""
    config.results.mkdir(parents=True, exist_ok=True)
    (config.results / "logs").mkdir(exist_ok=True)
    with results_lock(config.results), Register(config.dir) as register, ExitStack() as beside:
        page = None
        if serve is not None:
            page = beside.enter_context(served_beside(config, *serve, echo=echo))
            echo(f"the live page: http://{serve[0]}:{serve[1]}/ (its log: {config.results / 'logs' / PAGE_LOG})")
        register_house(config, register)
        try:
            mode = sandbox.prepare(config.sandbox).mode
        except sandbox.SandboxUnavailable as exc:
            raise LeagueError(f"{config.path}: sandbox: {exc}") from None
        store = ResultStore(config.results / DEFAULT_DB_NAME)
        try:
            player = _Player(config, register, store, mode, echo, ray, page)
            return player.play(jobs, max_matches, idle_exit)
        finally:
            store.close()


class _Player:
    """The state of a run: what its matchmaking knows of the stored matches,
    the matches handed out.  Of a stored match it keeps only what the fit
    reads (``Tally``: each distinct outcome counted) and its versions' match
    counts, never the match: held whole, the matches of a league that runs
    for weeks (and their records, for those this run played) grew the run
    without end (benchmarks/league.py --only c)."""

    def __init__(self, config: LeagueConfig, register: Register, store: ResultStore, mode: str,
                 echo: Callable[[str], None], ray: str | None = None, page: Page | None = None) -> None:
        self.config, self.register, self.store, self.mode, self.echo = config, register, store, mode, echo
        self.ray = ray
        self.page = page              # the live page of --serve, looked at after each match and idle poll
        self.summary = LeagueRun()
        self.rng = random.Random(f"{config.secret}/league/{time.time_ns()}")
        self.tally = Tally()
        self.known = 0               # stored matches in the tally
        self.counts: Counter[str] = Counter()
        self.fitted_at = -1
        self.fitting: Fitting | None = None       # the refit under way, of the first ``fitting_at`` matches
        self.fitting_at = 0
        self.sliced = time.monotonic()            # when the last slice of a refit ended
        self.ratings: dict[str, Rating] = {}
        # What is to be played first: the matches of the tables a stopped run left unfinished.
        # A match that fails is not tried again by this run; the next one does.
        self.queue: deque[ScheduleEntry] = deque()
        self.entries: dict[str, ScheduleEntry] = {}
        self.waiting = ""
        self.watcher = Watcher(config, echo)

    def play(self, jobs: int | None, max_matches: int | None, idle_exit: bool) -> LeagueRun:
        self.store.init_tournament(self.config.name, self.config.stored(), seed=self.config.seed,
                                   bots=[v.name for v in self.register.versions() if v.status != REFUSED])
        self._resume()
        if self.queue:
            self.echo(f"resuming: {len(self.queue)} match(es) of unfinished tables first")
        budget = max_matches if max_matches is not None else 1 << 62
        with closed_after(self._executor(jobs, budget)) as executor:
            while self.summary.played < budget:
                self._check()
                played = self.summary.played
                self._feed(executor, budget)
                if self.summary.played == played and not self.register.versions(SUBMITTED):   # nothing to play
                    if idle_exit:
                        break
                    self._say_waiting()
                    self._look_at_page()
                    time.sleep(POLL_SECONDS)
        return self.summary

    def _resume(self) -> None:
        """What the stored matches tell the matchmaking (read a batch at a time, none kept),
        and the matches of the tables a stopped run left unfinished, first in the queue."""
        for m in self.store.iter_matches():
            self._know(m)
        stored = self.store.completed_ids()
        self.queue.extend(e for table in self.register.tables() for e in table_entries(table, self.config.secret)
                          if e.match_id not in stored)

    def _say_waiting(self) -> None:
        """Once per wait: why nothing is played."""
        playing = len(self.register.versions(PLAYING))
        line = (f"waiting for versions: {playing} play, a table needs {self.config.players} "
                f"(arena league submit {self.config.dir} AUTHOR FOLDER, or a folder in "
                f"{self.config.dir / SUBMISSIONS}/AUTHOR)")
        if line != self.waiting:
            self.echo(line)
            self.waiting = line

    def _executor(self, jobs: int | None, budget: int) -> AnyExecutor:
        tournament = self.config.tournament(())
        if self.ray is not None:
            tournament = dataclasses.replace(tournament, executor=ExecutorSettings(RAY, self.ray or None, SHARED))
        try:
            # One table ahead: each table is chosen from the results stored before it.
            return make(tournament, jobs, budget, lookahead=self.config.players)
        except WorkerError as err:
            raise LeagueError(str(err)) from None

    def _check(self) -> None:
        self.watcher.scan(self.register)
        if self.register.versions(SUBMITTED):
            done = check_waiting(self.config, self.register, self.mode, self.echo)
            self.summary.checked += [v.name for v in done]
            self.store.init_tournament(self.config.name, self.config.stored(), seed=self.config.seed,
                                       bots=[v.name for v in done if v.status != REFUSED])

    def _know(self, m: StoredMatch) -> None:
        self.tally.add(games_of(m.match_id, m.deal, m.bots, m.places, m.forfeited, m.hand_scores))
        self.known += 1
        self.counts.update(m.bots)

    def _feed(self, executor: AnyExecutor, budget: int) -> None:
        """Play until nothing is left to play, a version waits for its check, or the budget is spent."""
        tournament = league_tournament(self.config, [v for v in self.register.versions() if v.status != REFUSED])
        log_dir = self.config.results / "logs"
        for outcome in executor.run(self._specs(tournament, log_dir, budget)):
            self._look_at_page()
            entry = self.entries.pop(outcome.match_id)
            self.summary.played += 1
            if isinstance(outcome, MatchFailure):
                self.summary.failed += 1
                self.echo(record_failure(self.store, log_dir, entry, outcome))
                continue
            stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
            m = stored_match(entry, outcome, stamp)
            self.store.add_match(m)
            self._know(m)
            self.echo(f"{entry.match_id}: " + ", ".join(f"{b} {p}" for b, p in zip(m.bots, _ordinals(m.places))))

    def _specs(self, tournament: TournamentConfig, log_dir: Path, budget: int) -> Iterator[MatchSpec]:
        handed = self.summary.played
        while handed < budget:
            if not self.queue:
                self.watcher.scan(self.register)      # before a new table: a folder dropped meanwhile
            if self.register.versions(SUBMITTED):
                return                    # checked before the next table: new versions first
            entry = self._next_entry()
            if entry is None:
                return
            self.entries[entry.match_id] = entry
            handed += 1
            yield entry_spec(tournament, entry, log_dir, self.mode)

    def _refit(self) -> None:
        """A slice of the refit under way (``fit_slice``): the fit of every
        match grows with the league (4.7 CPU-s at 600 matches of 12 versions),
        and done whole before a table it kept the workers waiting as long, in
        this process (no match stored for 10-20 s at a time).  The tables
        chosen meanwhile use the ratings of the last fit done."""
        assert self.fitting is not None
        began = time.monotonic()
        end = began + fit_slice(began - self.sliced)
        try:
            next(self.fitting)                  # a step at least, however short the slice
            # The first fit whole, as ever: the run's first tables are chosen on every stored match.
            while time.monotonic() < end or self.fitted_at < 0:
                next(self.fitting)
        except StopIteration as done:
            self.ratings, self.fitted_at, self.fitting = done.value, self.fitting_at, None
        self.sliced = time.monotonic()

    def _look_at_page(self) -> None:
        if self.page is not None:
            self.page.check()

    def _next_entry(self) -> ScheduleEntry | None:
        """A match of an unfinished table (one a stopped run began, or the one
        being handed out), else the first of a new table; None: nothing to play."""
        if not self.queue:
            table = self._new_table()
            if table is None:
                return None
            self.summary.tables += 1
            self.queue.extend(table_entries(table, self.config.secret))
        return self.queue.popleft()

    def _new_table(self) -> TableRow | None:
        playing = [v.name for v in self.register.versions(PLAYING)]
        if self.fitting is None and self.known != self.fitted_at:
            self.fitting, self.fitting_at = self.tally.fitting(playing), self.known
        if self.fitting is not None:
            self._refit()
        seats = next_table(playing, self.counts, self.ratings, self.config.players,
                           self.config.matchmaking.placement_matches, self.rng)
        if seats is None:
            return None
        return self.register.add_table(seats, block_for(self.register.table_count(), self.config.players))


def fit_slice(since: float) -> float:
    """Seconds of refit before a table, ``since`` the last slice ended: a
    FIT_SPACING-th of that (so refits take at most 1 / (1 + FIT_SPACING) of
    the run, beyond the one step each table takes), at most FIT_SLICE_MAX
    (after a stop, SIGSTOP or a suspended machine, the time away is not the run's)."""
    return min(FIT_SLICE_MAX, since / FIT_SPACING)


def _ordinals(places: list[int]) -> list[str]:
    return [f"{p}{'st' if p == 1 else 'nd' if p == 2 else 'rd' if p == 3 else 'th'}" for p in places]
