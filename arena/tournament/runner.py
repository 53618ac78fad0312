"""Running a tournament: schedule in, stored results out, resumable.

Every match that finishes is stored at once, in one transaction, by this
(parent) process; nothing else writes the database.  Running the same
tournament again skips the matches already stored, so an interrupted run
resumes where it stopped, and because every match depends only on its own
seed and the ratings do not depend on the order of the matches, the final
results equal those of an uninterrupted run.

A match that raises an arena-side exception (a bug, not a bot fault) is
recorded as failed with its one-line reason, its traceback goes to
``RESULTS/logs/errors.log``, one line goes to the screen, and the other
matches go on.  The next run plays the failed matches again.  Whatever
happens, the executor's workers (and with them every bot) are stopped.
"""

from __future__ import annotations

import dataclasses
import re
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TextIO

from ..match import FaultPolicy, MatchResult, MatchSpec
from ..process import BotStartupError
from ..words import plural
from .changed import changed_programs
from .config.model import SWISS, TournamentConfig
from .earlier import remember_run
from .estimate import time_bots
from .executors.choose import AnyExecutor, closed_after, make
from .executors.local import MatchFailure, ProcessExecutor, SerialExecutor, WorkerError
from .newfolders import new_folders, remove_unused
from .pairing.rounds import StopRule, check_rounds, decide, first_rounds, match_budget, round_assessment, round_entries
from .pairing.schedule import ScheduleEntry, build_schedule, check_schedule_size, redeal
from .preflight import (
    TournamentError,
    bot_problems,
    check_startable,
    db_path,
    hide_earlier_runs,
    hide_machine_state,
    hold_to_sandbox,
    prepare_sandbox,
    run_builds,
    settle_seed,
    warn,
    warn_guessable_seed,
)
from .progress import Progress
from .results.database import FailedMatch, ResultStore, RoundDecision, StoredMatch, StoreError
from .results.setaside import finish_set_aside, set_aside, times_set_aside
from .runlock import results_lock
from .standings.faults import FaultTally
from .standings.ratings import rated_games

ERROR_LOG = "errors.log"   # in the results' logs directory


def entry_spec(config: TournamentConfig, entry: ScheduleEntry, log_dir: Path,
               sandbox_mode: str | None = None) -> MatchSpec:
    """``sandbox_mode``: what the file's mode resolved to (``prepare_sandbox``)."""
    seats = [config.seat_spec(name, sandbox_mode) for name in entry.seats]
    return MatchSpec(
        match_id=entry.match_id,
        seats=tuple(seats),
        rules=config.rules,
        seed=entry.seed,
        time=config.time,
        faults=FaultPolicy(max_strikes=config.faults.max_strikes, strict=config.faults.strict,
                           unstartable_forfeits=config.forfeit_unstartable),
        log_dir=str(log_dir),
        anonymous=config.anonymous,
    )


def stored_match(entry: ScheduleEntry, result: MatchResult, started_at: str) -> StoredMatch:
    return StoredMatch(
        match_id=entry.match_id,
        schedule_index=entry.index,
        table=entry.table,
        rotation=entry.rotation,
        deal=entry.deal,
        seed=entry.seed,
        bots=list(entry.seats),
        totals=list(result.totals),
        places=list(result.places),
        forfeited=list(result.forfeited),
        hand_scores=[list(h) for h in result.hand_scores],
        hand_winners=list(result.winners),
        faults=[
            {"seat": f.seat, "kind": f.kind, "hand": f.hand, "decision": f.decision,
             "decision_kind": f.decision_kind, "detail": f.detail, "excerpt": f.excerpt,
             "request_id": f.request_id}
            for f in result.faults
        ],
        decision_stats=[
            {"count": s.count, "mean": s.mean, "p95": s.p95, "max": s.max, "timeouts": s.timeouts}
            for s in result.stats
        ],
        stderr_logs=list(result.stderr_logs),
        off_turn_cpu=list(result.off_turn_cpu),
        # The lines the bots sent that were thrown away: not faults, kept for `arena show`.
        record={**result.record, "warnings": [asdict(w) for w in result.warnings]} if result.warnings
        else result.record,
        duration_seconds=result.wall_seconds,
        started_at=started_at,
    )


