"""``arena run``, ``arena leaderboard``, ``arena matches``, ``arena show``.

Thin click commands over the tournament library; every library error
becomes a one-line ClickException.  Results go to stdout in the chosen
``--format``; status lines and progress go to stderr (``logsetup.status``),
so ``arena run t.yaml --format json | jq`` works.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import shlex
import sys
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any, TextIO

import click

from ..clicommon import Interrupted, UsageLine, verbosity
from ..logsetup import is_quiet, status
from ..match import IgnoredLines
from ..process.errors import escaped
from ..words import plural
from .config import EXECUTORS, RATINGS, RAY, SWISS, ConfigError, TournamentConfig, load_config
from .config import FORMATS as TOURNAMENT_FORMATS
from .leaderboard import FORMATS, Column, cell_text, format_table, report, terminal_json
from .preflight import TournamentError, db_path, hold_to_sandbox, settle_seed
from .rounds import match_budget
from .runlock import playing_now
from .runner import STOP_REASONS, RunSummary, check_rerun, plan, run_tournament
from .schedule import ScheduleEntry, estimate_seconds, unfinished_size
from .setaside import superseded_rows
from .sharing import shared_folder_warnings
from .store import ResultStore, StoredMatch, StoreError, resolve_db_path
from .stored import FailedMatch, faults_with_record

LOG = logging.getLogger(__name__)

SECTIONS = ("leaderboard", "head_to_head", "seats")



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


_FORMAT_HELP = "Output format of the tables on stdout (not the tournament's format, a file's 'format:')."

# Rough seconds per match, for the estimate printed before a run.
SECONDS_BUILTIN_MATCH = 0.3
SECONDS_BOT_MATCH = 2.0


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


def _open_store(results: str) -> ResultStore:
    try:
        return ResultStore(resolve_db_path(results), readonly=True)
    except StoreError as err:
        raise click.ClickException(str(err)) from None


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
    return format_table(SCHEDULE_COLUMNS, rows, fmt, get=_key)


def _key(row: dict[str, Any], key: str) -> Any:
    return row.get(key)


def _parallel(jobs: int | None, on_ray: bool) -> str:
    if jobs is None:
        return "one per CPU of the Ray cluster in parallel"
    return f"{jobs} in parallel" + (" on Ray" if on_ray else "")


def _announce(config: TournamentConfig, entries: list[ScheduleEntry], jobs_used: int, parallel: str,
              stored: Collection[str] = ()) -> None:
    """The opening line; its estimate is of the matches not ``stored`` yet."""
    has_bots = any(not b.is_builtin for b in config.bots)
    per_match = SECONDS_BOT_MATCH if has_bots else SECONDS_BUILTIN_MATCH
    left = sum(e.match_id not in stored for e in entries)
    estimate = estimate_seconds(left, per_match, jobs_used)
    if config.settle is None:
        if left == len(entries):
            when = f"estimated {estimate / 60:.1f} min"
        elif left:
            when = f"{left} left to play, estimated {estimate / 60:.1f} min"
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
               f"{first} {estimate / 60:.1f} min")


def _stored_ids(config: TournamentConfig) -> set[str]:
    """The matches a run of ``config`` would find stored (read only); none
    when there is no database, or one the run will refuse (it says why)."""
    path = db_path(config)
    if not path.exists():
        return set()
    try:
        with ResultStore(path, readonly=True) as store:
            store.check_tournament(config.name, config.to_mapping(), config.seed)
            return store.completed_ids()
    except StoreError:
        return set()


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
@click.option("--dry-run", is_flag=True, help="Print the schedule and stop.")
@click.option("--seed", type=click.IntRange(-(2**63), 2**63 - 1), default=None,
              help="Override the file's seed (a 64-bit whole number, as in the file).")
@click.option("--out", "out", type=click.Path(path_type=Path), default=None,
              help="Results directory (default: the file's 'out').")
@click.option("--format", "fmt", type=OutputFormat(), default="plain", show_default=True,
              help="Output format of the final tables (or of the --dry-run schedule) on stdout; status and "
                   "progress go to stderr.  Not the tournament's format (round robin...): the file's 'format:'.")
@click.option("--section", "sections", multiple=True, type=click.Choice(SECTIONS),
              help="Which final tables (default: all three; csv: the leaderboard; repeat to add).")
@click.option("--executor", type=click.Choice(EXECUTORS), default=None,
              help="Where matches run: local worker processes, or a Ray cluster (default: the file's 'executor', "
                   "else local).")
@click.option("--address", default=None,
              help="The Ray cluster to join (host:port, ray://host:port, auto); implies --executor ray.")
@click.option("--rerun", "rerun", multiple=True, metavar="NAME",
              help="Re-play NAME's matches with its current program (a fixed bot handed in late): its stored "
                   "matches and failures are set aside first, kept in the database as superseded, and every "
                   "other stored match is kept; then the run resumes.  Repeatable.  An interrupted --rerun "
                   "resumes with a plain `arena run`; a second --rerun NAME sets aside the re-played ones again.  "
                   "Not for tournaments played in rounds (settle:, format: swiss).")
def run(file: Path, jobs: int | None, affinity: bool | None, dry_run: bool, seed: int | None, out: Path | None,
        fmt: str, sections: tuple[str, ...], executor: str | None, address: str | None,
        rerun: tuple[str, ...]) -> None:
    """Run the tournament described by FILE (YAML); resume if it was interrupted.

    The final tables go to stdout, everything else (what is being played,
    the progress, the fault summary) to stderr.  With --rerun NAME, NAME's
    stored matches are set aside and played again (see --rerun)."""
    chosen = _sections(sections, fmt, SECTIONS)
    try:
        config = load_config(file).with_overrides(seed=seed, jobs=jobs, output=out, executor=executor,
                                                  address=address, affinity=affinity)
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
    on_ray = config.executor.backend == RAY
    # On Ray, "auto" is one match per CPU of the cluster, known once joined.
    jobs_run = None if on_ray and config.jobs is None else config.job_count
    jobs_used = config.job_count
    again = {e.match_id for e in entries if set(e.seats) & set(rerun)}
    _announce(config, entries, jobs_used, _parallel(jobs_run, on_ray), _stored_ids(config) - again)
    for line in shared_folder_warnings(config):
        LOG.warning("%s", line)
    if dry_run:
        stored = _stored_for_dry_run(config, len(entries))
        click.echo(format_schedule(entries, fmt))
        if stored:
            status(stored)
        if unseeded and not db_path(config).exists():
            status("(no seed in the file: these seeds are an example; a run draws its own "
                   "random seed and keeps it in the results database)")
        return
    stream: TextIO = sys.stderr if not is_quiet() else _NoLiveLine(sys.stderr)  # type: ignore[assignment]
    try:
        summary = run_tournament(config, jobs_run, echo=status, progress_stream=stream, rerun=rerun)
    except KeyboardInterrupt as stop:
        raise Interrupted.by(
            stop, f"the matches already finished are stored in {db_path(config)}; "
                  f"run the same command again to resume"
        ) from None
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
@click.option("--format", "fmt", type=OutputFormat(), default="plain", show_default=True, help=_FORMAT_HELP)
@click.option("--section", "sections", multiple=True, type=click.Choice(SECTIONS),
              help="Which tables (default: leaderboard only; repeat to add).")
@click.option("--rating", type=click.Choice(RATINGS), default=None,
              help="Rate every hand or every match as one game (default: the tournament's 'rating').")
def leaderboard(results: str, fmt: str, sections: tuple[str, ...], rating: str | None) -> None:
    """Show the leaderboard of RESULTS (a results directory or database)."""
    chosen = _sections(sections, fmt, ("leaderboard",))
    store = _open_store(results)
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


MATCH_COLUMNS = (Column("index", "#"), Column("match_id", "match"), Column("status", "status"),
                 Column("faults", "faults"), Column("seconds", "seconds", 3, 1),
                 Column("result", "result (place. bot total)"))
# json: the result as lists rather than one line of text.
MATCH_JSON_COLUMNS = (*MATCH_COLUMNS[:5], Column("bots", ""), Column("totals", ""), Column("places", ""),
                      Column("forfeited", ""), Column("ignored_lines", ""), Column("reason", ""))


def _match_row(m: StoredMatch) -> dict[str, Any]:
    order = sorted(range(len(m.bots)), key=lambda s: m.places[s])
    standing = ", ".join(f"{m.places[s]}. {m.bots[s]} {m.totals[s]}" + (" (forfeit)" if m.forfeited[s] else "")
                         for s in order)
    return {"index": m.schedule_index, "match_id": m.match_id, "status": "ok", "faults": len(m.faults),
            "seconds": m.duration_seconds, "result": standing, "bots": m.bots, "totals": m.totals,
            "places": m.places, "forfeited": m.forfeited, "reason": None}


def _failed_row(f: FailedMatch) -> dict[str, Any]:
    tries = f", {f.attempts} attempts" if f.attempts > 1 else ""
    return {"index": f.schedule_index, "match_id": f.match_id, "status": "error", "faults": None,
            "seconds": None, "result": f"arena error: {f.reason} ({', '.join(f.bots)}{tries})",
            "bots": list(f.bots), "totals": None, "places": None, "forfeited": None, "reason": f.reason}


# arena matches --superseded: what `arena run --rerun` set aside.
SUPERSEDED_COLUMNS = (Column("index", "#"), Column("match_id", "match"), Column("archive", "archive"),
                      Column("set_aside_at", "set aside at"), Column("result", "result then (place. bot total)"),
                      Column("why", "why"))
SUPERSEDED_JSON_COLUMNS = (*SUPERSEDED_COLUMNS[:4], Column("kind", ""), Column("why", ""), Column("bots", ""),
                           Column("totals", ""), Column("places", ""), Column("reason", ""))


@click.command()
@click.argument("results")
@click.option("--bot", default=None, help="Only matches this bot played.")
@click.option("--format", "fmt", type=OutputFormat(), default="plain", show_default=True, help=_FORMAT_HELP)
@click.option("--superseded", is_flag=True,
              help="List the matches `arena run --rerun` set aside instead (kept, never counted), "
                   "with when and why, and their results then; their logs are in logs/superseded/ARCHIVE/.")
def matches(results: str, bot: str | None, fmt: str, superseded: bool) -> None:
    """List the stored matches of RESULTS (failed ones with status 'error')."""
    store = _open_store(results)
    if superseded:
        _list_superseded(store, results, bot, fmt)
        return
    rows = _read_rows(store, results, bot, lambda: [_match_row(m) for m in store.matches(bot=bot)]
                      + [_failed_row(f) for f in store.failures(bot=bot)])
    rows.sort(key=lambda r: r["index"])
    click.echo(format_table(MATCH_JSON_COLUMNS if fmt == "json" else MATCH_COLUMNS, rows, fmt, get=_key))


def _read_rows(store: ResultStore, results: str, bot: str | None, read: Callable[[], list[dict[str, Any]]],
               known_bot_may_have_none: bool = False) -> list[dict[str, Any]]:
    """What ``read`` gives, the store closed after; a StoreError, or ``--bot``
    naming a bot with no row (or, if it may have none, no bot of RESULTS), is one line."""
    try:
        rows = read()
        if bot and not rows and not (known_bot_may_have_none and bot in store.bots()):
            known = ", ".join(cell_text(b) for b in store.bots())
            raise click.ClickException(f"no matches of bot {bot!r} in {results} (bots: {known})")
        return rows
    except StoreError as err:
        raise click.ClickException(str(err)) from None
    finally:
        store.close()


def _list_superseded(store: ResultStore, results: str, bot: str | None, fmt: str) -> None:
    rows = _read_rows(store, results, bot, lambda: superseded_rows(store.path, bot), known_bot_may_have_none=True)
    if not rows and fmt == "plain":
        click.echo(f"no match of {results} was set aside" + (f" with {bot} in it" if bot else "")
                   + " (arena run FILE --rerun NAME sets a bot's matches aside)", err=True)
        return
    click.echo(format_table(SUPERSEDED_JSON_COLUMNS if fmt == "json" else SUPERSEDED_COLUMNS, rows, fmt, get=_key))


@click.command()
@click.argument("results")
@click.argument("match_id", required=False)
@click.option("--json", "as_json", is_flag=True, help="The match as one JSON object: results, faults, record.")
@click.option("--html", "html", is_flag=True,
              help="Write the match's replay viewer (an HTML file) instead of printing the account.")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="With --html: the file to write (default: MATCH.html here, or LOG.html beside a log).")
@click.option("--decision", type=click.IntRange(min=0), default=None,
              help="Show decision N only: who decided what, in how long, and what the bot wrote on stderr meanwhile.")
def show(results: str, match_id: str | None, as_json: bool, html: bool, out: Path | None,
         decision: int | None) -> None:
    """Show one match of RESULTS: the hand-by-hand account, faults and stderr logs.

    Without MATCH, a summary of the tournament: per bot, the matches it was
    caught computing between its turns in, its forfeits and its faults.
    With --html, write its replay viewer; RESULTS may then also be a match
    log written by `arena play --log` (no MATCH needed). -v shows every draw
    and discard too.
    """
    if html:
        from ..report.build import FileUnwritable, ReportError, write_replay
        try:
            path = write_replay(results, match_id, out)
        except FileUnwritable as err:
            # As `arena report` does: the option that chooses the place, in a command to copy.
            again = shlex.join(["arena", "show", results, *([] if match_id is None else [match_id]), "--html"])
            elsewhere = "another --out FILE" if out is not None else f"--out FILE: {again} --out FILE"
            raise click.ClickException(f"{err}; write it elsewhere with {elsewhere}") from None
        except ReportError as err:
            raise click.ClickException(str(err)) from None
        click.echo(f"replay: {path}")
        return
    if match_id is None:
        if decision is not None:
            _open_store(results).close()      # a match log, say, is told so first
            raise click.ClickException(f"--decision of which match of {results}? "
                                       f"`arena matches {results}` lists them")
        _show_tournament(results, as_json)
        return
    if decision is not None:
        from ..report.build import ReportError, decision_lines
        try:
            for line in decision_lines(results, match_id, decision):
                _echo(line)
        except ReportError as err:
            raise click.ClickException(str(err)) from None
        return
    store = _open_store(results)
    try:
        failed = [f for f in store.failures() if f.match_id == match_id]
        if failed:
            where = f"; traceback in {cell_text(failed[0].log_path)}" if failed[0].log_path else ""
            raise click.ClickException(f"match {match_id!r} failed with an arena error: "
                                       f"{cell_text(failed[0].reason)}{where}; running the tournament again "
                                       f"retries it")
        try:
            m = store.match(match_id)
        except (KeyError, StoreError):
            raise click.ClickException(f"no match {match_id!r} in {results}; `arena matches {results}` lists them") from None
        try:
            record = store.record(match_id)
        except StoreError as err:
            raise click.ClickException(str(err)) from None
    finally:
        store.close()
    if as_json:
        click.echo(terminal_json(match_json(m, record)))
    else:
        _print_account(m, record)


def _show_tournament(results: str, as_json: bool) -> None:
    """``arena show RESULTS``: who was caught between turns, forfeited, faulted."""
    from .summary import bot_records, summary_json, summary_lines

    store = _open_store(results)
    try:
        name = (store.tournament() or {}).get("name", results)
        records, matches, failed = bot_records(store), len(store), len(store.failures())
    except StoreError as err:
        raise click.ClickException(str(err)) from None
    finally:
        store.close()
    if as_json:
        click.echo(terminal_json(summary_json(name, records, matches, failed)))
    else:
        for line in summary_lines(name, records, matches, failed):
            _echo(line)


def match_json(m: StoredMatch, record: dict[str, Any]) -> dict[str, Any]:
    """One stored match as JSON: its results, faults, ignored lines and event record."""
    out = {k: v for k, v in dataclasses.asdict(m).items() if k not in ("record", "record_path")}
    out["faults"] = faults_with_record(m.faults, record)
    out["warnings"] = record.get("warnings", [])
    out["record"] = {k: v for k, v in record.items() if k != "warnings"}
    return out


def _ignored_lines(record: dict[str, Any], seats: int) -> list[IgnoredLines]:
    """The record's ignored lines; entries that do not read as such are skipped
    (a record is a file on disk: it may be older, or damaged)."""
    out = []
    for w in record.get("warnings") or []:
        try:
            entry = IgnoredLines(**{**w, "examples": tuple(w.get("examples") or ())})
        except (TypeError, AttributeError):
            continue
        if isinstance(entry.seat, int) and 0 <= entry.seat < seats:
            out.append(entry)
    return out


def _fault_place(f: dict[str, Any]) -> str:
    """``in hand 2, request id 6 (play; --decision 15)``: the id the bot saw,
    and the index ``arena show --decision`` takes."""
    if f["request_id"] is None:
        return f"in hand {f['hand']}, decision {f['decision']} ({f['decision_kind']})"
    return f"in hand {f['hand']}, request id {f['request_id']} ({f['decision_kind']}; --decision {f['decision']})"


def _echo(text: str) -> None:
    """``text`` on stdout, each line escaped: what ``show`` prints comes from a
    database and a record that are files, and may have been edited."""
    click.echo("\n".join(escaped(line) for line in text.split("\n")))


def _seat_labels(m: StoredMatch, names: list[str]) -> list[str]:
    """The final table's names, marked: a forfeited seat ranks last whatever
    its total, tied with any other forfeited seat, and a bot caught
    computing between turns took others' CPU."""
    out = []
    for s, name in enumerate(names):
        marks = [*(["forfeited"] if m.forfeited[s] else []), *(["caught between turns"] if m.caught[s] else [])]
        out.append(f"{name} ({', '.join(marks)})" if marks else name)
    return out


