"""The ``arena`` command line: a thin click layer over the library.

Library errors become one-line ``ClickException``s; nothing here knows the
rules beyond calling the engine.  What only one command needs (tabulate for
a match account, the conformance checker) is imported by that command, so
``arena run`` carries none of it.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import os
import secrets
import shlex
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from .. import __version__, logsetup
from ..botcommand import BotCommandError, split_command, unquoted_problem
from ..match import CRASH, Fault, FaultPolicy, MatchResult, MatchSpec, SeatSpec
from ..match.spec import fault_place
from ..players.registry import BUILTIN_PLAYERS
from ..process import BotStartupError, TimeControl
from ..process.confine import sandbox
from ..process.errors import excerpt
from ..shanghai.errors import ShanghaiError
from ..shanghai.ruleset import Ruleset
from ..tournament.config.bounded import load_data
from ..tournament.config.model import ConfigError
from ..tournament.sharing import SharingBot, folder_warnings
from ..words import plural
from .common import ArenaGroup, Interrupted, UsageLine, off_turn_text, verbosity

LOG = logging.getLogger(__name__)


@click.group(cls=ArenaGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="arena")
def main() -> None:
    """arena: run Shanghai Rummy bot tournaments."""


def _load_mapping(path: Path, what: str) -> dict[str, Any]:
    """Read a JSON or YAML mapping, bounded in size, depth and numbers; one-line errors that name the file."""
    try:
        data = load_data(path, what)
    except ConfigError as err:
        raise click.ClickException(str(err)) from None
    if not isinstance(data, dict):
        raise click.ClickException(f"{path}: {what} must be a mapping")
    return data


def _sandbox_mode(mode: str) -> str:
    """What ``--sandbox`` gives here; the fallback warning goes to stderr."""
    try:
        containment = sandbox.resolve(mode)
    except sandbox.SandboxUnavailable as err:
        raise click.ClickException(str(err)) from None
    if containment.warning:
        LOG.warning("%s", containment.warning)
    return containment.mode


def _confine(seats: tuple[SeatSpec, ...], mode: str, hide: tuple[Path | None, ...] = ()) -> tuple[SeatSpec, ...]:
    """Each bot program in ``mode``, not seeing the other programs' directories
    nor the ``hide`` files (a deal file holds the cards to come), nor the
    arena's ``--log-file`` (with ``-vv``, every seat's hand)."""
    places = {i: sandbox.bot_places(s.bot.argv, os.fspath(s.bot.cwd) if s.bot.cwd else None)
              for i, s in enumerate(seats) if s.bot is not None}
    out = []
    for i, seat in enumerate(seats):
        if seat.bot is None:
            out.append(seat)
            continue
        hidden = [p for j, found in places.items() if j != i for p in found]
        hidden += [os.path.abspath(p) for p in (*hide, logsetup.log_file()) if p is not None]
        policy = seat.bot.sandbox.replace(mode=mode, hide=tuple(hidden))
        out.append(SeatSpec(seat.name, bot=dataclasses.replace(seat.bot, sandbox=policy)))
    return tuple(out)


def _check_logs_hidden(seats: tuple[SeatSpec, ...], log_dir: Path) -> None:
    """The sandbox hides the stderr logs from the bots, but never a directory
    holding a bot's own: with two bot programs, one could read what the
    other writes on stderr (its hand, often) as it is written."""
    bots = [s.bot for s in seats if s.bot is not None and s.bot.sandbox.mode == sandbox.BWRAP]
    if len(bots) < 2:
        return
    for bot in bots:
        cwd = os.fspath(bot.cwd) if bot.cwd is not None else os.getcwd()
        env = sandbox.bot_environment(os.environ, bot.env)
        inside = sandbox.exposed(os.fspath(log_dir), bot.argv, cwd, env)
        if inside is not None:
            raise UsageLine(f"--log-dir {log_dir} holds {inside}, which {shlex.join(bot.argv)!r} "
                            "runs from, so the bots could read each other's stderr logs as they "
                            "are written; give a directory of its own (the default: arena-logs)")


def _warn_shared_folders(seats: tuple[SeatSpec, ...]) -> None:
    """As ``arena run`` does: bot programs whose sandboxes let one read the
    other's files, in a folder holding their programs (not merely the
    working directory every bot of ``arena play`` runs in)."""
    programs: dict[tuple[object, ...], SharingBot] = {}
    for seat in seats:
        if seat.bot is None:
            continue
        bot = seat.bot
        env = tuple(sorted((bot.env or {}).items()))
        cwd = os.fspath(bot.cwd) if bot.cwd is not None else None
        # Seats of one program are one bot: its own files are its own.
        programs.setdefault((tuple(bot.argv), cwd, env),
                            SharingBot(repr(shlex.join(bot.argv)), tuple(bot.argv), cwd, env, bot.sandbox))
    for line in folder_warnings(list(programs.values()), "put each bot's program in a folder of its own",
                                programs_only=True):
        LOG.warning("%s", line)


_SANDBOX_OPTION = click.option(
    "--sandbox", "sandbox_mode", type=click.Choice(sandbox.MODES), default=sandbox.AUTO,
    show_default=True,
    help="Confine bot programs with bubblewrap: auto (where it works, else warn), bwrap (or fail), none.")


def _seat(arg: str) -> SeatSpec:
    """A built-in player name, or a command line (shlex-split) for a bot program."""
    if arg in BUILTIN_PLAYERS:
        return SeatSpec.builtin(arg)
    try:
        return SeatSpec.command(split_command(arg))
    except BotCommandError as err:
        raise click.ClickException(str(err)) from None


# The old spellings of --per-decision, kept for scripts written before it was
# renamed but not shown by --help: hidden options of their own, so a command
# line that also gives --per-decision is refused rather than one silently winning.
_OLD_PER_DECISION = {"per_move": "--per-move", "time_per_move": "--time-per-move"}


def _time_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--startup, --per-decision and --time-bank: a bot program's time control."""
    @functools.wraps(f)
    def merged(*args: Any, **kwargs: Any) -> Any:
        old = {_OLD_PER_DECISION[k]: v for k in _OLD_PER_DECISION if (v := kwargs.pop(k)) is not None}
        if old:
            ctx = click.get_current_context()
            given = list(old)
            if ctx.get_parameter_source("per_decision") is not ParameterSource.DEFAULT:
                given.insert(0, "--per-decision")
            if len(given) > 1:
                names = " and ".join(old)
                raise UsageLine(f"{names} {'is the old name' if len(old) == 1 else 'are old names'} of "
                                f"--per-decision, and {' and '.join(given)} are given; give --per-decision once")
            kwargs["per_decision"] = next(iter(old.values()))
        return f(*args, **kwargs)

    seconds = click.FloatRange(min=0, min_open=True)
    for name, spelling in _OLD_PER_DECISION.items():
        merged = click.option(spelling, name, type=seconds, default=None, hidden=True)(merged)
    merged = click.option("--time-bank", "time_bank", type=click.FloatRange(min=0), default=None,
                          help="Seconds of reserve per match, spent by decisions slower than --per-decision "
                               "(default: none).")(merged)
    merged = click.option("--per-decision", "per_decision", type=seconds, default=1.0, show_default=True,
                          help="Seconds a bot program has for each decision (a tournament file's time: "
                               "per_decision).")(merged)
    merged = click.option("--startup", "startup", type=click.FloatRange(min=0, min_open=True), default=10.0,
                          show_default=True,
                          help="Seconds a bot program has to start and answer 'start' (raise it for "
                               "programs that start slowly, e.g. java Bot.java).")(merged)
    return merged


