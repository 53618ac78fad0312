"""Logging and status output of the command line, set up once per command.

Every ``arena`` command takes ``-q``, ``-v`` (``-vv``) and ``--log-file``
(``common_options`` adds them to each command the CLI group holds, so a
command added later gets them too).  They set up the ``arena`` logger once,
before the command runs:

- the console (stderr) shows warnings; ``-v`` adds information (a bot's
  faults and the lines it sent that were ignored), ``-vv`` every protocol
  line; ``-q`` shows errors only and silences status lines;
- a bot's ignored lines are logged as information, not warnings: the match
  record keeps them (``arena show``) and ``arena run`` counts them in its
  fault summary, so they never break into the progress line;
- ``--log-file`` receives information (``-vv``: everything) from the
  arena and from its worker processes, which find the settings in the
  environment (``ARENA_LOG_LEVEL``, ``ARENA_LOG_FILE``; bots never see them:
  their environment is filtered, see ``arena.process.confine.sandbox``).

Status lines (what a command is doing, as opposed to its result) go to
stderr through :func:`status`, so stdout holds only the result and stays
parseable (``--format json | jq``).  Stdlib only: worker processes import
this module and nothing of the CLI.
"""

from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

LOGGER = "arena"
ENV_LEVEL = "ARENA_LOG_LEVEL"
ENV_FILE = "ARENA_LOG_FILE"
FILE_FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"

_HANDLERS: list[logging.Handler] = []   # those set up here, removed when set up again
_DIVERTED: dict[str, list[logging.Handler]] = {}    # a library's logger: the handlers it had (``divert``)
_SAVED: dict[str, Any] = {}             # what ``reset`` restores


@dataclass(frozen=True)
class Verbosity:
    """What ``-q``, ``-v`` and ``--log-file`` asked for."""

    quiet: bool = False
    verbose: int = 0
    log_file: Path | None = None

    @property
    def console_level(self) -> int:
        if self.quiet:
            return logging.ERROR
        return {0: logging.WARNING, 1: logging.INFO}.get(self.verbose, logging.DEBUG)

    @property
    def file_level(self) -> int:
        return logging.DEBUG if self.verbose >= 2 else logging.INFO


class ConsoleHandler(logging.StreamHandler):
    """One line per record, ``warning: ...``, on stderr.  On a terminal the
    line first clears the live progress line (which the next update redraws),
    so a message never lands inside it."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        super().__init__(stream if stream is not None else sys.stderr)
        self._follow = stream is None
        self.setFormatter(logging.Formatter("%(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        if self._follow:    # the stderr of now (a test runner swaps it per command)
            self.stream = sys.stderr
        super().emit(record)

    def format(self, record: logging.LogRecord) -> str:
        text = " ".join(super().format(record).splitlines()) if record.levelno < logging.ERROR \
            else super().format(record)
        level = record.levelname.lower()
        prefix = f"{level}: " if record.levelno >= logging.WARNING and not text.startswith(f"{level}:") else ""
        clear = "\r\x1b[K" if _isatty(self.stream) else ""
        return f"{clear}{prefix}{text}"


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def configure(verbosity: Verbosity, stream: IO[str] | None = None, *, export: bool = True) -> None:
    """Set up the ``arena`` logger for this process (again: replacing what
    an earlier call set up); ``export`` passes the file and level on to
    worker processes started from now on."""
    logger = logging.getLogger(LOGGER)
    for handler in _HANDLERS:
        logger.removeHandler(handler)
        handler.close()
    _HANDLERS.clear()
    console = ConsoleHandler(stream)
    console.setLevel(verbosity.console_level)
    _HANDLERS.append(console)
    level = verbosity.console_level
    if verbosity.log_file is not None:
        handler = logging.FileHandler(verbosity.log_file, encoding="utf-8")
        handler.setLevel(verbosity.file_level)
        handler.setFormatter(logging.Formatter(FILE_FORMAT))
        _HANDLERS.append(handler)
        level = min(level, verbosity.file_level)
    for handler in _HANDLERS:
        logger.addHandler(handler)
    _SAVED.setdefault("level", logger.level)
    logger.setLevel(level)
    if export:
        for key in (ENV_LEVEL, ENV_FILE):
            _SAVED.setdefault(key, os.environ.get(key))
        os.environ[ENV_LEVEL] = str(verbosity.verbose if not verbosity.quiet else -1)
        if verbosity.log_file is not None:
            os.environ[ENV_FILE] = os.path.abspath(verbosity.log_file)
        else:
            os.environ.pop(ENV_FILE, None)


def divert(name: str) -> None:
    """The library logger ``name`` (Ray's) writes into the arena's log file
    if there is one, else nowhere, and never on the console: its warnings
    (a package's size, a token's set-up) are about its own workings, and
    would break into the arena's lines and its progress."""
    logger = logging.getLogger(name)
    _DIVERTED.setdefault(name, list(logger.handlers))
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    logger.propagate = False
    files: list[logging.Handler] = [h for h in _HANDLERS if isinstance(h, logging.FileHandler)]
    for handler in files or [logging.NullHandler()]:
        logger.addHandler(handler)


def reset() -> None:
    """Undo ``configure`` and ``divert`` (a command that ran in a longer-lived
    process, such as a test, leaves no handler or environment behind)."""
    for name, handlers in _DIVERTED.items():
        diverted = logging.getLogger(name)
        for handler in list(diverted.handlers):
            diverted.removeHandler(handler)
        for handler in handlers:
            diverted.addHandler(handler)
    _DIVERTED.clear()
    logger = logging.getLogger(LOGGER)
    for handler in _HANDLERS:
        logger.removeHandler(handler)
        handler.close()
    _HANDLERS.clear()
    if "level" in _SAVED:
        logger.setLevel(_SAVED.pop("level"))
    for key in (ENV_LEVEL, ENV_FILE):
        if key in _SAVED:
            old = _SAVED.pop(key)
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old
    set_quiet(False)


def log_file() -> Path | None:
    """The arena's log file, this process's or (in a worker) its arena's:
    with ``-vv`` it holds every protocol line, every seat's hand, so the
    sandbox hides it from the bots."""
    file = os.environ.get(ENV_FILE)
    return Path(file) if file else None


def configure_worker() -> None:
    """A worker process: its arena's settings, from the environment."""
    try:
        verbose = int(os.environ.get(ENV_LEVEL, "0"))
    except ValueError:
        verbose = 0
    file = os.environ.get(ENV_FILE) or None
    configure(Verbosity(quiet=verbose < 0, verbose=max(0, verbose), log_file=Path(file) if file else None),
              export=False)


# -- status lines ------------------------------------------------------------------

_QUIET: list[bool] = [False]


def set_quiet(quiet: bool) -> None:
    _QUIET[0] = quiet


def status(message: str) -> None:
    """A status line (what is going on, not the result) on stderr; nothing under ``-q``."""
    if not _QUIET[0]:
        print(message, file=sys.stderr, flush=True)


def is_quiet() -> bool:
    return _QUIET[0]

