"""``arena run``, ``arena leaderboard``, ``arena matches``, ``arena show``.

Thin click commands over the tournament library; every library error
becomes a one-line ClickException.  Results go to stdout in the chosen
``--format``; status lines and progress go to stderr (``logsetup.status``),
so ``arena run t.yaml --format json | jq`` works.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import click

from ..logsetup import is_quiet, status
from ..tournament.config.load import load_config
from ..tournament.config.model import EXECUTORS, RATINGS, RAY, SWISS, ConfigError, TournamentConfig
from ..tournament.config.model import FORMATS as TOURNAMENT_FORMATS
from ..tournament.estimate import run_seconds, unmeasured
from ..tournament.executors.cpus import job_count
from ..tournament.pairing.rounds import match_budget
from ..tournament.pairing.schedule import ScheduleEntry
from ..tournament.pairing.seating import neighbour_summary
from ..tournament.preflight import (
    TournamentError,
    db_path,
    hide_machine_state,
    hold_to_sandbox,
    settle_seed,
    start_problems,
)
from ..tournament.results.database import ResultStore, StoreError, resolve_db_path
from ..tournament.results.hint import with_results_hint
from ..tournament.results.rows import FailedMatch, StoredMatch
from ..tournament.runlock import playing_now
from ..tournament.runner import STOP_REASONS, RunSummary, check_rerun, plan, run_tournament
from ..tournament.sharing import shared_folder_warnings
from ..tournament.standings.leaderboard import FORMATS, Column, format_table, report
from ..tournament.standings.summary import unfinished_size
from ..words import plural
from .common import Interrupted, UsageLine

LOG = logging.getLogger(__name__)

SECTIONS = ("leaderboard", "head_to_head", "seats")
# Shown when asked for: a table per ordered pair is long, and says most after a balanced seating.
EXTRA_SECTIONS = ("neighbours",)



class OutputFormat(click.Choice[str]):
    """``--format``: how the tables are printed.  A tournament file's
    ``format:`` is something else (round robin, gauntlet, Swiss), and its
    keys are otherwise spelt as the options that override them, so a
    tournament format given here is told where it belongs."""

    def __init__(self) -> None:
        super().__init__(FORMATS)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter:
            if isinstance(value, str) and value.lower().replace("-", "_") in TOURNAMENT_FORMATS:
                self.fail(f"{value!r} is a tournament format, set by the tournament file's 'format:'; "
                          f"--format is the output format of the tables: {', '.join(FORMATS)}", param, ctx)
            raise


FORMAT_HELP = "Output format of the tables on stdout (not the tournament's format, a file's 'format:')."

def failed_note(count: int, retry_hint: str) -> str | None:
    """The line under a leaderboard that says how many matches it leaves out;
    ``retry_hint`` may say ``{them}`` (it / them)."""
    if not count:
        return None
    one = count == 1
    what = f"{count} match failed with an arena error and is" if one else \
        f"{count} matches failed with an arena error and are"
    return f"{what} not counted; {retry_hint.format(them='it' if one else 'them')}"


def unfinished_note(store: ResultStore) -> str | None:
    """The line under a leaderboard of a tournament that has not played its
    whole schedule (a run stopped part-way); None when it has, or when the
    run itself decides how many matches it plays (settle, Swiss)."""
    expected = unfinished_size(store)
    if expected is None:
        return None
    stored = len(store)
    missing = expected - stored - len(store.failures())
    return (f"{stored} of the {expected} scheduled matches are stored: the tournament is not finished; "
            f"running it again plays the other {missing}")


def _echo_note(note: str | None, fmt: str) -> None:
    """Under the table in plain/markdown; on stderr for csv/json, which must stay parseable."""
    if note is not None:
        if fmt in ("csv", "json"):
            click.echo(note, err=True)
        else:
            click.echo("\n" + note)


def open_store(results: str) -> ResultStore:
    try:
        return ResultStore(resolve_db_path(results), readonly=True)
    except StoreError as err:
        raise click.ClickException(with_results_hint(str(err), results)) from None


def _kept_line(db: Path) -> str:
    """What an interrupted run kept: its stored matches, or nothing at all
    (a run stopped before its first match leaves no results folder it made)."""
    if db.exists():
        return f"the matches already finished are stored in {db}; run the same command again to resume"
    return "no match had finished, so nothing was stored; run the same command again to start"


class _NoLiveLine:
    """stderr as the progress sees it under -q: not a terminal, so no live
    line; the one-line reports of failed matches still get through."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        return self.stream.write(text)

    def flush(self) -> None:
        self.stream.flush()