def _time_control(startup: float, per_decision: float, bank: float | None) -> TimeControl:
    try:
        return TimeControl(startup_seconds=startup, per_decision_seconds=per_decision, bank_seconds=bank)
    except ValueError as err:
        raise click.ClickException(str(err)) from None


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.1f} ms"


@main.command()
@click.argument("bots", nargs=-1)
@click.option("--players", "-n", type=click.IntRange(2, 8), default=None,
              help="Seats at the table, 2-8 (default: the number of BOTS, or 4).")
@click.option("--seed", type=int, default=None, help="Seed of the shuffles (default: random; printed).")
@click.option("--preset", type=click.Choice(["shanghai", "pagat"]), default="shanghai", show_default=True)
@click.option("--rules", "rules_file", type=click.Path(path_type=Path), default=None,
              help="A YAML/JSON mapping of ruleset settings (preset plus overrides).")
@click.option("--deal", "deal_file", type=click.Path(path_type=Path), default=None,
              help="A deal file fixing card orders (docs/DEALS.md).")
@_time_options
@click.option("--strict", is_flag=True, help="A bot's first fault forfeits its seat (default: the third).")
@click.option("--log", "log_file", type=click.Path(path_type=Path), default=None,
              help="Write the match record (events, actions, faults; JSON) here.")
