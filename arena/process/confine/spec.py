"""What to run (``BotSpec``) and how much time it gets (``TimeControl``)."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .sandbox_policy import INTERPRETERS, SandboxPolicy

MiB = 1024 * 1024
DEFAULT_MAX_PROCESSES = 128


@dataclass(frozen=True)
class BotSpec:
    """How to start one bot and the limits it runs under.

    ``argv`` is stored as a tuple.  ``env`` holds variables added to (or
    overriding) the arena's environment.  Limits, all optional:

    * ``memory_mb``: RLIMIT_DATA of every process of the bot, plus a watchdog
      on the resident memory of the whole process group (see ``limits``).
    * ``cpu_seconds``: RLIMIT_CPU per process (whole seconds; SIGXCPU, then
      SIGKILL one second later).
    * ``max_line_bytes``: longest accepted stdout line (without the newline).
    * ``stderr_max_bytes``: bytes of stderr kept in the log; the rest is
      read, counted and dropped.
    * ``max_processes``: processes the bot may have at once (counted every
      0.25 s with the memory; the whole bot is killed above it).
    * ``sandbox``: how the bot is confined (``sandbox.SandboxPolicy``; by
      default bubblewrap where it works).
    * ``turn_guard``: a bot seen computing between its turns (taking the
      CPU from the bot whose turn it is) is stopped between its turns from
      then on (``turns``).  False lets a bot think on others' time.

    The stderr log path belongs to a match, so it is given to ``BotProcess``.
    """

    argv: Sequence[str]
    cwd: str | os.PathLike[str] | None = None
    env: Mapping[str, str] | None = None
    memory_mb: int | None = None
    cpu_seconds: float | None = None
    max_line_bytes: int = MiB
    stderr_max_bytes: int = MiB
    max_processes: int | None = DEFAULT_MAX_PROCESSES
    sandbox: SandboxPolicy = field(default_factory=SandboxPolicy)
    turn_guard: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.argv, (str, bytes)):
            raise TypeError("argv must be a sequence of strings, not a single string")
        argv = tuple(self.argv)
        if not argv or not all(isinstance(a, str) for a in argv):
            raise ValueError("argv must be a non-empty sequence of strings")
        object.__setattr__(self, "argv", argv)
        if self.env is not None:
            object.__setattr__(self, "env", dict(self.env))
        if self.memory_mb is not None and self.memory_mb <= 0:
            raise ValueError("memory_mb must be positive")
        if self.cpu_seconds is not None:
            if self.cpu_seconds <= 0:
                raise ValueError("cpu_seconds must be positive")
            object.__setattr__(self, "cpu_seconds", math.ceil(self.cpu_seconds))
        if self.max_line_bytes <= 0:
            raise ValueError("max_line_bytes must be positive")
        if self.max_processes is not None and self.max_processes < 1:
            raise ValueError("max_processes must be at least 1")
        if self.stderr_max_bytes < 0:
            raise ValueError("stderr_max_bytes must be >= 0")

    @property
    def display_name(self) -> str:
        """Short name for logs: the script for ``python3 bot.py``, else the program."""
        first = os.path.basename(self.argv[0])
        base = first.rstrip("0123456789.")
        if base in INTERPRETERS:
            for arg in self.argv[1:]:
                if not arg.startswith("-"):
                    return os.path.basename(arg)
        return first


@dataclass(frozen=True)
class TimeControl:
    """Time allowed to a bot during one match.

    ``startup_seconds`` bounds the handshake (including interpreter start-up).
    Each decision gets ``per_decision_seconds``; when it takes longer, the
    excess is taken from ``bank_seconds`` (a per-match reserve, ``None`` = no
    bank), and the decision is a timeout only once the bank is exhausted.
    """

    startup_seconds: float = 10.0
    per_decision_seconds: float = 1.0
    bank_seconds: float | None = None

    def __post_init__(self) -> None:
        if self.startup_seconds <= 0 or self.per_decision_seconds <= 0:
            raise ValueError("startup_seconds and per_decision_seconds must be positive")
        if self.bank_seconds is not None and self.bank_seconds < 0:
            raise ValueError("bank_seconds must be >= 0 or None")
