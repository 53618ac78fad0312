"""The commands that read one results database's matches: ``arena matches``
(the stored matches, or with ``--superseded`` those ``--rerun`` set aside),
``arena show`` (one match's account, its JSON or replay, or the
tournament's summary) and ``arena verify`` (every result replayed, no match
missing).  ``commands`` has ``run`` and ``leaderboard``."""

from __future__ import annotations

import dataclasses
import logging
import os
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..logsetup import status
from ..match import IgnoredLines
from ..process.errors import escaped
from ..tournament.results.database import LEAGUE_FILE, ResultStore, StoredMatch, StoreError
from ..tournament.results.rows import FailedMatch, faults_with_record
from ..tournament.results.setaside import superseded_rows
from ..tournament.standings.leaderboard import Column, cell_text, format_table, terminal_json
from ..tournament.standings.summary import bot_records, summary_json, summary_lines
from .common import off_turn_text, verbosity
from .tournament import FORMAT_HELP, OutputFormat, open_store, row_value

if TYPE_CHECKING:
    from ..league.audit import TableAudit

LOG = logging.getLogger(__name__)


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
                           Column("totals", ""), Column("places", ""), Column("forfeited", ""),
                           Column("reason", ""))


@click.command()
@click.argument("results")
@click.option("--bot", default=None, help="Only matches this bot played.")
@click.option("--format", "fmt", type=OutputFormat(), default="plain", show_default=True, help=FORMAT_HELP)
@click.option("--superseded", is_flag=True,
              help="List the matches `arena run --rerun` set aside instead (kept, never counted), "
                   "with when and why, and their results then; their logs are in logs/superseded/ARCHIVE/.")
def matches(results: str, bot: str | None, fmt: str, superseded: bool) -> None:
    """List the stored matches of RESULTS (failed ones with status 'error')."""
    store = open_store(results)
    if superseded:
        _list_superseded(store, results, bot, fmt)
        return
    rows = _read_rows(store, results, bot, lambda: [_match_row(m) for m in store.matches(bot=bot)]
                      + [_failed_row(f) for f in store.failures(bot=bot)])
    rows.sort(key=lambda r: r["index"])
    click.echo(format_table(MATCH_JSON_COLUMNS if fmt == "json" else MATCH_COLUMNS, rows, fmt, get=row_value))


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
    click.echo(format_table(SUPERSEDED_JSON_COLUMNS if fmt == "json" else SUPERSEDED_COLUMNS, rows, fmt, get=row_value))


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
    """Show RESULTS per bot (forfeits, faults and the first one's reason), or one match of it.

    Without MATCH: per bot, the matches it was caught computing between its
    turns in, its forfeits, its faults by kind and its first fault (where and
    why: what to tell its author). With MATCH (`arena matches` lists them):
    the hand-by-hand account, faults and stderr logs (-v: every draw and
    discard too); with --html its replay viewer, and RESULTS may then be a
    match log of `arena play --log` (no MATCH needed)."""
    if html:
        _write_replay(results, match_id, out)
        return
    if match_id is None:
        if decision is not None:
            open_store(results).close()      # a match log, say, is told so first
            raise click.ClickException(f"--decision of which match of {results}? "
                                       f"`arena matches {results}` lists them")
        _show_tournament(results, as_json)
        return
    if decision is not None:
        _show_decision(results, match_id, decision)
        return
    store = open_store(results)
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


def _write_replay(results: str, match_id: str | None, out: Path | None) -> None:
    """``arena show --html``: the match's replay viewer."""
    # lazy: the report's modules, jinja2 and msgspec (tests/test_lean_imports.py REPORTING)
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


def _show_decision(results: str, match_id: str, decision: int) -> None:
    """``arena show RESULTS MATCH --decision N``."""
    # lazy: the report's modules, jinja2 and msgspec (tests/test_lean_imports.py REPORTING)
    from ..report.build import ReportError, decision_lines

    try:
        for line in decision_lines(results, match_id, decision):
            _echo(line)
    except ReportError as err:
        raise click.ClickException(str(err)) from None


def _show_tournament(results: str, as_json: bool) -> None:
    """``arena show RESULTS``: who was caught between turns, forfeited, faulted."""
    store = open_store(results)
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
        marks = [*(["forfeited"] if m.forfeited[s] else []), *(["CPU between turns"] if m.caught[s] else [])]
        out.append(f"{name} ({', '.join(marks)})" if marks else name)
    return out


def _print_account(m: StoredMatch, record: dict[str, Any]) -> None:
    from ..account import final_table, render_account  # tabulate: not for the other commands

    # lazy: the replay reads decisions with the codec, msgspec (tests/test_lean_imports.py PLAYING)
    from ..report.replay import decision_stderr

    names = [cell_text(b) for b in m.bots]     # a database is a file: its names may hold anything
    verbose = verbosity().verbose > 0
    for line in render_account(record["events"], names, verbose=verbose):
        _echo(line)
    _echo("")
    _echo(final_table(record["events"], _seat_labels(m, names), places=m.places))
    if any(m.caught):
        _echo("\nCPU used between turns, measured (no fault: stopped between its turns from then on):")
        for s, cpu in enumerate(m.off_turn_cpu):
            if cpu is not None:
                _echo(f"  seat {s} ({names[s]}): {off_turn_text(cpu)}")
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


@click.command()
@click.argument("results")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Processes replaying the matches (default: the usable CPUs).")
def verify(results: str, jobs: int | None) -> None:
    """Re-derive every stored result of RESULTS from its record, with no bot:
    the deals from each match's seed, every recorded action legal under the
    tournament's rules, and the totals, hand scores, places and forfeits
    those give equal to the stored ones, and the decision times; every
    match the schedule (or each round played) gives stored, with its seed
    and seats (one that failed with an arena error is named as failed);
    SQLite's integrity too.

    For a table about to be published, or a database that was copied,
    merged or restored.  Prints each problem on a line of its own (exit
    status 1), or one line saying all is well."""
    # lazy: verify replays matches with the engine, ~15 % of import arena.cli's CPU time (measured)
    from ..tournament.results.verify import verify_results

    store = open_store(results)
    try:
        checked = verify_results(store, jobs=jobs)
        tables = _league_tables(results, store)
    except StoreError as err:
        raise click.ClickException(str(err)) from None
    finally:
        store.close()
    for line in [*checked.lines(), *(tables.problems if tables else ())]:
        _echo(line)           # match ids, bot names and reasons come from files that may be edited
    status(checked.summary(results) + (f"; {tables.summary()}" if tables and not tables.problems else ""))
    if not checked.ok or (tables and tables.problems):
        raise SystemExit(1)


def _league_tables(results: str, store: ResultStore) -> TableAudit | None:
    """For a league's folder, or a league's export: each stored match held to
    its tables (``arena.league.audit``); None for any other RESULTS."""
    folder = (Path(results) / LEAGUE_FILE).is_file()
    if not folder:
        described = store.tournament()
        config = None if described is None else described["config"]
        if not isinstance(config, dict) or config.get("format") != "league":
            return None
    # lazy: the league's modules, for a league's results alone (tests/test_lean_imports.py)
    from ..league.audit import LeagueError, audit_export, audit_folder

    try:
        return audit_folder(Path(results), store) if folder else audit_export(store)
    except LeagueError as err:
        raise click.ClickException(str(err)) from None