@click.option("--log-dir", type=click.Path(path_type=Path), default=Path("arena-logs"), show_default=True,
              help="Directory for the bot programs' stderr logs (one file per bot per match).")
@_SANDBOX_OPTION
@click.option("--anonymous", is_flag=True,
              help="Tell the bots no names: 'start' names the seats 'seat 0', 'seat 1', ... (docs/PROTOCOL.md).")
def play(bots: tuple[str, ...], players: int | None, seed: int | None, preset: str,
         rules_file: Path | None, deal_file: Path | None, startup: float, per_decision: float,
         time_bank: float | None, strict: bool, log_file: Path | None, log_dir: Path, sandbox_mode: str,
         anonymous: bool) -> None:
    """Play one match and print a hand-by-hand account and the final table.

    Each BOT is a built-in player (random, greedy, or passive, which always
    draws from the stock, never buys and discards its first card) or the
    command line of a bot program, quoted as one argument, e.g. "python3
    bots/greedy_bot.py" or ./mybot.  Seats are filled in the order given,
    repeating the list if there are more seats than BOTS.  Without BOTS the
    seats alternate greedy and random.  A bot program's seat is shown by the
    name it gives in 'ready' (with its command if another seat has that
    name).  -v shows every draw and discard.

    Exit status: 0 if every bot program kept its seat; 3 if a seat was
    forfeited (at the start, by a crash, or by its third fault, with
    --strict its first), with one error line per seat; 1 if the match could
    not be played; 2 on a usage mistake; 130 if interrupted (Ctrl-C).
    """
    problem = unquoted_problem(bots, BUILTIN_PLAYERS, "play")
    if problem is not None:
        raise UsageLine(problem)
    n = players or (len(bots) if len(bots) >= 2 else 4)
    given = list(bots) or ["greedy", "random"]
    seats = tuple(_seat(given[i % len(given)]) for i in range(n))
    settings = _ruleset(preset, rules_file, n)
    plan: dict[str, Any] | None = None
    if deal_file is not None:
        plan = _load_mapping(deal_file, "a deal file")
        if seed is None and isinstance(plan.get("seed"), int):
            seed = plan["seed"]
    if seed is None:    # large and unguessable: a bot that knew the seed would see every card
        seed = secrets.randbits(63)
    if any(s.is_bot for s in seats):
        seats = _bot_seats(seats, sandbox_mode, (deal_file, log_file), log_dir)
    spec = MatchSpec(
        # The match name is sent to the bots: it must not carry the seed.  It
        # names the stderr logs too: two plays started in one second must not
        # write into each other's, hence a random part.
        f"play-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}", seats, settings, seed=seed, deal=plan,
        time=_time_control(startup, per_decision, time_bank), faults=FaultPolicy(strict=strict),
        log_dir=str(log_dir), anonymous=anonymous)
    result = _play_match(spec)
    labels = seat_labels(seats, result.bot_names)
    _print_match(result, seats, labels, verbose=verbosity().verbose > 0)
    if log_file is not None:
        data = {"players": labels, **result.record, "places": list(result.places),
                "forfeited": list(result.forfeited), "faults": [asdict(f) for f in result.faults],
                "warnings": [asdict(w) for w in result.warnings],
                "stderr_logs": list(result.stderr_logs)}     # the replay viewer shows them per decision
        log_file.write_text(json.dumps(data) + "\n", encoding="utf-8")
        logsetup.status(f"match record written to {log_file}")
    lost = [f for f in result.faults if f.forfeit]
    for f in lost:
        click.echo(f"error: seat {f.seat} ({labels[f.seat]}) was forfeited {_where_lost(f)}", err=True)
    if lost:
        sys.exit(FORFEIT_STATUS)


# A grading script tells "the bot lost its seat" (3) from "arena could not
# play" (1, a one-line error) and a usage mistake (2).
FORFEIT_STATUS = 3


