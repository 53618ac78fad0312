"""Bot commands given on the command line (``arena play``, ``arena check``).

Each bot is one argument: a built-in player's name, or a program's command
line quoted as one (``"python3 mybot.py"``, split like a shell would).  The
usual mistake is to leave the quotes out: ``arena play python3 mybot.py``
makes ``python3`` one bot (an interpreter reading a match from stdin as a
program: it waits, and forfeits) and ``mybot.py`` another.  ``seat_args``
finds that before anything starts and says how to quote it.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Collection, Sequence

__all__ = ["BotCommandError", "INTERPRETERS", "is_interpreter", "quoted_hint", "runs_python", "split_command",
           "unquoted_problem"]

# Programs that run a bot's source rather than being one.
INTERPRETERS = frozenset({
    "python", "pypy", "pypy3", "node", "nodejs", "deno", "bun", "java", "kotlin", "scala", "ruby",
    "perl", "php", "lua", "luajit", "bash", "sh", "zsh", "dash", "Rscript", "julia", "dotnet", "mono",
    "go", "ocaml", "elixir", "escript", "racket", "guile", "sbcl", "swipl", "tclsh", "groovy", "dart",
    "runghc", "stack", "cargo", "uv", "poetry", "env",
})
_VERSIONED = re.compile(r"^(python|pypy|ruby|perl|php|lua)[0-9.]*$")
_PYTHON = re.compile(r"^(python|pypy)[0-9.]*$")
_ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


class BotCommandError(ValueError):
    """A bot argument that cannot be what the user meant (the message says how to fix it)."""


def is_interpreter(arg: str) -> bool:
    """``arg`` is a bare interpreter name (``python3``, ``/usr/bin/node``), with nothing to run."""
    name = os.path.basename(arg)
    return name in INTERPRETERS or bool(_VERSIONED.match(name))


def runs_python(argv: Sequence[str], cwd: str | os.PathLike[str] | None = None) -> bool:
    """Whether a bot's command runs a Python program: a Python interpreter
    (``python3 bot.py``, ``env python3 ...``), a ``.py`` file, or a program
    whose ``#!`` line names Python.  ``cwd`` is where a relative program is."""
    words = list(argv)
    if words and os.path.basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-") and not _ENV_ASSIGNMENT.match(w)]
    if not words:
        return False
    if _PYTHON.match(os.path.basename(words[0])) or any(w.endswith(".py") for w in words):
        return True
    return "python" in _shebang(words[0], cwd)


def _shebang(program: str, cwd: str | os.PathLike[str] | None) -> str:
    """The ``#!`` line of ``program`` (found as the system would), or ''."""
    path = program if "/" in program else shutil.which(program)
    if path is None:
        return ""
    try:
        with open(os.path.join(cwd or os.getcwd(), path), "rb") as f:
            head = f.read(256)
    except OSError:
        return ""
    return head.split(b"\n", 1)[0].decode("utf-8", errors="replace") if head.startswith(b"#!") else ""


def split_command(arg: str) -> list[str]:
    """A quoted bot command as argv (shell-like splitting)."""
    try:
        argv = shlex.split(arg)
    except ValueError as err:
        raise BotCommandError(f"cannot read the bot command {arg!r}: {err}") from None
    if not argv:
        raise BotCommandError("an empty bot command was given")
    return argv


def _quote(words: Sequence[str]) -> str:
    text = " ".join(words)
    return f'"{text}"' if len(words) > 1 or " " in text else text


def quoted_hint(args: Sequence[str], builtins: Collection[str]) -> list[str]:
    """``args`` regrouped as the user most likely meant: an interpreter and the
    words after it that are neither built-in players nor interpreters form one
    command."""
    groups: list[list[str]] = []
    joining = False
    for arg in args:
        lone = len(arg.split()) == 1
        if lone and is_interpreter(arg):
            groups.append([arg])
            joining = True
        elif joining and lone and arg not in builtins:
            groups[-1].append(arg)
        else:
            groups.append([arg])
            joining = False
    return [_quote(g) for g in groups]


def unquoted_problem(args: Sequence[str], builtins: Collection[str], command: str) -> str | None:
    """Why ``args`` (the BOT arguments of ``arena COMMAND``) look like an
    unquoted command line, and how to quote it; None if they look fine."""
    lone = [a for a in args if len(a.split()) == 1 and a not in builtins and is_interpreter(a)]
    if not lone:
        return None
    hint = quoted_hint(args, builtins)
    if any(h.startswith('"') for h in hint):
        return (f"{lone[0]!r} on its own is an interpreter, not a bot: quote each bot's command as one "
                f"argument, e.g. arena {command} {' '.join(hint)}")
    return (f"{lone[0]!r} on its own is an interpreter, not a bot: give the program it runs, quoted "
            f'with it as one argument, e.g. arena {command} "{lone[0]} mybot.py"')
