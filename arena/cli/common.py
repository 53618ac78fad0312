"""What every ``arena`` command shares: the group that gives each command
``-q``, ``-v`` and ``--log-file`` (and sets up logging from them, once,
before the command runs), the one-line usage error, and what a Ctrl-C or a
SIGTERM ends with: one line and exit status 130 or 143, whichever command
it stopped.

A SIGTERM (``kill``, systemd, a CI job's timeout) is a Ctrl-C: it raises
``Terminated``, a ``KeyboardInterrupt``, where a Ctrl-C would raise one, so
the same clean-up runs (workers and bots stopped, every stored result kept).
Only the first of the two signals interrupts: a second Ctrl-C, or a SIGTERM
after one, is ignored while the command cleans up and exits, as in a
worker (``tournament.worker``); raised in the middle of the clean-up it
would cut it short, leave a bot running or print a traceback.

A command added to the group by any module, now or later, gets the options:
``ArenaGroup.add_command`` adds them.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import click

from .. import logsetup

__all__ = ["INTERRUPTED_STATUS", "PIPE_CLOSED_STATUS", "TERMINATED_STATUS", "ArenaGroup", "Interrupted",
           "Terminated", "TerminatedLine", "UsageLine", "common_options", "stop_signals", "verbosity"]

# 128 + SIGINT / SIGTERM: what a shell reports for a command the signal
# stopped, so a script tells "interrupted" from "failed" (1) and a usage mistake (2).
INTERRUPTED_STATUS = 128 + signal.SIGINT
TERMINATED_STATUS = 128 + signal.SIGTERM
PIPE_CLOSED_STATUS = 128 + signal.SIGPIPE
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Terminated(KeyboardInterrupt):
    """A SIGTERM, raised as a Ctrl-C is: every ``except KeyboardInterrupt``
    clean-up runs for it too."""


# The stop signal that came (within ``stop_signals``): a library may catch
# the ``Terminated`` it raised and raise a plain KeyboardInterrupt instead
# (Ray's core, when the signal lands while it waits in C++: a SIGTERM to a
# Ray run then read as a Ctrl-C, "interrupted" and 130, under load).
_RECEIVED: list[int] = []


def _stop(signum: int, frame: FrameType | None) -> None:
    _RECEIVED.append(signum)
    for s in STOP_SIGNALS:
        if signal.getsignal(s) is _stop:
            signal.signal(s, _ignore)
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


def _ignore(signum: int, frame: FrameType | None) -> None:
    # A Python no-op rather than SIG_IGN: children exec'd while the command
    # cleans up do not inherit it, and a signal caught but not yet handled
    # raises no "ignored due to race condition".
    pass


@contextmanager
def stop_signals() -> Iterator[None]:
    """Within: the first SIGINT or SIGTERM raises (KeyboardInterrupt or
    ``Terminated``), any later one is ignored.  On leaving, the handlers that
    were there are put back, unless a signal came: the command is ending,
    and a Ctrl-C while it prints its last line must not become click's
    "Aborted!".  Signals ignored when the command started stay ignored
    (``nohup``, a background job); outside the main thread nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    _RECEIVED.clear()
    for s, handler in before.items():
        if handler != signal.SIG_IGN:
            signal.signal(s, _stop)
    try:
        yield
    finally:
        for s, handler in before.items():
            if handler is not None and signal.getsignal(s) is _stop:   # no signal came
                signal.signal(s, handler)
            elif signal.getsignal(s) is _ignore:
                # The command is ending: no child is started from here on.
                # The interpreter's shutdown puts back the default action of
                # a signal with a Python handler (a late SIGTERM would then
                # end the process by the signal, not with 143), never SIG_IGN's.
                signal.signal(s, signal.SIG_IGN)


class UsageLine(click.ClickException):
    """A usage mistake, told in one line (click's UsageError adds the usage
    text above it); exit status 2 like click's."""

    exit_code = 2


class Interrupted(click.ClickException):
    """A Ctrl-C (SIGINT) or a SIGTERM stopped the command, after its clean-up
    (bots stopped, temporary files removed) has run: one line, exit status
    130 (143 for SIGTERM)."""

    exit_code = INTERRUPTED_STATUS
    terminated = False

    def __init__(self, message: str = "interrupted") -> None:
        super().__init__(message)

    @staticmethod
    def by(stop: KeyboardInterrupt, what: str = "") -> Interrupted:
        """The line for ``stop``: "interrupted: WHAT" for a Ctrl-C,
        "terminated (SIGTERM): WHAT" (exit status 143) for a ``Terminated``,
        or for any KeyboardInterrupt once the stop signal that came was a
        SIGTERM (``_RECEIVED``)."""
        if isinstance(stop, Terminated) or _RECEIVED[:1] == [signal.SIGTERM]:
            return TerminatedLine(f"terminated (SIGTERM): {what}" if what else "terminated (SIGTERM)")
        return Interrupted(f"interrupted: {what}" if what else "interrupted")

    def show(self, file: Any = None) -> None:
        if sys.stderr.isatty() and not self.terminated:
            click.echo(err=True)     # past the terminal's "^C"
        super().show(file)


class TerminatedLine(Interrupted):
    """``Interrupted`` by a SIGTERM: exit status 143."""

    exit_code = TERMINATED_STATUS
    terminated = True

    def __init__(self, message: str = "terminated (SIGTERM)") -> None:
        super().__init__(message)


class ArenaGroup(click.Group):
    """The ``arena`` group: every command added to it, here or by another
    module, takes ``-q``, ``-v`` and ``--log-file`` (``common_options``), and
    a Ctrl-C or a SIGTERM ends any of them as ``Interrupted`` (click's own
    handling would say "Aborted!" and exit 1, the status of a command that
    failed; a SIGTERM would end Python with no clean-up at all)."""

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        common_options(cmd)
        super().add_command(cmd, name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            with stop_signals():
                return super().invoke(ctx)
        except KeyboardInterrupt as stop:
            # The command's own clean-up ran as the exception unwound it.
            raise Interrupted.by(stop) from None
        except BrokenPipeError:
            # Whoever read the output went away (`arena check ... | head`).
            # Click would exit 1, which says a step or a match failed; exit
            # as a shell reports a program a SIGPIPE ended, writing nothing
            # more (the interpreter's last flush goes to /dev/null).
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
            raise click.exceptions.Exit(PIPE_CLOSED_STATUS) from None


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


def off_turn_text(cpu: float) -> str:
    """What a seat's bot did between its turns in a match where it was
    caught at it: the CPU it used, or, at 0 (shown to the ms), that a kept
    process caught in an earlier match was stopped between its turns
    throughout this one ("used 0.000 s" would say nothing)."""
    if cpu >= 0.0005:
        return f"used {cpu:.3f} s of CPU between its turns (measured)"
    return "stopped between its turns throughout (its process was caught using CPU between them before this match)"