@dataclass(frozen=True)
class RunSummary:
    played: int      # matches attempted by this run (failed ones included)
    skipped: int     # already stored before this run
    total: int
    seconds: float
    db: Path
    failed: int = 0  # of ``played``, those that failed with an arena error
    stopped: str | None = None      # a settling run: why it stopped (see ``STOP_REASONS``)
    unsettled: int | None = None    # a settling run: adjacent pairs not separated at the end
    tally: FaultTally = field(default_factory=FaultTally)   # this run's faults, for its summary


# Why a settling run stopped.
STOP_REASONS = {
    "settled": "every adjacent pair is separated",
    "budget": "the match budget (settle.max_matches) is used up",
    "time": "the time budget (settle.max_minutes) is used up",
    "failed": "a match failed with an arena error; the next run retries it and goes on",
}


def plan(config: TournamentConfig) -> list[ScheduleEntry]:
    """The schedule, with new deals for the matches ``--rerun`` set aside
    (``schedule.redeal``); for a settling tournament, its first rounds only."""
    if config.settle is not None:
        check_rounds(config)
        return first_rounds(config)
    check_schedule_size(config)
    entries = build_schedule(config)
    assert config.seed is not None, "build_schedule refuses a tournament without one"
    try:
        set_aside_before = times_set_aside(db_path(config))
    except StoreError as err:
        raise TournamentError(str(err)) from None
    return redeal(entries, set_aside_before, config.seed)


def log_failure(log_dir: Path, entry: ScheduleEntry, failure: MatchFailure) -> Path | None:
    """Append the failure's traceback to the error log; its path, or None if it cannot be written."""
    path = log_dir / ERROR_LOG
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    text = failure.traceback or failure.reason + "\n"
    try:
        with path.open("a", encoding="utf-8") as f:
            f.write(f"=== {stamp} match {entry.match_id} (#{entry.index}, seats {', '.join(entry.seats)}): "
                    f"arena error\n{text.rstrip()}\n\n")
    except OSError:
        return None
    return path


def record_failure(store: ResultStore, log_dir: Path, entry: ScheduleEntry, failure: MatchFailure) -> str:
    """Store the failure, log its traceback; the one line to show."""
    log = log_failure(log_dir, entry, failure)
    store.add_failure(FailedMatch(entry.match_id, entry.index, entry.seats, failure.reason,
                                  None if log is None else str(log)))
    where = f"traceback in {log}" if log is not None else f"traceback could not be written to {log_dir}"
    detail = f"; {where}" if failure.traceback else ""
    return f"{entry.match_id}: arena error: {failure.reason} (will be retried by the next run{detail})"


def check_rerun(config: TournamentConfig, rerun: Sequence[str]) -> None:
    """What ``--rerun`` refuses before anything is touched: TournamentError, one line."""
    unknown = [name for name in rerun if name not in config.bot_names]
    if unknown:
        raise TournamentError(f"--rerun {unknown[0]}: no bot {unknown[0]!r} in {config.path}; its bots are "
                              f"{', '.join(config.bot_names)}")
    if rerun and (config.settle is not None or config.format == SWISS):
        raise TournamentError(
            f"--rerun {rerun[0]}: {config.path} plays in rounds ('settle:' or 'format: swiss'), whose tables "
            f"and end are decided from the stored results of the rounds before; re-playing one bot's matches "
            f"would leave the later rounds decided by the old program: run it into a new results directory "
            f"(--out DIR) instead")
    if rerun and not db_path(config).exists():
        raise TournamentError(f"--rerun {rerun[0]}: {db_path(config)} does not exist: --rerun re-plays a bot's "
                              f"stored matches; run the tournament without it first")