def _sections(given: tuple[str, ...], fmt: str, default: tuple[str, ...]) -> tuple[str, ...]:
    """The tables to print; csv holds one (the leaderboard unless one is named)."""
    if fmt == "csv":
        if len(given) > 1:
            raise UsageLine("csv output holds one table: give one --section")
        return given or ("leaderboard",)
    return given or default


SCHEDULE_COLUMNS = (Column("index", "#"), Column("match_id", "match"), Column("table", "table"),
                    Column("rotation", "rotation"), Column("deal", "deal"), Column("seed", "seed"),
                    Column("seats", "seats (in order)"))


def format_schedule(entries: list[ScheduleEntry], fmt: str) -> str:
    rows = [{"index": e.index, "match_id": e.match_id, "table": e.table, "rotation": e.rotation,
             "deal": e.deal, "seed": e.seed, "seats": list(e.seats) if fmt == "json" else ", ".join(e.seats)}
            for e in entries]
    return format_table(SCHEDULE_COLUMNS, rows, fmt, get=row_value)


def row_value(row: dict[str, Any], key: str) -> Any:
    return row.get(key)


def _parallel(jobs: int | None, on_ray: bool) -> str:
    if jobs is None:
        return "one per CPU of the Ray cluster in parallel"
    return f"{jobs} in parallel" + (" on Ray" if on_ray else "")


def _announce(config: TournamentConfig, entries: list[ScheduleEntry], jobs_used: int, parallel: str,
              stored: Sequence[StoredMatch] = ()) -> None:
    """The opening line; its estimate is of the matches not ``stored`` yet,
    timed by those that are (``tournament.estimate``)."""
    done = {m.match_id for m in stored}
    todo = [e for e in entries if e.match_id not in done]
    left = len(todo)
    estimate = run_seconds(config, todo, jobs_used, stored)
    # Bots no stored match has timed: a run times them before it plays, and says again.
    untimed = ", its bots not timed yet" if unmeasured(config, todo, stored) else ""
    if config.settle is None:
        if left == len(entries):
            when = f"estimated {estimate / 60:.1f} min{untimed}"
        elif left:
            when = f"{left} left to play, estimated {estimate / 60:.1f} min{untimed}"
        else:
            when = "all stored already"
        status(f"{config.name}: {plural(len(entries), 'match', 'matches')} ({config.format}, "
               f"{config.players} players per table, {len(config.bots)} bots), {parallel}; {when}")
    else:
        budget = match_budget(config)
        minutes = "" if config.settle.max_minutes is None else f" or {config.settle.max_minutes:g} min"
        first = (f"the first {len(entries)} take about" if left == len(entries)
                 else f"{left} of the first {len(entries)} are left to play, about")
        status(f"{config.name}: rounds of matches ({config.format}, {config.players} players per table, "
               f"{len(config.bots)} bots), {parallel}, until every adjacent pair is separated "
               f"at {config.settle.confidence:.0%} or {budget} matches{minutes} are used; "
               f"{first} {estimate / 60:.1f} min{untimed}")


