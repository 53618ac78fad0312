"""Typed failures of a bot process.

Every failure a bot can cause is a ``BotFailure`` whose ``kind`` says what
happened, so the caller can score it without parsing messages:

* ``BotTimeout``      kind ``"timeout"``   -- no reply in time (or stdin never drained)
* ``BotCrashed``      kind ``"crash"``     -- the process died or closed its pipes
* ``BotMalformed``    kind ``"malformed"`` -- a reply that is not one JSON object on one line
* ``BotStartupError`` kind ``"startup"``   -- the program could not be started at all
"""

from __future__ import annotations

import signal
from collections.abc import Sequence

EXCERPT_CHARS = 200


def excerpt(data: bytes | str, limit: int = EXCERPT_CHARS) -> str:
    """Readable, bounded excerpt of what a bot sent (for messages and logs):
    one line of printable text.  Control characters and the like are written
    as escapes (``\\x1b``, ``\\r``, ``\\u202e``): an escape sequence quoted
    to a terminal could hide or rewrite what it shows."""
    if isinstance(data, bytes):
        # Decode at most a few bytes per character we keep: never the whole line.
        data = data[: limit * 4 + 4].decode("utf-8", errors="replace")
    more = len(data) > limit
    data = data[:limit]
    if not data.isprintable():
        data = escaped(data, tabs=False)
        more = more or len(data) > limit
        data = data[:limit]
    return data + "..." if more else data


def escaped(text: str, *, tabs: bool = True) -> str:
    """``text`` whole, with every character that is not printable (ESC, a CR,
    a newline, U+202E) written as its Python escape (``\\x1b``, ``\\r``,
    ``\\n``, ``\\u202e``): for a line read back from a file a bot wrote, or
    from a database, to show on a terminal.  Tabs are kept (harmless there,
    and how a Java stack trace indents) unless ``tabs`` is False: in a table
    cell (``leaderboard.cell_text``) or a one-line ``excerpt`` a tab would
    break the columns, so it is written ``\\t``.

    The one implementation of the arena's escaping: the tournament's tables
    and the check report use it too (this layer imports none of theirs)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or (tabs and c == "\t") else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def escaped_lines(text: str) -> str:
    """Several lines (a bot's stderr), each ``escaped``: a CR, an escape
    sequence or U+202E cannot rewrite what a terminal shows of them."""
    return "\n".join(escaped(line) for line in text.split("\n"))


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def describe_exit(returncode: int) -> str:
    """``exited with code 3`` / ``killed by signal 9 (SIGKILL)``."""
    if returncode < 0:
        return f"killed by signal {-returncode} ({signal_name(-returncode)})"
    return f"exited with code {returncode}"


class BotFailure(Exception):
    """Base class: a bot misbehaved.  ``kind`` classifies it, ``bot`` names it."""

    kind = "failure"

    def __init__(self, message: str, *, bot: str | None = None) -> None:
        super().__init__(f"bot {bot!r}: {message}" if bot else message)
        self.bot = bot
        self.detail = message


class BotTimeout(BotFailure):
    """No complete reply before the limit (or the bot did not read its input).

    ``limit`` is the time the bot was allowed (per-decision time plus the bank
    left), ``elapsed`` how long it actually had, ``phase`` is ``"reply"`` or
    ``"write"`` (the bot stopped reading its stdin and the pipe filled up).
    """

    kind = "timeout"

    def __init__(self, message: str, *, bot: str | None = None, limit: float,
                 elapsed: float, phase: str = "reply") -> None:
        super().__init__(message, bot=bot)
        self.limit = limit
        self.elapsed = elapsed
        self.phase = phase


class BotCrashed(BotFailure):
    """The process died (or closed stdin/stdout, which makes it unusable).

    ``returncode`` follows subprocess: ``-N`` means killed by signal N, and is
    ``None`` only if the exit status could not be collected.  ``signal`` is N
    or ``None``; ``stderr_tail`` holds the end of what it wrote on stderr,
    ``stdout_first`` (an excerpt) the first of the lines it wrote on stdout
    that no request asked for, just before it died (a runtime's error).
    """

    kind = "crash"

    def __init__(self, message: str, *, bot: str | None = None,
                 returncode: int | None = None, stderr_tail: str = "",
                 stdout_first: str | None = None) -> None:
        super().__init__(message, bot=bot)
        self.stdout_first = stdout_first
        self.returncode = returncode
        self.signal = -returncode if returncode is not None and returncode < 0 else None
        self.stderr_tail = stderr_tail


class BotMalformed(BotFailure):
    """A line that is not one acceptable JSON object: too long, not UTF-8, not
    JSON, not an object, or beyond the decoder's limits (``jsonline``).

    ``reason`` is the short cause, ``excerpt`` at most ~200 characters of the line.
    """

    kind = "malformed"

    def __init__(self, reason: str, line: bytes | str, *, bot: str | None = None) -> None:
        self.reason = reason
        self.excerpt = excerpt(line)
        super().__init__(f"{reason}: {self.excerpt!r}", bot=bot)


class BotStartupError(BotFailure):
    """The program could not be started (not found, not executable, bad cwd...)."""

    kind = "startup"

    def __init__(self, message: str, *, argv: Sequence[str], bot: str | None = None) -> None:
        super().__init__(message, bot=bot)
        self.argv = tuple(argv)