def _where_lost(fault: Fault) -> str:
    """Where and why a seat was lost, for the one ``error:`` line per forfeit."""
    if fault.decision is None:
        return f"at the start: {fault.detail}"
    # A crash forfeits at once, whatever came before it; the other faults add up.
    after = "" if fault.strike <= 1 or fault.kind == CRASH else f" after {fault.strike} faults"
    where = fault_place(fault.hand, fault.decision, fault.decision_kind, fault.request_id)
    return f"in {where}{after}: {fault.kind}: {fault.detail}"


def _ruleset(preset: str, rules_file: Path | None, players: int) -> dict[str, Any]:
    """The preset with the file's settings, checked (the shoe must deal this
    table size) before any bot starts: one line naming the file if not."""
    # lazy: the engine is ~15 % of import arena.cli's CPU time (measured), and only play checks a table size
    from ..shanghai.game import Game

    settings: dict[str, Any] = {"preset": preset}
    if rules_file is not None:
        settings.update(_load_mapping(rules_file, "a ruleset"))
    try:
        Game.seeded(Ruleset.from_mapping(settings), players, 0)
    except (ShanghaiError, TypeError, ValueError) as err:
        where = rules_file if rules_file is not None else f"preset {preset}"
        raise click.ClickException(f"{where}: {err}") from None
    return settings


def _bot_seats(seats: tuple[SeatSpec, ...], mode: str, hide: tuple[Path | None, ...],
               log_dir: Path) -> tuple[SeatSpec, ...]:
    """The seats with their bot programs checked, then confined, and the
    organiser warned of what the sandbox cannot hide (in that order: a
    mistyped name is told before any warning)."""
    _check_startable(seats)
    seats = _confine(seats, _sandbox_mode(mode), hide)
    _check_logs_hidden(seats, log_dir)
    _warn_shared_folders(seats)
    return seats


def _builtin_hint(argv: list[str]) -> str:
    """For a one-word command that is no file: what the built-in players are called."""
    if len(argv) == 1 and os.sep not in argv[0] and not os.path.isfile(argv[0]):
        return f" (built-in players are: {', '.join(BUILTIN_PLAYERS)})"
    return ""


def _check_startable(seats: tuple[SeatSpec, ...]) -> None:
    """Each bot program exists and can be run, before anything is printed:
    one line for the first that cannot, as starting it would say."""
    for seat in seats:
        if seat.bot is None:
            continue
        argv = list(seat.bot.argv)
        cwd = os.path.abspath(seat.bot.cwd) if seat.bot.cwd is not None else os.getcwd()
        problem = sandbox.preflight(argv, cwd, sandbox.bot_environment(os.environ, seat.bot.env))
        if problem is not None:
            raise click.ClickException(f"bot {seat.name!r}: cannot start {argv[0]!r}: "
                                       f"{sandbox.start_failure(argv, cwd, problem)}{_builtin_hint(argv)}")


def _play_match(spec: MatchSpec) -> MatchResult:
    from ..match.runner import run_match  # the engine, the codec, the process layer: only where played

    try:
        return run_match(spec)
    except BotStartupError as err:
        raise click.ClickException(f"{err}{_builtin_hint(list(err.argv))}") from None
    except (ShanghaiError, ValueError) as err:
        raise click.ClickException(str(err)) from None
    except KeyboardInterrupt as stop:
        raise Interrupted.by(stop, "the match was stopped, its bots with it") from None


def seat_labels(seats: tuple[SeatSpec, ...], given: tuple[str | None, ...]) -> list[str]:
    """What to call each seat on the screen: the name its bot gave in
    'ready' (bot text: control characters escaped), else the seat's own
    name.  Seats of different programs that share a name get their command
    after it, shortened where that still tells them apart; seats of one
    program share a name, and the seat number tells them apart."""
    given = (*given, *[None] * (len(seats) - len(given)))      # a match that stopped early named none
    base = [excerpt(g) if g else s.name for s, g in zip(seats, given)]
    labels = list(base)
    for name in {n for n in base if base.count(n) > 1}:
        group = [i for i, n in enumerate(base) if n == name]
        whole = {i: _program(seats[i], short=False) for i in group}
        if len(set(whole.values())) == 1:
            continue
        short = {i: _program(seats[i], short=True) for i in group}
        told = short if len(set(short.values())) == len(set(whole.values())) else whole
        for i in group:
            labels[i] = f"{name} ({excerpt(told[i])})"
    return labels


def _program(seat: SeatSpec, short: bool) -> str:
    if seat.bot is None:
        return "built-in"
    return seat.bot.display_name if short else shlex.join(seat.bot.argv)