def _stored(config: TournamentConfig) -> list[StoredMatch]:
    """The matches a run of ``config`` would find stored (read only); none
    when there is no database, or one that cannot be read here (the run
    says why).  Results of another configuration are refused at once, as
    the run would: that line says what changed, before any other does."""
    path = db_path(config)
    if not path.exists():
        return []
    try:
        store = ResultStore(path, readonly=True)
    except StoreError:
        return []
    try:
        store.check_tournament(config.name, config.to_mapping(), config.seed)
        return store.matches()
    except StoreError as err:
        raise click.ClickException(str(err)) from None
    finally:
        store.close()


def _played_line(summary: RunSummary) -> str:
    failed = f" ({summary.failed} failed)" if summary.failed else ""
    n = f"{summary.played} match" + ("" if summary.played == 1 else "es")
    if summary.stopped is not None:
        left = f"; {summary.unsettled} adjacent pair(s) not separated" if summary.unsettled else ""
        return (f"played {n}{failed} in {summary.seconds:.1f} s, {summary.total} in all; stopped: "
                f"{STOP_REASONS[summary.stopped]}{left}; results in {summary.db}")
    if summary.played:
        return f"played {n}{failed} in {summary.seconds:.1f} s; results in {summary.db}"
    return f"all {summary.total} matches were already played; results in {summary.db}"


def _dry_run(config: TournamentConfig, entries: list[ScheduleEntry], fmt: str, unseeded: bool) -> None:
    """``--dry-run``: the schedule on stdout; how balanced its neighbours are,
    and what is stored already, on stderr."""
    stored = _stored_for_dry_run(config, len(entries))
    click.echo(format_schedule(entries, fmt))
    balance = neighbour_summary([e.seats for e in entries], config.seating)
    if balance:
        status(balance + ("" if config.settle is None else ", in the rounds played before the first assessment"))
    if stored:
        status(stored)
    if unseeded and not db_path(config).exists():
        status("(no seed in the file: these seeds are an example; a run draws its own "
               "random seed and keeps it in the results database)")


def _dry_run_programs(refused: list[str], forfeiting: list[str]) -> None:
    """``--dry-run`` as a check of the programs: one line per bot whose program
    cannot start (file:line, what to do), exit status 1 if a run would stop
    on one; a bot that would forfeit (``--forfeit-unstartable``) is a warning."""
    for line in forfeiting:
        LOG.warning("%s", line)
    for line in refused:
        click.echo(f"error: {line}", err=True)
    if refused:
        raise SystemExit(1)


def _stored_for_dry_run(config: TournamentConfig, scheduled: int) -> str | None:
    """For ``--dry-run`` over an earlier run's results: how many matches a run
    would find stored, or the ClickException a run would stop on (this file
    no longer matches them).  Read only."""
    path = db_path(config)
    if not path.exists():
        return None
    try:
        with ResultStore(path, readonly=True) as store:
            store.check_tournament(config.name, config.to_mapping(), config.seed)
            done = len(store)
            if done < scheduled or config.settle is not None or config.format == SWISS:
                hold_to_sandbox(config, store, record=False)
    except (StoreError, TournamentError) as err:
        raise click.ClickException(str(err)) from None
    of = f" of {scheduled}" if config.settle is None and config.format != SWISS else ""
    return f"{done}{of} matches already stored in {path}; a run resumes there"


