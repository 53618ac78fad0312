"""The ``arena`` command line: a thin click layer over the library.

Library errors become one-line ``ClickException``s; nothing here knows the
rules beyond calling the engine.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import click
import yaml

from . import __version__
from .account import final_table, render_account
from .players import play_match
from .players.registry import BUILTIN_PLAYERS, make_player
from .shanghai.errors import ShanghaiError
from .shanghai.game import Game
from .shanghai.ruleset import Ruleset


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="arena")
def main() -> None:
    """arena: run Shanghai Rummy bot tournaments."""


def _load_mapping(path: Path, what: str) -> dict[str, Any]:
    """Read a JSON or YAML mapping; one-line errors that name the file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise click.ClickException(f"{path}: cannot read {what}: {err.strerror}") from None
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except json.JSONDecodeError as err:
        raise click.ClickException(f"{path}:{err.lineno}: not valid JSON: {err.msg}") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise click.ClickException(f"{where}: not valid YAML: {getattr(err, 'problem', err)}") from None
    if not isinstance(data, dict):
        raise click.ClickException(f"{path}: {what} must be a mapping")
    return data


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
@click.option("--log", "log_file", type=click.Path(path_type=Path), default=None,
              help="Write the match record (events and actions, JSON) here.")
@click.option("--verbose", "-v", is_flag=True, help="Show every draw and discard too.")
def play(bots: tuple[str, ...], players: int | None, seed: int | None, preset: str,
         rules_file: Path | None, deal_file: Path | None, log_file: Path | None, verbose: bool) -> None:
    """Play one match and print a hand-by-hand account and the final table.

    BOTS are player names (built in: random, greedy); seats are filled in the
    order given, repeating the list if there are more seats than names.
    Without BOTS the seats alternate greedy and random.
    """
    for b in bots:
        if b not in BUILTIN_PLAYERS:
            raise click.ClickException(f"unknown player {b!r}; built-in players are: {', '.join(BUILTIN_PLAYERS)}")
    n = players or (len(bots) if len(bots) >= 2 else 4)
    names_cycle = list(bots) or ["greedy", "random"]
    names = [names_cycle[i % len(names_cycle)] for i in range(n)]
    plan: dict[str, Any] | None = None
    if deal_file is not None:
        plan = _load_mapping(deal_file, "a deal file")
        if seed is None and isinstance(plan.get("seed"), int):
            seed = plan["seed"]
    if seed is None:
        seed = random.SystemRandom().randrange(1_000_000)
    settings: dict[str, Any] = {"preset": preset}
    if rules_file is not None:
        settings.update(_load_mapping(rules_file, "a ruleset"))
    try:
        rules = Ruleset.from_mapping(settings)
        game = Game.seeded(rules, n, seed, plan)
        seats = [make_player(name, random.Random(f"{seed}/{i}")) for i, name in enumerate(names)]
        play_match(game, seats)
    except ShanghaiError as err:
        raise click.ClickException(str(err)) from None
    record = game.to_record()
    labels = [f"{name}" for name in names]
    for line in render_account(record["events"], labels, verbose=verbose):
        click.echo(line)
    click.echo("")
    click.echo(final_table(record["events"], labels))
    if log_file is not None:
        log_file.write_text(json.dumps({"players": names, **record}) + "\n", encoding="utf-8")
        click.echo(f"\nmatch record written to {log_file}")