def _set_aside(config: TournamentConfig, rerun: Sequence[str], echo: Callable[[str], None]) -> None:
    """Archive the stored matches of every bot of ``rerun`` (one transaction), after
    checking the database holds this tournament (those of another are not
    touched) and that the run may go on under this sandbox: what the run
    would refuse anyway is refused before anything is set aside."""
    store = ResultStore(db_path(config), create=False)
    try:
        store.check_tournament(config.name, config.to_mapping(), config.seed)
        hold_to_sandbox(config, store, record=False)
    finally:
        store.close()
    try:
        run_builds(config, echo)
        # A missing new program: refused while the old matches still count (another
        # bot's, with --forfeit-unstartable, only warned of, as a run would).
        check_rerun_programs(config, rerun)
    except TournamentError as err:
        raise TournamentError(f"{err} (--rerun set nothing aside)") from None
    reason = f"arena run --rerun {' --rerun '.join(rerun)}: re-played with the current program"
    for done in set_aside(db_path(config), rerun, reason):
        echo(done.line(db_path(config)))


def check_rerun_programs(config: TournamentConfig, rerun: Sequence[str]) -> None:
    """The programs ``--rerun`` replays must start; the others as a run checks them."""
    refused = [problem for name, problem in bot_problems(config)
               if name in rerun or not config.forfeit_unstartable]
    if refused:
        raise TournamentError(refused[0])
    check_startable(config)


def run_tournament(
    config: TournamentConfig,
    jobs: int | None,
    echo: Callable[[str], None] = print,
    progress_stream: TextIO | None = None,
    rerun: Sequence[str] = (),
) -> RunSummary:
    """Play every scheduled match not yet stored (failed ones again); store each as it finishes.
    ``jobs``: matches in parallel (None: the executor's default, see ``executors.choose.make``).
    ``rerun``: bots whose stored matches are set aside first (``setaside``), hence played again."""
    check_rerun(config, rerun)
    created = new_folders(config.output)
    config.output.mkdir(parents=True, exist_ok=True)
    with results_lock(config.output):
        try:
            config = settle_seed(config)
            if rerun:
                _set_aside(config, rerun, echo)
            finish_set_aside(db_path(config))   # what a --rerun killed after its commit left to remove
            remember_run(config.output, config.path)
            if config.settle is not None:
                return run_rounds(config, jobs, echo, progress_stream)
            return _run_schedule(config, jobs, echo, progress_stream, built=bool(rerun))
        finally:
            # Under the lock still: no other run is playing into them.
            remove_unused(created, db_path(config))


def _run_schedule(config: TournamentConfig, jobs: int | None, echo: Callable[[str], None],
                  progress_stream: TextIO | None, built: bool = False) -> RunSummary:
    entries = plan(config)
    log_dir = config.output / "logs"
    log_dir.mkdir(exist_ok=True)
    store = ResultStore(db_path(config))
    try:
        store.init_tournament(config.name, config.to_mapping(), seed=config.seed, bots=config.bot_names)
        done = store.completed_ids()
        todo = [e for e in entries if e.match_id not in done]
        retry = len(store.failures())
        if done or retry:
            again = f"; retrying {retry} that failed" if retry else ""
            echo(f"resuming: {len(entries) - len(todo)} of {plural(len(entries), 'match', 'matches')} already stored "
                 f"in {db_path(config)}{again}")
            for line in changed_programs(config, store.last_started()):
                warn(line)
        if not todo:
            return RunSummary(0, len(entries), len(entries), 0.0, db_path(config))
        hold_to_sandbox(config, store)
        if not built:                      # --rerun built and checked them before its set-aside
            run_builds(config, echo)
            check_startable(config)  # after the builds, which may create the programs
        sandbox_mode = prepare_sandbox(config)
        warn_guessable_seed(config)
        config = hide_earlier_runs(hide_machine_state(config), sandbox_mode, echo)
        stored = store.matches()
        time_bots(config, todo, stored, jobs, sandbox_mode, echo)
        progress = Progress(total=len(entries), done=len(entries) - len(todo),
                            stream=progress_stream or sys.stderr, rating=config.rating,
                            games=rated_games(stored, config.rating))
        started = time.monotonic()
        _play(config, todo, jobs, store, log_dir, progress, sandbox_mode, echo)
        return RunSummary(len(todo), len(entries) - len(todo), len(entries),
                          time.monotonic() - started, db_path(config), failed=progress.failed,
                          tally=progress.tally)
    finally:
        store.close()