def _print_match(result: MatchResult, seats: tuple[SeatSpec, ...], names: list[str], verbose: bool) -> None:
    """The account, the final table and, with bot programs, their faults and times (stdout)."""
    # lazy: tabulate is ~10 % of import arena.cli's CPU time (measured), and only play prints an account
    from ..account import final_table, render_account

    events = result.record["events"]
    for line in render_account(events, names, verbose=verbose):
        click.echo(line)
    click.echo("")
    labels = [f"{name} (forfeited)" if f else name for name, f in zip(names, result.forfeited)]
    click.echo(final_table(events, labels, places=result.places))
    if not any(s.is_bot for s in seats):
        return
    _print_faults(result, names)
    click.echo("\nBot programs:")
    for i, s in enumerate(seats):
        if not s.is_bot:
            continue
        st = result.stats[i]
        ignored = sum(w.count for w in result.warnings if w.seat == i)
        click.echo(f"  seat {i} ({names[i]}): {plural(st.count, 'decision')}, mean {_ms(st.mean)}, "
                   f"p95 {_ms(st.p95)}, max {_ms(st.max)}, {plural(st.timeouts, 'timeout')}, "
                   f"{plural(ignored, 'ignored line')}; stderr log: {_written(result.stderr_logs[i])}")
        cpu = result.off_turn_cpu[i] if i < len(result.off_turn_cpu) else None
        if cpu is not None:
            click.echo(f"    {off_turn_text(cpu)}: stopped between them since (no fault; docs/PROTOCOL.md, "
                       f"Time limits)" if cpu >= 0.0005 else f"    {off_turn_text(cpu)}")


def _written(log: str | None) -> str:
    """A bot's log as shown: it exists only if the bot wrote on stderr."""
    return log if log is not None and os.path.exists(log) else "none (nothing written)"


def _print_faults(result: MatchResult, names: list[str]) -> None:
    if not result.faults:
        click.echo("\nFaults: none")
    else:
        click.echo("\nFaults:")
        for f in result.faults:
            click.echo(f"  seat {f.seat} ({names[f.seat]}): {f.describe()}")
            if f.excerpt:
                click.echo(f"    line: {f.excerpt}")
    if result.warnings:
        click.echo("\nIgnored lines (not faults, but a bot that sends them is confused):")
        for w in result.warnings:
            click.echo(f"  seat {w.seat} ({names[w.seat]}): {w.describe()}")


class _CheckCommand(click.Command):
    """Notes how many arguments came after ``--`` (``arena check -- python3 mybot.py``)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta["arena.after_dashes"] = len(args) - args.index("--") - 1 if "--" in args else 0
        return super().parse_args(ctx, args)


@main.command(cls=_CheckCommand)
@click.argument("bot", nargs=-1, required=True)
@_time_options
@click.option("--log-dir", type=click.Path(path_type=Path), default=None,
              help="Keep the bot's stderr logs, one per step, in this directory (default: a "
                   "temporary one, removed when the check ends; the report quotes the end of the "
                   "log of each failed step either way).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object (for autograders).")
@_SANDBOX_OPTION
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="Check here, or on a node of a Ray cluster (the current directory is shipped there).")
@click.option("--address", default=None, help="The Ray cluster (host:port, ray://host:port, auto); implies ray.")
def check(bot: tuple[str, ...], startup: float, per_decision: float, time_bank: float | None,
          log_dir: Path | None, sandbox_mode: str, executor: str, address: str | None,
          as_json: bool = False) -> None:
    """Check that a bot program speaks the protocol and plays legally.

    BOT is the command line of the program, quoted as one argument, e.g.
    "python3 mybot.py", or given after --: arena check -- python3 mybot.py.
    Prints PASS/FAIL per step and scenario and exits with status 1 if any
    fails (130 if interrupted by Ctrl-C, 2 on a usage mistake).
    """
    # lazy: arena.cli must not load the match runner, the codec or the players (tests/test_lean_imports.py PLAYING)
    from ..check import check_bot

    seat = _check_seat(bot, click.get_current_context().meta.get("arena.after_dashes", 0))
    seat = _confine((seat,), _sandbox_mode(sandbox_mode))[0]
    assert seat.bot is not None
    time_control = _time_control(startup, per_decision, time_bank)
    if executor == "ray" or address is not None:
        # lazy: executors.ray loads the match runner and the codec (tests/test_lean_imports.py PLAYING)
        from ..tournament.executors.ray import WorkerError, check_on_ray
        try:
            report = check_on_ray(dataclasses.replace(seat.bot, cwd=os.getcwd()), address,
                                  time_control=time_control)
        except WorkerError as err:
            raise click.ClickException(str(err)) from None
    else:
        try:
            report = check_bot(seat.bot, time_control=time_control,
                               log_dir=str(log_dir) if log_dir is not None else None)
        except KeyboardInterrupt as stop:
            raise Interrupted.by(stop, "the check was stopped, the bot with it") from None
    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        for line in report.lines():
            click.echo(line)
    if not report.ok:
        sys.exit(1)


def _check_seat(words: tuple[str, ...], after_dashes: int) -> SeatSpec:
    """The seat of ``arena check``'s BOT: one quoted command, or the words after ``--``."""
    if len(words) > 1 and after_dashes < len(words):
        line = " ".join(words)
        raise UsageLine(f"{len(words)} arguments for one bot: quote its command as one argument, "
                               f'arena check "{line}", or give it after --, arena check -- {line}')
    try:
        argv = list(words) if len(words) > 1 else split_command(words[0])
    except BotCommandError as err:
        raise UsageLine(str(err)) from None
    if argv == [words[0]] and words[0] in BUILTIN_PLAYERS:
        raise UsageLine(f"{words[0]!r} is a built-in player; give the command line of a bot program")
    if len(argv) == 1 and unquoted_problem(argv, BUILTIN_PLAYERS, "check"):
        raise UsageLine(f"{argv[0]!r} on its own is an interpreter, not a bot: give the program it "
                               f'runs too, e.g. arena check "{argv[0]} mybot.py"')
    return SeatSpec.command(argv)


