"""``arena run``, ``arena leaderboard``, ``arena matches``, ``arena show``.

Thin click commands over the tournament library; every library error
becomes a one-line ClickException.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from .config import EXECUTORS, RATINGS, RAY, ConfigError, load_config
from .leaderboard import FORMATS, report, tabulate
from .rounds import match_budget
from .runner import STOP_REASONS, TournamentError, db_path, plan, run_tournament, settle_seed
from .schedule import estimate_seconds
from .store import ResultStore, StoreError, resolve_db_path
from .stored import FailedMatch

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


def _echo_note(note: str | None, fmt: str) -> None:
    """Under the table in plain/markdown; on stderr for csv/json, which must stay parseable."""
    if note is not None:
        if fmt in ("csv", "json"):
            click.echo(note, err=True)
        else:
            click.echo("\n" + note)


def _open_store(results: str) -> ResultStore:
    try:
        return ResultStore(resolve_db_path(results), create=False)
    except StoreError as err:
        raise click.ClickException(str(err)) from None


@click.command()
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Matches played in parallel (default: the file's 'jobs', else the number of cores).")
@click.option("--dry-run", is_flag=True, help="Print the schedule and stop.")
@click.option("--seed", type=click.IntRange(-(2**63), 2**63 - 1), default=None,
              help="Override the file's seed (a 64-bit whole number, as in the file).")
@click.option("--out", "out", type=click.Path(path_type=Path), default=None,
              help="Results directory (default: the file's 'output').")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="plain", show_default=True,
              help="Format of the final tables.")
@click.option("--executor", type=click.Choice(EXECUTORS), default=None,
              help="Where matches run: local worker processes, or a Ray cluster (default: the file's 'executor', "
                   "else local).")
@click.option("--address", default=None,
              help="The Ray cluster to join (host:port, ray://host:port, auto); implies --executor ray.")
def run(file: Path, jobs: int | None, dry_run: bool, seed: int | None, out: Path | None, fmt: str,
        executor: str | None, address: str | None) -> None:
    """Run the tournament described by FILE (YAML); resume if it was interrupted."""
    try:
        config = load_config(file).with_overrides(seed=seed, jobs=jobs, output=out, executor=executor,
                                                  address=address)
        unseeded = config.seed is None
        config = settle_seed(config)
        entries = plan(config)
    except ConfigError as err:
        raise click.ClickException(str(err)) from None
    except ValueError as err:
        raise click.UsageError(str(err)) from None
    on_ray = config.executor.backend == RAY
    # On Ray, "auto" is one match per CPU of the cluster, known once joined.
    jobs_run = None if on_ray and config.jobs is None else config.job_count
    jobs_used = config.job_count
    has_bots = any(not b.is_builtin for b in config.bots)
    per_match = SECONDS_BOT_MATCH if has_bots else SECONDS_BUILTIN_MATCH
    estimate = estimate_seconds(len(entries), per_match, jobs_used)
    if config.settle is None:
        click.echo(
            f"{config.name}: {len(entries)} matches ({config.format}, {config.players} players per table, "
            f"{len(config.bots)} bots), {_parallel(jobs_run, on_ray)}; estimated {estimate / 60:.1f} min"
        )
    else:
        budget = match_budget(config)
        minutes = "" if config.settle.max_minutes is None else f" or {config.settle.max_minutes:g} min"
        click.echo(
            f"{config.name}: rounds of matches ({config.format}, {config.players} players per table, "
            f"{len(config.bots)} bots), {_parallel(jobs_run, on_ray)}, until every adjacent pair is separated "
            f"at {config.settle.confidence:.0%} or {budget} matches{minutes} are used; "
            f"the first {len(entries)} take about {estimate / 60:.1f} min"
        )
    if dry_run:
        rows = [[e.index, e.match_id, e.table, e.rotation, e.deal, e.seed, ", ".join(e.seats)] for e in entries]
        click.echo(tabulate(rows, headers=["#", "match", "table", "rotation", "deal", "seed", "seats (in order)"]))
        if unseeded and not db_path(config).exists():
            click.echo("(no seed in the file: these seeds are an example; a run draws its own "
                       "random seed and keeps it in the results database)", err=True)
        return
    try:
        summary = run_tournament(config, jobs_run, echo=click.echo)
    except KeyboardInterrupt:
        raise click.ClickException(
            f"interrupted: the matches already finished are stored in {db_path(config)}; "
            f"run the same command again to resume"
        ) from None
    except (ConfigError, TournamentError, StoreError) as err:
        raise click.ClickException(str(err)) from None
    if summary.stopped is not None:
        failed = f" ({summary.failed} failed)" if summary.failed else ""
        n = f"{summary.played} match" + ("" if summary.played == 1 else "es")
        left = f"; {summary.unsettled} adjacent pair(s) not separated" if summary.unsettled else ""
        click.echo(f"played {n}{failed} in {summary.seconds:.1f} s, {summary.total} in all; stopped: "
                   f"{STOP_REASONS[summary.stopped]}{left}; results in {summary.db}")
    elif summary.played:
        failed = f" ({summary.failed} failed)" if summary.failed else ""
        n = f"{summary.played} match" + ("" if summary.played == 1 else "es")
        click.echo(f"played {n}{failed} in {summary.seconds:.1f} s; results in {summary.db}")
    else:
        click.echo(f"all {summary.total} matches were already played; results in {summary.db}")
    try:
        store = ResultStore(summary.db, create=False)
    except StoreError as err:
        raise click.ClickException(str(err)) from None
    try:
        click.echo("")
        click.echo(report(store, fmt))
        failures = store.failures()
    finally:
        store.close()
    _echo_note(failed_note(len(failures), "re-run the same command to retry {them}"), fmt)
    if failures:
        raise SystemExit(1)  # a tournament with holes is not a success, even when shown


def _parallel(jobs: int | None, on_ray: bool) -> str:
    if jobs is None:
        return "one per CPU of the Ray cluster in parallel"
    return f"{jobs} in parallel" + (" on Ray" if on_ray else "")


@click.command()
@click.argument("results")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="plain", show_default=True)
@click.option("--section", "sections", multiple=True, type=click.Choice(["leaderboard", "head_to_head", "seats"]),
              help="Which tables (default: leaderboard only; repeat to add).")
@click.option("--rating", type=click.Choice(RATINGS), default=None,
              help="Rate every hand or every match as one game (default: the tournament's 'rating').")
def leaderboard(results: str, fmt: str, sections: tuple[str, ...], rating: str | None) -> None:
    """Show the leaderboard of RESULTS (a results directory or database)."""
    store = _open_store(results)
    try:
        click.echo(report(store, fmt, sections=sections or ("leaderboard",), rating=rating))
        failures = store.failures()
    except (ValueError, StoreError) as err:
        raise click.ClickException(str(err)) from None
    finally:
        store.close()
    _echo_note(failed_note(len(failures), f"`arena matches {results}` lists {{them}}; running the "
                                          f"tournament again retries {{them}}"), fmt)


@click.command()
@click.argument("results")
@click.option("--bot", default=None, help="Only matches this bot played.")
def matches(results: str, bot: str | None) -> None:
    """List the stored matches of RESULTS."""
    store = _open_store(results)
    try:
        rows = []
        for m in store.matches(bot=bot):
            order = sorted(range(len(m.bots)), key=lambda s: m.places[s])
            standing = ", ".join(f"{m.places[s]}. {m.bots[s]} {m.totals[s]}" + (" (forfeit)" if m.forfeited[s] else "")
                                 for s in order)
            rows.append([m.schedule_index, m.match_id, "ok", len(m.faults), f"{m.duration_seconds:.1f}", standing])
        rows += [_failed_row(f) for f in store.failures(bot=bot)]
        if bot and not rows:
            known = ", ".join(store.bots())
            raise click.ClickException(f"no matches of bot {bot!r} in {results} (bots: {known})")
        rows.sort(key=lambda r: int(r[0]))  # type: ignore[call-overload]
        click.echo(tabulate(rows, headers=["#", "match", "status", "faults", "seconds",
                                           "result (place. bot total)"]))
    except StoreError as err:
        raise click.ClickException(str(err)) from None
    finally:
        store.close()


def _failed_row(f: FailedMatch) -> list[object]:
    tries = f", {f.attempts} attempts" if f.attempts > 1 else ""
    return [f.schedule_index, f.match_id, "error", "-", "-",
            f"arena error: {f.reason} ({', '.join(f.bots)}{tries})"]


@click.command()
@click.argument("results")
@click.argument("match_id")
@click.option("--verbose", "-v", is_flag=True, help="Show every draw and discard too.")
def show(results: str, match_id: str, verbose: bool) -> None:
    """Show one match of RESULTS: the hand-by-hand account, faults and stderr logs."""
    from ..account import final_table, render_account  # tabulate: not for the other commands
    store = _open_store(results)
    try:
        failed = [f for f in store.failures() if f.match_id == match_id]
        if failed:
            where = f"; traceback in {failed[0].log_path}" if failed[0].log_path else ""
            raise click.ClickException(f"match {match_id!r} failed with an arena error: {failed[0].reason}"
                                       f"{where}; running the tournament again retries it")
        try:
            m = store.match(match_id)
        except (KeyError, StoreError):
            raise click.ClickException(f"no match {match_id!r} in {results}; `arena matches {results}` lists them") from None
        record = store.record(match_id)
        names = list(m.bots)
        for line in render_account(record["events"], names, verbose=verbose):
            click.echo(line)
        click.echo("")
        click.echo(final_table(record["events"], names))
        if m.faults:
            click.echo("\nFaults:")
            for f in m.faults:
                click.echo(f"  seat {f['seat']} ({names[f['seat']]}): {f['kind']} in hand {f['hand']}, "
                           f"decision {f['decision']} ({f['decision_kind']}): {f['detail']}")
        logs = [(s, p) for s, p in enumerate(m.stderr_logs) if p]
        if logs:
            click.echo("\nstderr logs:")
            for s, p in logs:
                exists = "" if os.path.exists(p) else " (missing)"
                click.echo(f"  seat {s} ({names[s]}): {p}{exists}")
    finally:
        store.close()


COMMANDS = (run, leaderboard, matches, show)