@click.command()
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Matches played in parallel (default: the file's 'jobs', else the number of cores).")
@click.option("--affinity/--no-affinity", default=None,
              help="Play each match, its bots included, on a CPU of its own when there are at least as many "
                   "CPUs as jobs (default: the file's 'affinity', else on); off, the system places them.")
@click.option("--dry-run", is_flag=True,
              help="Print the schedule, check that every bot program exists and can start (one error line "
                   "per bot that cannot, exit status 1), and stop: nothing is played.")
@click.option("--seed", type=click.IntRange(-(2**63), 2**63 - 1), default=None,
              help="Override the file's seed (a 64-bit whole number, as in the file).")
@click.option("--out", "out", type=click.Path(path_type=Path), default=None,
              help="Results directory (default: the file's 'out', else arena-results/NAME beside the file, NAME "
                   "being its 'name'); `arena leaderboard`, `show`, `matches` and `report` take it as RESULTS.")
@click.option("--format", "fmt", type=OutputFormat(), default="plain", show_default=True,
              help="Output format of the final tables (or of the --dry-run schedule) on stdout; status and "
                   "progress go to stderr.  Not the tournament's format (round robin...): the file's 'format:'.")
@click.option("--section", "sections", multiple=True, type=click.Choice(SECTIONS + EXTRA_SECTIONS),
              help="Which final tables (default: the first three; csv: the leaderboard; repeat to add).")
@click.option("--executor", type=click.Choice(EXECUTORS), default=None,
              help="Where matches run: local worker processes, or a Ray cluster (default: the file's 'executor', "
                   "else local).")
@click.option("--address", default=None,
              help="The Ray cluster to join (host:port, ray://host:port, auto); implies --executor ray.")
@click.option("--rerun", "rerun", multiple=True, metavar="NAME",
              help="Re-play NAME's matches with its current program (a fixed bot handed in late), on new deals "
                   "(the old ones may have been seen): its stored "
                   "matches and failures are set aside first, kept in the database as superseded, and every "
                   "other stored match is kept; then the run resumes.  Repeatable.  An interrupted --rerun "
                   "resumes with a plain `arena run`; a second --rerun NAME sets aside the re-played ones again.  "
                   "Not for tournaments played in rounds (settle:, format: swiss).")
@click.option("--forfeit-unstartable", is_flag=True,
              help="A bot whose program cannot be started at all (missing, not executable, no #! line) "
                   "forfeits every match it sits in, with the reason as its first fault, and the others are "
                   "played; without it the run stops before any match, naming the bot.  For a class, not a "
                   "competition: fix the bot later and --rerun it.")
def run(file: Path, jobs: int | None, affinity: bool | None, dry_run: bool, seed: int | None, out: Path | None,
        fmt: str, sections: tuple[str, ...], executor: str | None, address: str | None,
        rerun: tuple[str, ...], forfeit_unstartable: bool) -> None:
    """Run the tournament described by FILE (YAML); resume if it was interrupted.

    The final tables go to stdout, everything else (what is being played,
    the progress, the fault summary) to stderr.  With --rerun NAME, NAME's
    stored matches are set aside and played again (see --rerun)."""
    chosen = _sections(sections, fmt, SECTIONS)
    try:
        config = load_config(file).with_overrides(seed=seed, jobs=jobs, output=out, executor=executor,
                                                  address=address, affinity=affinity,
                                                  forfeit_unstartable=forfeit_unstartable)
        unseeded = config.seed is None
        config = settle_seed(config)
        check_rerun(config, rerun)
        entries = plan(config)
    except (ConfigError, TournamentError) as err:
        raise click.ClickException(str(err)) from None
    except ValueError as err:
        raise click.UsageError(str(err)) from None
    if rerun and dry_run:
        raise click.UsageError("--rerun sets stored matches aside, --dry-run changes nothing: give one of them")
    # Before the estimate: a run that would stop at once says so first.
    stored = _stored(config)
    refused, forfeiting = start_problems(config, rerun)
    if refused and not dry_run:
        raise click.ClickException(refused[0] + (" (--rerun set nothing aside)" if rerun else ""))
    on_ray = config.executor.backend == RAY
    if on_ray and not dry_run:
        _check_ray_address(config)
    # On Ray, "auto" is one match per CPU of the cluster, known once joined.
    jobs_run = None if on_ray and config.jobs is None else job_count(config.jobs)
    jobs_used = job_count(config.jobs)
    again = {e.match_id for e in entries if set(e.seats) & set(rerun)}
    kept = [m for m in stored if m.match_id not in again]     # --rerun's are played anew
    _announce(config, entries, jobs_used, _parallel(jobs_run, on_ray), kept)
    for line in shared_folder_warnings(hide_machine_state(config)):
        LOG.warning("%s", line)
    if dry_run:
        _dry_run(config, entries, fmt, unseeded)
        _dry_run_programs(refused, forfeiting)
        return
    stream: TextIO = sys.stderr if not is_quiet() else _NoLiveLine(sys.stderr)  # type: ignore[assignment]
    try:
        summary = run_tournament(config, jobs_run, echo=status, progress_stream=stream, rerun=rerun)
    except KeyboardInterrupt as stop:
        raise Interrupted.by(stop, _kept_line(db_path(config))) from None
    except (ConfigError, TournamentError, StoreError) as err:
        raise click.ClickException(str(err)) from None
    status(_played_line(summary))
    failures = _print_report(summary.db, fmt, chosen)
    if summary.played:
        for line in summary.tally.lines():
            status(line)
    _echo_note(failed_note(len(failures), "re-run the same command to retry {them}"), fmt)
    if failures:
        raise SystemExit(1)  # a tournament with holes is not a success, even when shown


def _check_ray_address(config: TournamentConfig) -> None:
    """Before the header and its estimate: a cluster that cannot be joined
    from here (nothing answers, or this machine is no node of it) is one line."""
    from ..tournament.executors.local import WorkerError  # lazy: with rayjoin, a Ray run's alone
    from ..tournament.executors.rayjoin import check_address  # lazy: a Ray run's alone (ctypes, signals)

    try:
        check_address(config.executor.address)
    except WorkerError as err:
        raise click.ClickException(str(err)) from None


def _print_report(db: Path, fmt: str, sections: tuple[str, ...]) -> list[FailedMatch]:
    """The final tables on stdout; the failed matches."""
    try:
        store = ResultStore(db, create=False)
    except StoreError as err:
        raise click.ClickException(str(err)) from None
    try:
        text = report(store, fmt, sections=sections)
        if fmt in ("plain", "markdown"):
            click.echo("")
        click.echo(text)
        return store.failures()
    except (ValueError, StoreError) as err:
        raise click.ClickException(str(err)) from None
    finally:
        store.close()


@click.command()
@click.argument("results")
@click.option("--format", "fmt", type=OutputFormat(), default="plain", show_default=True, help=FORMAT_HELP)
@click.option("--section", "sections", multiple=True, type=click.Choice(SECTIONS + EXTRA_SECTIONS),
              help="Which tables (default: leaderboard only; repeat to add). neighbours: how each bot "
                   "placed directly after each other bot, against elsewhere.")
@click.option("--rating", type=click.Choice(RATINGS), default=None,
              help="Rate every hand or every match as one game (default: the tournament's 'rating').")
def leaderboard(results: str, fmt: str, sections: tuple[str, ...], rating: str | None) -> None:
    """Show the leaderboard of RESULTS (a results directory or database).

    RESULTS is where `arena run` stored the tournament, which it names at the
    end ("results in ..."): the file's 'out', else arena-results/NAME beside
    the tournament file.
    """
    chosen = _sections(sections, fmt, ("leaderboard",))
    store = open_store(results)
    try:
        click.echo(report(store, fmt, sections=chosen, rating=rating))
        failures = store.failures()
        unfinished = unfinished_note(store)
    except (ValueError, StoreError) as err:
        raise click.ClickException(str(err)) from None
    finally:
        store.close()
    _echo_note(failed_note(len(failures), f"`arena matches {results}` lists {{them}}; running the "
                                          f"tournament again retries {{them}}"), fmt)
    # While a run plays into RESULTS, it is that run that plays the rest.
    playing = playing_note(results)
    _echo_note(playing or unfinished, fmt)


def playing_note(results: str) -> str | None:
    """A run still playing into RESULTS makes every table a partial one: say so."""
    p = Path(results)
    pid = playing_now(p if p.is_dir() else p.parent)
    if pid is None:
        return None
    by = f" (pid {pid})" if pid else ""
    return (f"note: an arena run{by} is still playing into {results}: these results are partial, "
            f"from the matches stored so far")