def _print_account(m: StoredMatch, record: dict[str, Any]) -> None:
    from ..account import final_table, render_account  # tabulate: not for the other commands
    from ..report.replay import decision_stderr

    names = [cell_text(b) for b in m.bots]     # a database is a file: its names may hold anything
    verbose = verbosity().verbose > 0
    for line in render_account(record["events"], names, verbose=verbose):
        _echo(line)
    _echo("")
    _echo(final_table(record["events"], _seat_labels(m, names), places=m.places))
    if any(m.caught):
        _echo("\nComputing between turns (no fault: stopped between its turns from then on, "
                   "but it slowed the bot whose turn it was):")
        for s, cpu in enumerate(m.off_turn_cpu):
            if cpu is not None:
                _echo(f"  seat {s} ({names[s]}): caught, {cpu:.3f} s of CPU between its turns in this match")
    if m.faults:
        _echo("\nFaults:")
        for f in faults_with_record(m.faults, record):
            where = "at start-up" if f["decision"] is None else _fault_place(f)
            # Escaped again: a database is a file, and may come from elsewhere.
            _echo(f"  seat {f['seat']} ({names[f['seat']]}): {f['kind']} {where}: {escaped(str(f['detail']))}")
            if f["excerpt"]:
                _echo(f"    line: {escaped(f['excerpt'])}")
            said = None if f["decision"] is None else \
                decision_stderr(record, f["seat"], f["decision"], m.stderr_logs[f["seat"]])
            if said:
                _echo("    stderr during this decision:")
                for line in said.splitlines():
                    _echo(f"      {line}")
    ignored = _ignored_lines(record, len(names))
    if ignored:
        _echo("\nIgnored lines (not faults, but a bot that sends them is confused):")
        for w in ignored:
            _echo(f"  seat {w.seat} ({names[w.seat]}): {escaped(w.describe())}")
    # Every bot seat has a log path; the file is only created by the bot's
    # first byte on stderr (which may come after its last decision).
    logs = [(s, p) for s, p in enumerate(m.stderr_logs) if p and os.path.exists(p)]
    if logs:
        _echo("\nstderr logs:")
        for s, p in logs:
            _echo(f"  seat {s} ({names[s]}): {cell_text(p)}")
    else:
        _echo("\nstderr logs: none (no bot wrote on stderr)")


COMMANDS = (run, leaderboard, matches, show)