def run_rounds(config: TournamentConfig, jobs: int | None, echo: Callable[[str], None] = print,
               progress_stream: TextIO | None = None) -> RunSummary:
    """Play rounds (``rounds``) until the order is settled or a budget is used up."""
    config.output.mkdir(parents=True, exist_ok=True)
    store = ResultStore(db_path(config))
    try:
        store.init_tournament(config.name, config.to_mapping(), seed=config.seed, bots=config.bot_names)
        before, retry = len(store), len(store.failures())
        if before or retry:
            again = f"; retrying {retry} that failed" if retry else ""
            echo(f"resuming: {plural(before, 'match', 'matches')} already stored in {db_path(config)}{again}")
            for line in changed_programs(config, store.last_started()):
                warn(line)
        rounds = _Rounds(config, jobs, store, echo, progress_stream or sys.stderr)
        started = time.monotonic()
        try:
            stopped = rounds.play()
        except BaseException:
            rounds.stop(complete=False)
            raise
        rounds.stop(complete=True)
        return RunSummary(rounds.played, before, len(store), time.monotonic() - started, db_path(config),
                          failed=rounds.failed, stopped=stopped, unsettled=rounds.unsettled,
                          tally=rounds.progress.tally if rounds.progress is not None else FaultTally())
    finally:
        store.close()


