"""What every ``arena`` command shares: the group that gives each command
``-q``, ``-v`` and ``--log-file`` (and sets up logging from them, once,
before the command runs), the one-line usage error, and what a Ctrl-C ends
with: one line and exit status 130, whichever command it stopped.

A command added to the group by any module, now or later, gets the options:
``ArenaGroup.add_command`` adds them.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from . import logsetup

__all__ = ["INTERRUPTED_STATUS", "ArenaGroup", "Interrupted", "UsageLine", "common_options", "verbosity"]

# 128 + SIGINT: what a shell reports for a command a Ctrl-C stopped, so a
# script tells "interrupted" from "failed" (1) and a usage mistake (2).
INTERRUPTED_STATUS = 130


class UsageLine(click.ClickException):
    """A usage mistake, told in one line (click's UsageError adds the usage
    text above it); exit status 2 like click's."""

    exit_code = 2


class Interrupted(click.ClickException):
    """A Ctrl-C (SIGINT) stopped the command, after its clean-up (bots
    stopped, temporary files removed) has run: one line, exit status 130."""

    exit_code = INTERRUPTED_STATUS

    def __init__(self, message: str = "interrupted") -> None:
        super().__init__(message)

    def show(self, file: Any = None) -> None:
        if sys.stderr.isatty():
            click.echo(err=True)     # past the terminal's "^C"
        super().show(file)


class ArenaGroup(click.Group):
    """The ``arena`` group: every command added to it, here or by another
    module, takes ``-q``, ``-v`` and ``--log-file`` (``common_options``), and
    a Ctrl-C ends any of them as ``Interrupted`` (click's own handling would
    say "Aborted!" and exit 1, the status of a command that failed)."""

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        common_options(cmd)
        super().add_command(cmd, name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            # The command's own clean-up ran as the exception unwound it.
            raise Interrupted() from None


_META = "arena.verbosity"


def _remember(key: str) -> Callable[[click.Context, click.Parameter, Any], None]:
    def store(ctx: click.Context, param: click.Parameter, value: Any) -> None:
        ctx.meta.setdefault(_META, {})[key] = value
    return store


def common_options(cmd: click.Command) -> click.Command:
    """Give ``cmd`` the options every command has (``-q``, ``-v``, ``--log-file``)
    and set up logging from them, once, before its callback runs."""
    if any(p.name == "arena_quiet" for p in cmd.params):
        return cmd
    cmd.params += [
        click.Option(["-q", "--quiet", "arena_quiet"], is_flag=True, expose_value=False,
                     callback=_remember("quiet"), help="Errors only: no status lines, no warnings."),
        click.Option(["-v", "--verbose", "arena_verbose"], count=True, expose_value=False,
                     callback=_remember("verbose"),
                     help="More detail: -v adds bots' faults and ignored lines (and every draw and "
                          "discard of an account), -vv every protocol line."),
        click.Option(["--log-file", "arena_log_file"], type=click.Path(dir_okay=False, path_type=Path),
                     expose_value=False, callback=_remember("log_file"),
                     help="Append the log here (information; with -vv everything), from worker "
                          "processes too."),
    ]
    callback = cmd.callback
    if callback is not None:
        @functools.wraps(callback)
        def with_logging(*args: Any, **kwargs: Any) -> Any:
            _set_up_logging(verbosity())
            try:
                return callback(*args, **kwargs)
            finally:
                logsetup.reset()
        cmd.callback = with_logging
    return cmd


def verbosity() -> logsetup.Verbosity:
    """What this command's ``-q``, ``-v`` and ``--log-file`` say."""
    ctx = click.get_current_context(silent=True)
    given = {} if ctx is None else ctx.meta.get(_META, {})
    return logsetup.Verbosity(quiet=bool(given.get("quiet")), verbose=int(given.get("verbose") or 0),
                            log_file=given.get("log_file"))


def _set_up_logging(v: logsetup.Verbosity) -> None:
    try:
        logsetup.configure(v)
    except OSError as err:
        logsetup.reset()
        raise click.ClickException(f"--log-file {v.log_file}: cannot write: {err.strerror or err}") from None
    logsetup.set_quiet(v.quiet)


