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

import logging
import os
import secrets
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TextIO

from ..logsetup import is_quiet
from ..match import FaultPolicy, MatchResult, MatchSpec
from ..process import sandbox
from ..ranking.games import Game
from ..words import plural
from .changed import changed_programs
from .config import RATE_HANDS, TournamentConfig
from .executors import AnyExecutor, MatchFailure, ProcessExecutor, SerialExecutor, WorkerError, make
from .faultsummary import FaultTally
from .ranking import games_of, rated_games
from .rounds import StopRule, check_rounds, first_rounds, match_budget, round_entries
from .runlock import results_lock
from .schedule import ScheduleEntry, build_schedule, check_schedule_size
from .store import DEFAULT_DB_NAME, FailedMatch, ResultStore, StoredMatch, StoreError

LOG = logging.getLogger(__name__)
ERROR_LOG = "errors.log"   # in the results' logs directory


SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".rb", ".pl", ".sh", ".jar", ".php", ".lua")


class TournamentError(Exception):
    """A one-line reason the tournament cannot run (the CLI shows it as is)."""


def db_path(config: TournamentConfig) -> Path:
    return config.output / DEFAULT_DB_NAME


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
        faults=FaultPolicy(max_strikes=config.faults.max_strikes, strict=config.faults.strict),
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


def check_bots(config: TournamentConfig) -> None:
    """Every bot program must exist before any bot starts."""
    for bot in config.bots:
        if bot.command is None:
            continue
        program = bot.command[0]
        cwd = bot.dir or config.dir
        found = shutil.which(program) if "/" not in program else (
            program if (cwd / program).exists() or Path(program).exists() else None)
        where = f"{config.path}:{bot.line}" if bot.line else str(config.path)
        if found is None:
            hint = sandbox.not_on_path_hint(program, str(cwd))
            raise TournamentError(
                f"{where}: bots.{bot.name}.command: program {program!r} "
                + (hint if hint else f"not found (command: {shlex.join(bot.command)}, run in {cwd})")
            )
        # An interpreter's script is the usual typo: check it too.
        for arg in bot.command[1:2]:
            if arg.endswith(SCRIPT_SUFFIXES) and not (cwd / arg).exists():
                raise TournamentError(
                    f"{where}: bots.{bot.name}.command: script {arg!r} not found in {cwd}"
                )
        problem = sandbox.preflight(bot.command, str(cwd), sandbox.bot_environment(
            os.environ, dict(bot.env)))
        if isinstance(problem, PermissionError):
            raise TournamentError(f"{where}: bots.{bot.name}.command: {program!r} is not "
                                  f"executable (chmod +x, or run it with its interpreter)")
        if problem is not None and problem.errno == 8:
            raise TournamentError(f"{where}: bots.{bot.name}.command: {program!r} cannot be "
                                  f"run: not a binary, and no #! line")


def _warn(message: str) -> None:
    LOG.warning("%s", message)


def settle_seed(config: TournamentConfig) -> TournamentConfig:
    """The file's seed; without one, the seed stored by an earlier run of this
    tournament, else a new random 63-bit one.  Bots see their match names,
    from which with the seed every deal follows, so the seed must not be
    guessable: a fixed default would tell every bot every hand."""
    if config.seed is not None:
        return config
    path = db_path(config)
    if path.exists():
        try:
            store = ResultStore(path, readonly=True)      # --dry-run reads it too: never migrated here
        except StoreError:
            store = None
        if store is not None:
            try:
                stored = store.tournament()
            finally:
                store.close()
            if stored is not None and isinstance(stored.get("seed"), int):
                return config.with_overrides(seed=stored["seed"])
    return config.with_overrides(seed=secrets.randbits(63))


def prepare_sandbox(config: TournamentConfig, warn: Callable[[str], None] = _warn) -> str:
    """Resolve the file's sandbox mode once, here, so workers need not probe;
    with bot programs to sandbox, build the seccomp filter too (workers forked
    from here inherit both); make the scratch directories.  Returns the mode
    bots run under."""
    programs = any(bot.command for bot in config.bots)
    try:
        containment = (sandbox.prepare if programs else sandbox.resolve)(config.sandbox)
    except sandbox.SandboxUnavailable as exc:
        raise TournamentError(f"{config.path}: sandbox: {exc}") from None
    if containment.warning:
        warn(containment.warning)
    if containment.mode == sandbox.BWRAP:
        check_results_hidden(config)
    for bot in config.bots:
        if bot.sandbox.scratch:
            config.scratch_dir(bot.name).mkdir(mode=0o700, parents=True, exist_ok=True)
    return containment.mode


