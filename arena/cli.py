"""The ``arena`` command line: a thin click layer over the library.

Library errors become one-line ``ClickException``s; nothing here knows the
rules beyond calling the engine.  What only one command needs (tabulate for
a match account, the conformance checker) is imported by that command, so
``arena run`` carries none of it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import shlex
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from . import __version__
from .match import FaultPolicy, MatchResult, MatchSpec, SeatSpec, run_match
from .players.registry import BUILTIN_PLAYERS
from .process import BotStartupError, TimeControl, sandbox
from .shanghai.errors import ShanghaiError
from .tournament.bounded import load_data
from .tournament.config import ConfigError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
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
        click.echo(containment.warning, err=True)
    return containment.mode


def _confine(seats: tuple[SeatSpec, ...], mode: str, hide: tuple[Path | None, ...] = ()) -> tuple[SeatSpec, ...]:
    """Each bot program in ``mode``, not seeing the other programs' directories
    nor the ``hide`` files (a deal file holds the cards to come)."""
    places = {i: sandbox.bot_places(s.bot.argv, os.fspath(s.bot.cwd) if s.bot.cwd else None)
              for i, s in enumerate(seats) if s.bot is not None}
    out = []
    for i, seat in enumerate(seats):
        if seat.bot is None:
            out.append(seat)
            continue
        hidden = [p for j, found in places.items() if j != i for p in found]
        hidden += [os.path.abspath(p) for p in hide if p is not None]
        policy = seat.bot.sandbox.replace(mode=mode, hide=tuple(hidden))
        out.append(SeatSpec(seat.name, bot=dataclasses.replace(seat.bot, sandbox=policy)))
    return tuple(out)


_SANDBOX_OPTION = click.option(
    "--sandbox", "sandbox_mode", type=click.Choice(sandbox.MODES), default=sandbox.AUTO,
    show_default=True,
    help="Confine bot programs with bubblewrap: auto (where it works, else warn), bwrap (or fail), none.")


def _seat(arg: str) -> SeatSpec:
    """A built-in player name, or a command line (shlex-split) for a bot program."""
    if arg in BUILTIN_PLAYERS:
        return SeatSpec.builtin(arg)
    try:
        argv = shlex.split(arg)
    except ValueError as err:
        raise click.ClickException(f"cannot read the bot command {arg!r}: {err}") from None
    if not argv:
        raise click.ClickException("an empty bot command was given")
    return SeatSpec.command(argv)


def _time_control(time_per_move: float) -> TimeControl:
    try:
        return TimeControl(per_decision_seconds=time_per_move)
    except ValueError as err:
        raise click.ClickException(str(err)) from None


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.1f} ms"


@main.command()
@click.argument("bots", nargs=-1)
@click.option("--players", "-n", type=click.IntRange(2, 8), default=None,
              help="Seats at the table (default: the number of BOTS, or 4).")
@click.option("--seed", type=int, default=None, help="Seed of the shuffles (default: random; printed).")
@click.option("--preset", type=click.Choice(["shanghai", "pagat"]), default="shanghai", show_default=True)
@click.option("--rules", "rules_file", type=click.Path(path_type=Path), default=None,
              help="A YAML/JSON mapping of ruleset settings (preset plus overrides).")
@click.option("--deal", "deal_file", type=click.Path(path_type=Path), default=None,
              help="A deal file fixing card orders (docs/DEALS.md).")
@click.option("--time-per-move", type=float, default=1.0, show_default=True,
              help="Seconds a bot program has for each decision.")
@click.option("--strict", is_flag=True, help="A bot's first fault forfeits its seat (default: the third).")
@click.option("--log", "log_file", type=click.Path(path_type=Path), default=None,
              help="Write the match record (events, actions, faults; JSON) here.")
@click.option("--log-dir", type=click.Path(path_type=Path), default=Path("arena-logs"), show_default=True,
              help="Directory for the bot programs' stderr logs (one file per bot per match).")
@click.option("--verbose", "-v", is_flag=True, help="Show every draw and discard too.")
@_SANDBOX_OPTION
def play(bots: tuple[str, ...], players: int | None, seed: int | None, preset: str,
         rules_file: Path | None, deal_file: Path | None, time_per_move: float, strict: bool,
         log_file: Path | None, log_dir: Path, verbose: bool, sandbox_mode: str) -> None:
    """Play one match and print a hand-by-hand account and the final table.

    Each BOT is a built-in player (random, greedy, passive) or the command
    line of a bot program, quoted as one argument, e.g. "python3
    bots/greedy_bot.py" or ./mybot.  Seats are filled in the order given,
    repeating the list if there are more seats than BOTS.  Without BOTS the
    seats alternate greedy and random.
    """
    from .account import final_table, render_account

    n = players or (len(bots) if len(bots) >= 2 else 4)
    given = list(bots) or ["greedy", "random"]
    seats = tuple(_seat(given[i % len(given)]) for i in range(n))
    if any(s.is_bot for s in seats):
        seats = _confine(seats, _sandbox_mode(sandbox_mode), (deal_file, log_file))
    plan: dict[str, Any] | None = None
    if deal_file is not None:
        plan = _load_mapping(deal_file, "a deal file")
        if seed is None and isinstance(plan.get("seed"), int):
            seed = plan["seed"]
    if seed is None:    # large and unguessable: a bot that knew the seed would see every card
        seed = secrets.randbits(63)
    settings: dict[str, Any] = {"preset": preset}
    if rules_file is not None:
        settings.update(_load_mapping(rules_file, "a ruleset"))
    spec = MatchSpec(
        # The match name is sent to the bots: it must not carry the seed.
        f"play-{time.strftime('%Y%m%d-%H%M%S')}", seats, settings, seed=seed, deal=plan,
        time=_time_control(time_per_move), faults=FaultPolicy(strict=strict), log_dir=str(log_dir))
    try:
        result = run_match(spec)
    except BotStartupError as err:
        hint = ""
        if len(err.argv) == 1 and os.sep not in err.argv[0]:
            hint = f" (built-in players are: {', '.join(BUILTIN_PLAYERS)})"
        raise click.ClickException(f"{err}{hint}") from None
    except (ShanghaiError, ValueError) as err:
        raise click.ClickException(str(err)) from None
    events = result.record["events"]
    names = list(result.names)
    for line in render_account(events, names, verbose=verbose):
        click.echo(line)
    click.echo("")
    labels = [f"{name} (forfeited)" if f else name for name, f in zip(names, result.forfeited)]
    click.echo(final_table(events, labels, places=result.places))
    if any(s.is_bot for s in seats):
        _print_faults(result)
        click.echo("\nBot programs:")
        for i, s in enumerate(seats):
            if not s.is_bot:
                continue
            st = result.stats[i]
            click.echo(f"  seat {i} ({names[i]}): {st.count} decisions, mean {_ms(st.mean)}, "
                       f"p95 {_ms(st.p95)}, max {_ms(st.max)}, {st.timeouts} timeouts; "
                       f"stderr log: {result.stderr_logs[i]}")
    if log_file is not None:
        data = {"players": names, **result.record, "places": list(result.places),
                "forfeited": list(result.forfeited), "faults": [asdict(f) for f in result.faults]}
        log_file.write_text(json.dumps(data) + "\n", encoding="utf-8")
        click.echo(f"\nmatch record written to {log_file}")


def _print_faults(result: MatchResult) -> None:
    if not result.faults:
        click.echo("\nFaults: none")
        return
    click.echo("\nFaults:")
    for f in result.faults:
        click.echo(f"  seat {f.seat} ({result.names[f.seat]}): {f.describe()}")
        if f.excerpt:
            click.echo(f"    line: {f.excerpt}")


@main.command()
@click.argument("bot")
@click.option("--time-per-move", type=float, default=1.0, show_default=True,
              help="Seconds the bot has for each decision.")
@click.option("--log-dir", type=click.Path(path_type=Path), default=None,
              help="Directory for the bot's stderr logs (default: a new temporary directory).")
@_SANDBOX_OPTION
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="Check here, or on a node of a Ray cluster (the current directory is shipped there).")
@click.option("--address", default=None, help="The Ray cluster (host:port, ray://host:port, auto); implies ray.")
def check(bot: str, time_per_move: float, log_dir: Path | None, sandbox_mode: str, executor: str,
          address: str | None) -> None:
    """Check that a bot program speaks the protocol and plays legally.

    BOT is the command line of the program, quoted as one argument, e.g.
    "python3 mybot.py".  Prints PASS/FAIL per step and exits with status 1
    if any step fails.
    """
    from .check import check_bot

    seat = _seat(bot)
    if seat.bot is None:
        raise click.ClickException(f"{bot!r} is a built-in player; give the command line of a bot program")
    seat = _confine((seat,), _sandbox_mode(sandbox_mode))[0]
    assert seat.bot is not None
    if executor == "ray" or address is not None:
        from .tournament.executors.ray import WorkerError, check_on_ray
        try:
            report = check_on_ray(dataclasses.replace(seat.bot, cwd=os.getcwd()), address,
                                  time_control=_time_control(time_per_move))
        except WorkerError as err:
            raise click.ClickException(str(err)) from None
    else:
        report = check_bot(seat.bot, time_control=_time_control(time_per_move),
                           log_dir=str(log_dir) if log_dir is not None else None)
    for line in report.lines():
        click.echo(line)
    if not report.ok:
        sys.exit(1)


# The tournament commands live with the tournament library (arena.tournament).
from .tournament.commands import leaderboard, matches, run, show  # noqa: E402

for _command in (run, leaderboard, matches, show):
    main.add_command(_command)