class _Rounds:
    """The state of a settling run: one executor (started when a first match
    is due) for all its rounds, so bots are not restarted between rounds."""

    def __init__(self, config: TournamentConfig, jobs: int | None, store: ResultStore,
                 echo: Callable[[str], None], stream: TextIO) -> None:
        assert config.settle is not None
        self.config, self.settle, self.jobs, self.store = config, config.settle, jobs, store
        self.echo, self.stream = echo, stream
        self.budget = match_budget(config)
        self.log_dir = config.output / "logs"
        self.log_dir.mkdir(exist_ok=True)
        self.stack = ExitStack()
        self.executor: AnyExecutor | None = None
        self.progress: Progress | None = None
        self.sandbox_mode = ""
        self.played = 0
        self.assessed = 0               # rounds this run assessed (a resumed run: only those not decided)
        self.unsettled: int | None = None       # at the end: adjacent pairs not separated (the table's level)
        self.leader: tuple[str, float] | None = None    # the last assessment's first bot and rating
        self.to_settle: int | None = None       # for the progress line: at the stopping rule's level
        self.started = time.monotonic()

    @property
    def failed(self) -> int:
        return 0 if self.progress is None else self.progress.failed

    def play(self) -> str:
        """Play rounds until one of ``STOP_REASONS``; that reason.

        Each round is decided from the matches of the rounds before it only
        (by schedule index), and the decision is stored before the round is
        played; a resumed run replays the stored decisions (no assessment)
        and decides from the first round that has none, as the first run
        would have."""
        index = round_no = 0
        stored = self.store.matches()
        decided = self.store.decisions()
        rule = StopRule(self.budget, self.settle.confidence)
        seated: list[tuple[str, ...]] = []      # every earlier round's seats (round_entries)
        while True:
            decision = decided.get(round_no) or self._decide(round_no, index, stored, rule)
            if decision.start_index != index:
                raise StoreError(f"{self.store.path}: the stored decision of round {round_no} starts at match "
                                 f"{decision.start_index}, not {index}: the results database is damaged")
            rule.next_look = decision.next_look
            if decision.unsettled is not None:
                self.unsettled, self.to_settle = decision.unsettled, decision.to_settle
                self.leader = decision.leader
                if self.progress is not None:
                    self.progress.unsettled = self.to_settle
                    self.progress.assessed_leader = decision.leader
            if decision.stop is not None:
                return decision.stop
            entries = round_entries(self.config, round_no, None, index, seated, decision.tables or None)
            if not entries:     # rounds are never empty; a run without one would loop for ever
                raise RuntimeError(f"round {round_no} of the settling run has no match")
            done = {m.match_id: m for m in stored}
            _check_played_as_scheduled(self.store.path, entries, done)
            todo = [e for e in entries if e.match_id not in done]
            before = [m for m in stored if m.schedule_index < index]
            if len(before) + len(entries) > self.budget:
                return "budget"
            if todo:
                limit = self.settle.max_minutes
                if limit is not None and time.monotonic() - self.started > 60 * limit:
                    return "time"
                self._play(todo, before, len(before) + len(entries) - len(todo))
                stored = self.store.matches()
                if self.failed:
                    return "failed"
            index += len(entries)
            round_no += 1
            seated += [e.seats for e in entries]

    def _decide(self, round_no: int, index: int, stored: list[StoredMatch], rule: StopRule) -> RoundDecision:
        """Decide round ``round_no`` (assessing the rounds before it, after the
        first ``deals``) and store the decision."""
        before = [m for m in stored if m.schedule_index < index]
        assessment = None
        if round_no >= self.config.deals:
            from ..ranking import assess  # numpy: settling runs only

            games = rated_games(before, self.config.rating)
            assessment = round_assessment(self.config, len(before), rule, lambda replicas, tolerance: assess(
                games, self.config.bot_names, self.settle.confidence, replicas, seed=self.config.seed or 0,
                tolerance=tolerance))
            self.assessed += 1
        decision = _as_played(decide(self.config, round_no, index, len(before), assessment, rule),
                              [m for m in stored if m.schedule_index >= index], self.config)
        self.store.add_decision(decision)
        return decision

    def _play(self, todo: list[ScheduleEntry], before: list[StoredMatch], done: int) -> None:
        if self.progress is None:
            hold_to_sandbox(self.config, self.store)
            run_builds(self.config, self.echo)
            check_startable(self.config)
            self.sandbox_mode = prepare_sandbox(self.config)
            warn_guessable_seed(self.config)
            self.config = hide_earlier_runs(hide_machine_state(self.config), self.sandbox_mode, self.echo)
            time_bots(self.config, todo, before, self.jobs, self.sandbox_mode, self.echo)
            self.progress = Progress(total=self.budget, done=done, stream=self.stream,
                                     games=rated_games(before, self.config.rating),
                                     unsettled=self.to_settle, rating=self.config.rating,
                                     assessed_leader=self.leader)
        if self.executor is None:
            self.executor = self.stack.enter_context(_executor(self.config, self.jobs, self.budget, self.echo))
        _feed(self.executor, self.config, todo, self.store, self.log_dir, self.progress, self.sandbox_mode)
        self.played += len(todo)

    def stop(self, complete: bool) -> None:
        """Stop the executor: closed after a complete run, else aborted (``_executor``)."""
        try:
            if complete:
                self.stack.close()
            else:
                self.stack.__exit__(KeyboardInterrupt, KeyboardInterrupt(), None)
        finally:
            if self.progress is not None:
                self.progress.finish()


def _check_played_as_scheduled(path: Path, entries: Sequence[ScheduleEntry], done: Mapping[str, StoredMatch]) -> None:
    """StoreError when a stored match of ``entries`` has other seats or
    another seed than its entry: a round decided otherwise than it was
    played, whose matches would be counted as this one's."""
    for e in entries:
        m = done.get(e.match_id)
        if m is not None and (tuple(m.bots) != e.seats or m.seed != e.seed):
            raise StoreError(f"{path}: match {e.match_id} is stored with seats {', '.join(m.bots)} (seed {m.seed}) "
                             f"but this tournament gives it {', '.join(e.seats)} (seed {e.seed}): the results "
                             f"were played by another schedule; 'arena verify' lists every such match; "
                             f"use another output directory")