def check_results_hidden(config: TournamentConfig) -> None:
    """The sandbox hides the results directory (the seed, every stored match,
    the other bots' stderr logs as they are written) from every bot, but
    never a directory holding what a bot needs (its own directory, program or
    script): a bot living inside ``out`` would see it all."""
    for bot in config.bots:
        if bot.command is None:
            continue
        cwd = os.fspath(bot.dir or config.dir)
        env = sandbox.bot_environment(os.environ, dict(bot.env))
        inside = sandbox.exposed(os.fspath(config.output), bot.command, cwd, env)
        if inside is not None:
            line = config.line_of("out")
            where = f"{config.path}:{line}" if line else str(config.path)
            raise TournamentError(
                f"{where}: out: the results directory {config.output} holds {inside}, which "
                f"bot {bot.name} runs from, so the sandbox cannot hide the results (the seed, "
                f"every stored match, the other bots' logs) from it; put the results elsewhere")


def run_builds(config: TournamentConfig, echo: Callable[[str], None]) -> None:
    """Run each bot's build command once, in its directory; stop at the first failure."""
    for bot in config.bots:
        if not bot.build:
            continue
        cwd = bot.dir or config.dir
        echo(f"building {bot.name}: {bot.build}")
        proc = subprocess.run(bot.build, shell=True, cwd=cwd, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            raise TournamentError(
                f"bots.{bot.name}.build: '{bot.build}' failed with exit code {proc.returncode}: {tail[0]}"
            )


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
    settled: the adjacent pairs not yet told apart."""

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
        self.tally.add(entry.seats, result)
        self.games += games_of(entry.match_id, entry.deal, entry.seats, result.places, result.forfeited,
                               result.hand_scores, self.rating)
        if self.live:
            self.stream.write("\r" + self.line() + "\x1b[K")
            self.stream.flush()
        else:
            self._plain()

    def fail(self, line: str) -> None:
        """A match failed: count it, and print ``line`` (on a terminal, above the progress line)."""
        self.done += 1
        self.fresh += 1
        self.failed += 1
        self.tally.failed += 1
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
        unsettled = "" if self.unsettled is None else f"unsettled pairs {self.unsettled}, "
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
    """The schedule; for a settling tournament, its first rounds only."""
    if config.settle is not None:
        check_rounds(config)
        return first_rounds(config)
    check_schedule_size(config)
    return build_schedule(config)


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


def run_tournament(
    config: TournamentConfig,
    jobs: int | None,
    echo: Callable[[str], None] = print,
    progress_stream: TextIO | None = None,
) -> RunSummary:
    """Play every scheduled match not yet stored (failed ones again); store each as it finishes.
    ``jobs``: matches in parallel (None: the executor's default, see ``executors.make``)."""
    config.output.mkdir(parents=True, exist_ok=True)
    with results_lock(config.output):
        config = settle_seed(config)
        if config.settle is not None:
            return run_rounds(config, jobs, echo, progress_stream)
        return _run_schedule(config, jobs, echo, progress_stream)


def _run_schedule(config: TournamentConfig, jobs: int | None, echo: Callable[[str], None],
                  progress_stream: TextIO | None) -> RunSummary:
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
                _warn(line)
        if not todo:
            return RunSummary(0, len(entries), len(entries), 0.0, db_path(config))
        run_builds(config, echo)
        check_bots(config)  # after the builds, which may create the programs
        sandbox_mode = prepare_sandbox(config)
        progress = Progress(total=len(entries), done=len(entries) - len(todo),
                            stream=progress_stream or sys.stderr, rating=config.rating,
                            games=rated_games(store.matches(), config.rating))
        started = time.monotonic()
        _play(config, todo, jobs, store, log_dir, progress, sandbox_mode)
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
                _warn(line)
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
        self.unsettled: int | None = None
        self.started = time.monotonic()

    @property
    def failed(self) -> int:
        return 0 if self.progress is None else self.progress.failed

    def play(self) -> str:
        """Play rounds until one of ``STOP_REASONS``; that reason.

        Each round is decided from the matches of the rounds before it only
        (by schedule index), so a resumed run, which finds later rounds
        already stored, decides every round as the first run did."""
        from ..ranking import assess  # numpy: settling runs only

        index = round_no = 0
        assessment = None
        stored = self.store.matches()
        rule = StopRule(self.budget, self.settle.confidence)
        while True:
            before = [m for m in stored if m.schedule_index < index]
            games = rated_games(before, self.config.rating)
            if round_no >= self.config.deals:
                assessment = assess(games, self.config.bot_names, self.settle.confidence,
                                    seed=self.config.seed or 0)
                self.unsettled = assessment.unsettled
                if self.progress is not None:
                    self.progress.unsettled = assessment.unsettled
                if rule.settled(len(before), assessment):
                    return "settled"
            entries = round_entries(self.config, round_no, assessment, index)
            if not entries:     # rounds are never empty; a run without one would loop for ever
                raise RuntimeError(f"round {round_no} of the settling run has no match")
            done = {m.match_id for m in stored}
            todo = [e for e in entries if e.match_id not in done]
            if len(before) + len(entries) > self.budget:
                return "budget"
            if todo:
                limit = self.settle.max_minutes
                if limit is not None and time.monotonic() - self.started > 60 * limit:
                    return "time"
                self._play(todo, games, len(before) + len(entries) - len(todo))
                stored = self.store.matches()
                if self.failed:
                    return "failed"
            index += len(entries)
            round_no += 1

    def _play(self, todo: list[ScheduleEntry], games: list[Game], done: int) -> None:
        if self.progress is None:
            run_builds(self.config, self.echo)
            check_bots(self.config)
            self.sandbox_mode = prepare_sandbox(self.config)
            self.progress = Progress(total=self.budget, done=done, stream=self.stream, games=games,
                                     unsettled=self.unsettled, rating=self.config.rating)
        if self.executor is None:
            self.executor = self.stack.enter_context(_executor(self.config, self.jobs, self.budget))
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


@contextmanager
def _executor(config: TournamentConfig, jobs: int | None, most: int) -> Iterator[AnyExecutor]:
    """The tournament's executor (``jobs`` in parallel, at most ``most``), closed
    after a complete run, and aborted after anything else (Ctrl-C, a store
    error, a bug here): then running matches are interrupted and their bots killed."""
    try:
        executor = make(config, jobs, most, notice=_warn)
    except WorkerError as err:
        raise TournamentError(str(err)) from None
    complete = False
    try:
        yield executor
        complete = True
    finally:
        if complete:
            executor.close()
        else:
            executor.abort()


def _feed(executor: AnyExecutor, config: TournamentConfig, todo: list[ScheduleEntry],
          store: ResultStore, log_dir: Path, progress: Progress, sandbox_mode: str) -> None:
    """Run ``todo`` on ``executor`` and store every outcome as it comes."""
    by_id = {e.match_id: e for e in todo}
    specs: Iterator[MatchSpec] = (entry_spec(config, e, log_dir, sandbox_mode) for e in todo)
    try:
        for outcome in executor.run(specs):
            entry = by_id[outcome.match_id]
            if isinstance(outcome, MatchFailure):
                progress.fail(record_failure(store, log_dir, entry, outcome))
                continue
            stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
            store.add_match(stored_match(entry, outcome, stamp))
            progress.add(entry, outcome)
    except WorkerError as err:
        raise TournamentError(str(err)) from None


def _play(config: TournamentConfig, todo: list[ScheduleEntry], jobs: int | None, store: ResultStore,
          log_dir: Path, progress: Progress, sandbox_mode: str) -> None:
    """Run ``todo`` and store every outcome; the executor is stopped whatever happens."""
    try:
        with _executor(config, jobs, len(todo)) as executor:
            _feed(executor, config, todo, store, log_dir, progress, sandbox_mode)
    finally:
        progress.finish()


__all__ = [
    "TournamentError", "RunSummary", "STOP_REASONS", "run_tournament", "run_rounds", "plan", "entry_spec", "stored_match",
    "record_failure", "db_path", "check_bots", "run_builds", "Progress", "SerialExecutor", "ProcessExecutor",
]
