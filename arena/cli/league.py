"""``arena league``: init, submit, token, status, run, serve (``arena.league``).

Every mistake of the user's (the league file, a folder handed in, a league
another run holds) is one line; ``run`` stopped by Ctrl-C or SIGTERM says
in one line what is kept.  The web page's packages (Starlette, uvicorn) are
imported by ``serve`` alone.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from ..botcommand import BotCommandError, split_command
from ..league.config import FILE_NAME, LeagueConfig, LeagueError, load_league, template
from ..league.register import REFUSED, Register
from ..league.tokens import set_token
from ..league.versions import check_waiting
from ..league.versions import submit as submit_version
from ..logsetup import status
from ..process.confine import sandbox
from ..tournament.config.model import EXECUTORS, LOCAL, RAY, ConfigError
from ..tournament.results.database import StoreError
from .common import Interrupted, common_options

__all__ = ["league"]


def _load(directory: Path) -> LeagueConfig:
    try:
        return load_league(directory)
    except (ConfigError, LeagueError) as err:
        raise click.ClickException(str(err)) from None


class _LeagueGroup(click.Group):
    """Each ``arena league`` command takes ``-q``, ``-v`` and ``--log-file`` as
    every arena command does (the ``arena`` group's signal handling covers them)."""

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        common_options(cmd)
        super().add_command(cmd, name)


@click.group(cls=_LeagueGroup)
def league() -> None:
    """A league: a competition that runs for weeks, with a live page (docs/LEAGUE.md)."""


@league.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
def init(directory: Path) -> None:
    """Make DIRECTORY a league: write its league.yaml (every key explained), to edit."""
    path = directory / FILE_NAME
    if path.exists():
        raise click.ClickException(f"{path} exists already; edit it, or init another folder")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        path.write_text(template(directory.resolve().name or "league"), encoding="utf-8")
    except OSError as exc:
        raise click.ClickException(f"{path}: cannot write: {exc.strerror or exc}") from None
    click.echo(f"wrote {path}: add the authors, then: arena league submit {directory} AUTHOR FOLDER")


@league.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.argument("author")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--command", "command", default=None,
              help="How this version is run, in its folder (default: the author's, or the league's, command).")
@click.option("--no-check", is_flag=True, help="Store it now; 'arena league run' checks it before it plays.")
def submit(directory: Path, author: str, path: Path, command: str | None, no_check: bool) -> None:
    """Hand in PATH (a folder, or one file) as AUTHOR's next version: copied into the league's store,
    then checked (arena check's scenarios); a version that fails is refused, with the reasons."""
    config = _load(directory)
    try:
        argv = tuple(split_command(command)) if command is not None else None
        version = submit_version(config, author, path, argv)
    except BotCommandError as err:
        raise click.UsageError(f"--command: {err}") from None
    except LeagueError as err:
        raise click.ClickException(str(err)) from None
    status(f"stored {path} as {version.name} ({version.digest and version.digest[:12]}, "
           f"run as {shlex.join(version.command or ())})")
    if no_check:
        return
    try:
        with Register(config.dir) as register:
            done = check_waiting(config, register, sandbox.resolve(config.sandbox).mode, status)
    except (LeagueError, sandbox.SandboxUnavailable) as err:
        raise click.ClickException(str(err)) from None
    refused = [v for v in done if v.name == version.name and v.status == REFUSED]
    if refused:
        _reasons(refused[0].reasons)
        raise click.ClickException(f"{version.name} is refused: it never plays; fix it and submit again "
                                   f"(arena check \"{shlex.join(version.command or ())}\" in {path} shows every step)")


SHOWN_REASONS = 5


def _reasons(reasons: tuple[str, ...], indent: str = "  ") -> None:
    """The first few steps a version failed, on stderr (every one: arena check)."""
    for reason in reasons[:SHOWN_REASONS]:
        click.echo(f"{indent}{reason}", err=True)
    if len(reasons) > SHOWN_REASONS:
        click.echo(f"{indent}and {len(reasons) - SHOWN_REASONS} more step(s)", err=True)


@league.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.argument("author")
def token(directory: Path, author: str) -> None:
    """Make AUTHOR a new token for handing in versions over HTTP (submissions: http: true): printed once,
    here; the league file keeps only its hash, under the author (an earlier token stops working)."""
    config = _load(directory)
    try:
        made = set_token(config, author)
    except (ConfigError, LeagueError) as err:
        raise click.ClickException(str(err)) from None
    except OSError as exc:
        raise click.ClickException(f"{config.path}: cannot write: {exc.strerror or exc}") from None
    click.echo(made)
    status(f"{author}'s token: give it to them alone; {config.path} keeps only its hash"
           + ("" if config.submissions.http else " (submissions: http is false: turn it on to take versions)"))