def _as_played(decision: RoundDecision, later: Sequence[StoredMatch], config: TournamentConfig) -> RoundDecision:
    """``decision`` as the run that stored matches from its round on made it.

    A database of an arena that stored no decisions is decided again on
    resume, and a bootstrap that changed since may decide a close pair the
    other way.  A run that stored matches from this round on did not stop
    here; and a Swiss round it played keeps the tables it was played with.
    Such a database was seated by rotation ('seating' did not exist), so a
    table's order follows from the seats of any of its rotations."""
    if not later:
        return decision
    tables = decision.tables
    if config.format == SWISS:
        # A round stopped part-way stored its first tables only: the rest as decided now.
        played = _swiss_tables_played(decision.round_no, later, config.players) or ()
        tables = (*played, *tables[len(played):])
    return dataclasses.replace(decision, stop=None, tables=tables)


def _swiss_tables_played(round_no: int, later: Sequence[StoredMatch], k: int) -> tuple[tuple[str, ...], ...] | None:
    """The first tables of Swiss round ``round_no`` in its stored matches, in
    table order (rotation ``r`` seated table position ``i`` in seat ``i + r``),
    up to the first table with no stored match; None when there is none."""
    found: dict[int, tuple[str, ...]] = {}
    for m in later:
        hit = re.fullmatch(rf"s{round_no:04d}-t(\d+)-r(\d+)", m.match_id)
        if hit is None or len(m.bots) != k:
            continue
        t, r = int(hit[1]), int(hit[2])
        found.setdefault(t, tuple(m.bots[(i + r) % k] for i in range(k)))
    first = 0
    while first in found:
        first += 1
    return tuple(found[t] for t in range(first)) or None


@contextmanager
def _executor(config: TournamentConfig, jobs: int | None, most: int,
              echo: Callable[[str], None]) -> Iterator[AnyExecutor]:
    """The tournament's executor (``jobs`` in parallel, at most ``most``; ``echo``
    says what a Ray run ships), ``closed_after`` the run."""
    try:
        executor = make(config, jobs, most, notice=warn, say=echo)
    except WorkerError as err:
        raise TournamentError(str(err)) from None
    with closed_after(executor):
        yield executor


def _feed(executor: AnyExecutor, config: TournamentConfig, todo: list[ScheduleEntry],
          store: ResultStore, log_dir: Path, progress: Progress, sandbox_mode: str) -> None:
    """Run ``todo`` on ``executor`` and store every outcome as it comes."""
    by_id = {e.match_id: e for e in todo}
    specs: Iterator[MatchSpec] = (entry_spec(config, e, log_dir, sandbox_mode) for e in todo)
    try:
        for outcome in executor.run(specs):
            entry = by_id[outcome.match_id]
            if isinstance(outcome, MatchFailure):
                progress.fail(record_failure(store, log_dir, entry, outcome),
                              unstartable=outcome.reason.startswith(f"{BotStartupError.__name__}:"))
                continue
            stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
            store.add_match(stored_match(entry, outcome, stamp))
            progress.add(entry, outcome)
    except WorkerError as err:
        raise TournamentError(str(err)) from None


def _play(config: TournamentConfig, todo: list[ScheduleEntry], jobs: int | None, store: ResultStore,
          log_dir: Path, progress: Progress, sandbox_mode: str, echo: Callable[[str], None]) -> None:
    """Run ``todo`` and store every outcome; the executor is stopped whatever happens."""
    try:
        with _executor(config, jobs, len(todo), echo) as executor:
            _feed(executor, config, todo, store, log_dir, progress, sandbox_mode)
    finally:
        progress.finish()


__all__ = [
    "RunSummary", "STOP_REASONS", "check_rerun", "run_tournament", "run_rounds", "plan", "entry_spec", "stored_match",
    "record_failure", "SerialExecutor", "ProcessExecutor",
]