@main.command()
@click.argument("results")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Directory for the report (default: RESULTS/report).")
@click.option("--bot", default=None,
              help="Only this bot's diagnostics (written as bot-NAME.html), with the replays of its matches.")
@click.option("--replays/--no-replays", default=True, show_default=True,
              help="Write a replay viewer for every match (replays/MATCH.html), linked from the report.")
@click.option("--rating", type=click.Choice(["hands", "matches"]), default=None,
              help="Rate every hand or every match as one game (default: the tournament's 'rating').")
@click.option("--jobs", type=click.IntRange(min=1), default=None,
              help="Processes writing the replays (default: the usable CPUs).")
def report(results: str, out: Path | None, bot: str | None, replays: bool, rating: str | None,
           jobs: int | None) -> None:
    """Write an HTML report of RESULTS (one self-contained file, no network),
    a grade-book CSV and a replay viewer per match.

    For grading: RESULTS/report/gradebook.csv has one row per bot (rank,
    mean place, score per hand, faults by kind, forfeits and its first fault,
    where and why), and index.html a section per bot with each refused reply
    and crash, to send its author.
    """
    # lazy: the report's modules, jinja2 and msgspec (tests/test_lean_imports.py REPORTING)
    from ..report.build import ReportError, ReportUnwritable, write_report

    try:
        written = write_report(results, out, bot=bot, replays=replays, rating=rating, jobs=jobs,
                               progress=lambda line: click.echo(line, err=True))
    except ReportUnwritable as err:
        elsewhere = "another --out DIR" if out is not None else f"--out DIR: arena report {shlex.quote(results)} --out DIR"
        raise click.ClickException(f"{err}; write it elsewhere with {elsewhere}") from None
    except ReportError as err:
        raise click.ClickException(str(err)) from None
    playing = playing_note(results)
    if playing is not None:
        click.echo(playing, err=True)
    pages = [p for p in written if p.suffix == ".html" and p.parent.name != "replays"]
    shown = len(written) - len(pages) - 1
    click.echo(f"report: {pages[-1]}")
    click.echo(f"grade book: {next(p for p in written if p.suffix == '.csv')}")
    if replays:
        click.echo(f"replays: {shown} in {pages[-1].parent / 'replays'}")


# The tournament commands live with the tournament library (arena.tournament).
from .league import league  # noqa: E402
from .results import matches, show, verify  # noqa: E402
from .tournament import leaderboard, playing_note, run  # noqa: E402

for _command in (run, leaderboard, matches, show, verify, league):
    main.add_command(_command)