@league.command(name="status")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
def status_command(directory: Path) -> None:
    """Every version: its status (submitted, refused, playing, retired) and why one was refused."""
    config = _load(directory)
    try:
        with Register(config.dir) as register:
            versions = register.versions()
    except LeagueError as err:
        raise click.ClickException(str(err)) from None
    for v in versions:
        click.echo(f"{v.name:24} {v.status:9} submitted {v.submitted_at}")
        _reasons(v.reasons, " " * 27)


@league.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("-j", "--jobs", type=click.IntRange(1), default=None, help="Matches in parallel (default: the file's).")
@click.option("--max-matches", type=click.IntRange(1), default=None,
              help="Stop after this many matches (default: play until stopped).")
@click.option("--idle-exit", is_flag=True, help="Stop when nothing can be played instead of waiting for versions.")
@click.option("--serve", "serve_port", type=click.IntRange(1, 65535), default=None, metavar="PORT",
              help="Also serve the live page (as arena league serve) on PORT while the run plays; it stops with "
                   "the run.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="With --serve: the address to listen on (behind a reverse proxy: keep 127.0.0.1).")
@click.option("--executor", type=click.Choice(EXECUTORS), default=None,
              help="Where matches run: local worker processes (the default), or a Ray cluster (the league's folder "
                   "at the same path on every node).")
@click.option("--address", default=None,
              help="The Ray cluster to join (host:port, ray://host:port, auto); implies --executor ray.")
def run(directory: Path, jobs: int | None, max_matches: int | None, idle_exit: bool, serve_port: int | None,
        host: str, executor: str | None, address: str | None) -> None:
    """Play the league: check the versions handed in, place the new ones, and play on until stopped
    (Ctrl-C; the same command resumes).  --serve PORT serves its live page meanwhile."""
    # lazy: playing loads the executors and the match code, which init, submit and serve do not
    from ..league.run import run_league

    config = _load(directory)
    ray = _ray_address(executor, address)
    try:
        done = run_league(config, jobs, max_matches, status, idle_exit,
                          None if serve_port is None else (host, serve_port), ray)
    except KeyboardInterrupt as stop:
        page = "; the page is no longer served" if serve_port is not None else ""
        raise Interrupted.by(stop, f"every finished match is stored in {config.results}; "
                                   f"arena league run {directory} goes on{page}") from None
    except (LeagueError, StoreError, ConfigError) as err:
        raise click.ClickException(str(err)) from None
    status(f"played {done.played} match(es) on {done.tables} new table(s); {done.failed} failed")


def _ray_address(executor: str | None, address: str | None) -> str | None:
    """None: the local executor; else Ray's address ("": RAY_ADDRESS, or a Ray of the run's own),
    a cluster that cannot be joined from here one line before anything is played."""
    if executor == LOCAL and address is not None:
        raise click.UsageError("--address is for the ray executor (--executor ray), not the local one")
    if executor != RAY and address is None:
        return None
    # lazy: a Ray run's alone (ctypes, signals), as arena run's
    from ..tournament.executors.local import WorkerError
    from ..tournament.executors.rayjoin import check_address  # lazy: as the line above

    try:
        check_address(address)
    except WorkerError as err:
        raise click.ClickException(str(err)) from None
    return address or ""


@league.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on (behind a reverse proxy: keep 127.0.0.1).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
def serve(directory: Path, host: str, port: int) -> None:
    """Serve the league's live page: the leaderboard, each author's versions, recent matches with their
    replays, and the league's health; it updates itself as matches are stored.  Read-only, unless the
    league file takes versions over HTTP (submissions: http: true; docs/LEAGUE.md)."""
    config = _load(directory)
    try:
        # lazy: the web stack (Starlette, uvicorn) loads for this command alone (tests/test_lean_imports.py)
        from ..league.web.serve import serve as serve_page
    except ImportError as err:
        raise click.ClickException(f"arena league serve needs the league extra: pip install 'arena[league]' "
                                   f"({err})") from None
    try:
        serve_page(config, host, port)
    except KeyboardInterrupt as stop:
        raise Interrupted.by(stop, "the page is no longer served; the league's files are as they were") from None


@league.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.argument("out", type=click.Path(path_type=Path))
def export(directory: Path, out: Path) -> None:
    """Write the league's results as they are now into OUT, a tournament's results folder, frozen:
    arena leaderboard, report and verify read it; a run may go on meanwhile."""
    # lazy: as run's, export's modules are for this command alone
    from ..league.export import GUESSABLE_BITS, export_league

    config = _load(directory)
    try:
        done = export_league(config, out)
    except LeagueError as err:
        raise click.ClickException(str(err)) from None
    status(f"exported {done.matches} match(es) ({done.failed} failed, {done.logs} stderr log(s)) to {done.db}; "
           f"arena leaderboard {out}, arena report {out}, arena verify {out}")
    if done.guessable:
        click.echo(f"Warning: {config.path}: seed: it is small (under 2^{GUESSABLE_BITS + 1}), so anyone with "
                   f"this export can find it by trying every seed, and with it the deals of the tables to come; "
                   f"publish the export when the league ends, or start a public league with the key arena "
                   f"league init draws", err=True)
