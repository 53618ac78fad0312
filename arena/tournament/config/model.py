"""The tournament file: load, validate, and describe a tournament.

``load_config(path)`` reads a YAML file such as ``tournaments/example.yaml``
(which documents every key) and returns a frozen ``TournamentConfig``.  The
whole file is checked before any bot starts.  A mistake raises ``ConfigError``
with a single line naming the file, the line, the key path and what was
expected, for example::

    tournaments/x.yaml:12: bots[2].command: expected a string or a list of strings, got 42

Line numbers come from the YAML node marks (the file is composed, not just
loaded), so they point at the offending value, or at the key for unknown keys,
or at the enclosing mapping for missing keys.  List indexes in key paths count
from 0, as in the ruleset's own messages.

Relative paths in the file (``dir``, ``output``) are relative to the
directory of the YAML file, not to the current directory.

Top-level keys starting with ``x-`` are ignored, so they can hold YAML anchors
shared by several bots (``<<: *common`` merge keys work anywhere).

The YAML itself is read, with those line numbers and key paths, by
``configreader`` (on the generic ``yamlreader``), within the bounds of
``bounded`` (file size, values counting alias expansion, nesting, number
length); this module holds what it produces.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...match.spec import FaultPolicy, SeatSpec
from ...process import BotSpec, SandboxPolicy, TimeControl
from ...process.confine.sandbox import AUTO, bot_places
from ...process.confine.spec import DEFAULT_MAX_PROCESSES, MiB
from ...shanghai.ruleset import Ruleset

#: How the seats of a table's matches are arranged (``pairing.seating``):
#: balanced neighbours, or the rotations of the listed order that results
#: stored before 'seating' existed were played with.
BALANCED = "balanced"
ROTATE = "rotate"
SEATINGS = (BALANCED, ROTATE)

__all__ = [
    "ConfigError", "BotLimits", "BotSandbox", "BotConfig", "FaultSettings", "TournamentConfig",
    "ROUND_ROBIN", "GAUNTLET", "SWISS", "FORMATS", "OUTPUT_FORMATS", "DEFAULT_PLAYERS", "MAX_MATCHES", "Settle",
    "RATE_HANDS", "RATE_MATCHES", "RATINGS", "ExecutorSettings", "LOCAL", "RAY", "EXECUTORS", "SHIP", "SHARED",
    "FILE_MODES",
]

ROUND_ROBIN = "round_robin"
GAUNTLET = "gauntlet"
SWISS = "swiss"
FORMATS = (ROUND_ROBIN, GAUNTLET, SWISS)
#: How the commands print their tables (``--format``): not the tournament's
#: format above, though both are called "format"; kept side by side so each
#: error can tell one from the other.
OUTPUT_FORMATS = ("plain", "markdown", "csv", "json")
#: What one TrueSkill game is (``rating:``): each hand of a match, ranked by
#: the hand's scores, or the whole match, ranked by its places.
RATE_HANDS = "hands"
RATE_MATCHES = "matches"
RATINGS = (RATE_HANDS, RATE_MATCHES)
DEFAULT_PLAYERS = 4
#: Where matches run (``executor:``, ``arena run --executor``): local worker
#: processes, or the actors of a Ray cluster.
LOCAL = "local"
RAY = "ray"
EXECUTORS = (LOCAL, RAY)
#: How a Ray cluster's nodes get the bot programs: shipped by Ray (its
#: runtime environment's working_dir) or found at the same paths there.
SHIP = "ship"
SHARED = "shared"
FILE_MODES = (SHIP, SHARED)
#: The longest name of a file or folder (Linux's NAME_MAX, in bytes).
NAME_MAX = 255
#: ``load_config`` refuses schedules with more matches than this (see ``schedule``).
MAX_MATCHES = 20_000


class ConfigError(Exception):
    """A mistake in a tournament file, as one line: ``file:line: key.path: message``.

    ``file``, ``line`` (1-based, or None), ``key`` (the key path, or None) and
    ``message`` are kept as attributes; ``str(err)`` is the whole line.
    """

    def __init__(self, file: str, line: int | None, key: str | None, message: str) -> None:
        # One line of readable length, whatever a hostile file put in a key or value.
        message = _shorten(" ".join(str(message).split()), 500)
        key = _shorten(" ".join(key.split()), 100) if key else key
        where = file if line is None else f"{file}:{line}"
        text = f"{where}: {key}: {message}" if key else f"{where}: {message}"
        super().__init__(text)
        self.file = file
        self.line = line
        self.key = key
        self.message = message


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


# -- the result ----------------------------------------------------------------

@dataclass(frozen=True)
class BotLimits:
    """Resource limits of one subprocess bot (see ``arena.process.BotSpec``)."""

    memory_mb: int | None = None
    cpu_seconds: float | None = None
    max_line_bytes: int = MiB
    stderr_max_bytes: int = MiB
    processes: int = DEFAULT_MAX_PROCESSES
    ponder: bool = False        # may compute between its turns (process.confine.turns)


@dataclass(frozen=True)
class BotSandbox:
    """A bot's ``sandbox`` key: extra paths it may read or write (absolute), and
    whether it gets a private writable scratch directory (``$ARENA_SCRATCH``)."""

    read: tuple[Path, ...] = ()
    write: tuple[Path, ...] = ()
    scratch: bool = False


@dataclass(frozen=True)
class BotConfig:
    """One entry of ``bots``: either a ``command`` run as a subprocess or a ``builtin`` player.

    ``dir`` is absolute (the YAML file's directory when not given); ``env`` is
    a tuple of (name, value) pairs added to the arena's environment; ``line``
    is the line of the entry in the tournament file, for later messages.
    """

    name: str
    command: tuple[str, ...] | None = None
    builtin: str | None = None
    dir: Path | None = None
    env: tuple[tuple[str, str], ...] = ()
    build: str | None = None
    limits: BotLimits = field(default_factory=BotLimits)
    sandbox: BotSandbox = field(default_factory=BotSandbox)
    line: int | None = None

    @property
    def is_builtin(self) -> bool:
        return self.builtin is not None

    def spec(self, sandbox: SandboxPolicy | None = None) -> BotSpec:
        """How to start this bot as a subprocess (argv, cwd, env, limits, sandbox)."""
        if self.command is None:
            raise ValueError(f"bot {self.name!r} is the built-in player {self.builtin!r}, not a subprocess")
        return BotSpec(
            argv=self.command,
            cwd=self.dir,
            env=dict(self.env) or None,
            sandbox=sandbox or SandboxPolicy(),
            memory_mb=self.limits.memory_mb,
            cpu_seconds=self.limits.cpu_seconds,
            max_line_bytes=self.limits.max_line_bytes,
            stderr_max_bytes=self.limits.stderr_max_bytes,
            max_processes=self.limits.processes,
            turn_guard=not self.limits.ponder,
        )

    def seat_spec(self) -> SeatSpec:
        """This bot as an ``arena.match.SeatSpec`` (seat named after the bot,
        with the default sandbox; ``TournamentConfig.seat_spec`` adds the
        tournament's hidden paths)."""
        if self.builtin is not None:
            return SeatSpec(self.name, player=self.builtin)
        return SeatSpec(self.name, bot=self.spec())

    def to_mapping(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.builtin is not None:
            out["builtin"] = self.builtin
        else:
            out["command"] = list(self.command or ())
            out["dir"] = str(self.dir)
            out["env"] = dict(self.env)
            out["build"] = self.build
            out["limits"] = dataclasses.asdict(self.limits)
            # Results stored before these keys existed still resume:
            if self.limits.processes == DEFAULT_MAX_PROCESSES:
                del out["limits"]["processes"]
            if not self.limits.ponder:
                del out["limits"]["ponder"]
            # What the bot may see and write besides its own directory: a
            # resume with another grant would rank, in one table, matches in
            # which it could read (or keep) what in others it could not.
            out["sandbox"] = {"read": [str(p) for p in self.sandbox.read],
                              "write": [str(p) for p in self.sandbox.write],
                              "scratch": self.sandbox.scratch}
        return out


@dataclass(frozen=True)
class FaultSettings:
    """The ``faults`` key: strikes a bot may collect in a match, and strict mode
    (the fields of ``arena.match.FaultPolicy``; ``policy()`` makes one)."""

    max_strikes: int = 3
    strict: bool = False

    def policy(self) -> FaultPolicy:
        return FaultPolicy(max_strikes=self.max_strikes, strict=self.strict)


@dataclass(frozen=True)
class Settle:
    """Play deal rounds until every adjacent pair of the leaderboard is
    separated at ``confidence``, or a budget is used up (``max_matches``
    None: the default of ``rounds.match_budget``; ``max_minutes`` None: no
    time limit)."""
    confidence: float = 0.95
    max_matches: int | None = None
    max_minutes: float | None = None

    def to_mapping(self) -> dict[str, Any]:
        return {"confidence": self.confidence, "max_matches": self.max_matches, "max_minutes": self.max_minutes}


@dataclass(frozen=True)
class ExecutorSettings:
    """The ``executor`` key: where matches run.  ``address`` is the Ray
    cluster's (None: ``RAY_ADDRESS``, else a new Ray on this machine);
    ``files`` says how its nodes get the tournament's directory (``SHIP``,
    ``SHARED``).  Not part of the stored description: where a match ran
    changes nothing of its result."""

    backend: str = LOCAL
    address: str | None = None
    files: str = SHIP


@dataclass(frozen=True)
class TournamentConfig:
    """A validated tournament file.

    ``path`` is the file as given (used in messages), ``dir`` its absolute
    directory (the base of relative paths).  ``rules`` is the built ruleset,
    ``time`` the time control of every bot.  ``jobs`` is None for "auto"
    (see ``executors.cpus.job_count``, which asks the machine).  ``output`` is the absolute results directory.
    ``challengers`` is empty for round robin.  ``key_lines`` maps each
    top-level key present in the file to its line, for later messages
    (``line_of``).
    """

    path: Path
    dir: Path
    name: str
    bots: tuple[BotConfig, ...]
    players: int = DEFAULT_PLAYERS
    rules: Ruleset = field(default_factory=Ruleset)
    time: TimeControl = field(default_factory=TimeControl)
    faults: FaultSettings = field(default_factory=FaultSettings)
    format: str = ROUND_ROBIN
    challengers: tuple[str, ...] = ()
    deals: int = 1
    settle: Settle | None = None
    rating: str = RATE_HANDS
    duplicate: bool = True
    seating: str = BALANCED        # seating.BALANCED or ROTATE (the old schedule, which stored results may hold)
    seed: int | None = None        # None: random, chosen by the first run and stored
    jobs: int | None = None
    affinity: bool = True          # each match on a CPU of its own (process.confine.affinity)
    anonymous: bool = False        # bots are not told who sits at their table (MatchSpec.anonymous)
    output: Path = Path("arena-results")
    sandbox: str = AUTO
    executor: ExecutorSettings = field(default_factory=ExecutorSettings)
    key_lines: tuple[tuple[str, int], ...] = ()
    # Not from the file: what else the bots must not see, found on the machine
    # by the run's set-up (``preflight.hide_machine_state``: the repository's
    # history, arena's log, the list of runs; ``preflight.hide_earlier_runs``:
    # earlier runs with this seed); not stored with the results.
    also_hidden: tuple[Path, ...] = ()
    # Not from the file either (``arena run --forfeit-unstartable``, for a class):
    # a bot whose program cannot be started forfeits its seats instead of
    # stopping the run; not stored with the results.
    forfeit_unstartable: bool = False

    # -- bots -------------------------------------------------------------------
    @property
    def bot_names(self) -> tuple[str, ...]:
        return tuple(b.name for b in self.bots)

    def bot(self, name: str) -> BotConfig:
        for b in self.bots:
            if b.name == name:
                return b
        raise KeyError(name)

    def bot_spec(self, name: str, sandbox_mode: str | None = None) -> BotSpec:
        """The ``BotSpec`` of a subprocess bot (ValueError for a built-in player),
        confined by ``sandbox_policy``; ``sandbox_mode`` overrides the file's
        mode (the caller's ``sandbox.resolve`` result, so workers do not probe)."""
        return self.bot(name).spec(self.sandbox_policy(name, sandbox_mode))

    def scratch_dir(self, name: str) -> Path:
        """Where a bot that asks for one gets its scratch directory (empty for
        every process: a bot must not remember the deals it saw)."""
        return self.output / "scratch" / name

    def sandbox_policy(self, name: str, mode: str | None = None) -> SandboxPolicy:
        """What bot ``name`` may see: not the results, not this file (nor the
        history of the repository it is kept in: it holds the seed, from which
        every deal follows), not the other bots' directories and programs;
        its own extra read and write paths and scratch directory."""
        bot = self.bot(name)
        tournament_file = self.path.absolute()
        hide = [self.output, tournament_file,
                self.dir / "arena-results",          # other tournaments' results too
                *self.also_hidden]
        for other in self.bots:
            if other.name != name and other.command is not None:
                hide += map(Path, bot_places(other.command, os.fspath(other.dir) if other.dir else None))
        return SandboxPolicy(mode or self.sandbox, tuple(map(str, bot.sandbox.read)),
                             tuple(map(str, bot.sandbox.write)), tuple(map(str, hide)),
                             scratch=str(self.scratch_dir(name)) if bot.sandbox.scratch else None)

    def seat_spec(self, name: str, sandbox_mode: str | None = None) -> SeatSpec:
        """The ``arena.match.SeatSpec`` of a bot: built-in player or subprocess."""
        bot = self.bot(name)
        if bot.is_builtin:
            return bot.seat_spec()
        return SeatSpec(name, bot=self.bot_spec(name, sandbox_mode))

    @property
    def field_bots(self) -> tuple[str, ...]:
        """The bots the challengers meet in a gauntlet (every bot for round robin)."""
        return tuple(n for n in self.bot_names if n not in self.challengers)

    # -- misc -------------------------------------------------------------------
    def line_of(self, key: str) -> int | None:
        """Line of a top-level key in the file, or None when the key is absent."""
        return dict(self.key_lines).get(key)

    def error(self, key: str, message: str) -> ConfigError:
        """A ``ConfigError`` about a top-level key (at its line, if present)."""
        return ConfigError(str(self.path), self.line_of(key) or self.line_of("bots"), key, message)

    def with_overrides(self, *, seed: int | None = None, jobs: int | None = None,
                       output: str | os.PathLike[str] | None = None, executor: str | None = None,
                       address: str | None = None, affinity: bool | None = None,
                       forfeit_unstartable: bool = False) -> TournamentConfig:
        """Command-line overrides (``--seed``, ``--jobs``, ``--out``,
        ``--executor``, ``--address``, ``--[no-]affinity``,
        ``--forfeit-unstartable``); ``output`` is taken relative to the current
        directory, as on a command line.  An address alone means Ray."""
        changes: dict[str, Any] = {}
        if forfeit_unstartable:
            changes["forfeit_unstartable"] = True
        if affinity is not None:
            changes["affinity"] = affinity
        if executor is not None or address is not None:
            backend = executor or RAY
            if backend not in EXECUTORS:
                raise ValueError(f"executor must be one of {', '.join(EXECUTORS)}, got {backend!r}")
            if backend == LOCAL and address is not None:
                raise ValueError("an address is for the ray executor (--executor ray), not the local one")
            changes["executor"] = dataclasses.replace(
                self.executor, backend=backend, address=address if address is not None else self.executor.address)
        if seed is not None:
            changes["seed"] = seed
        if jobs is not None:
            if jobs < 1:
                raise ValueError("jobs must be at least 1")
            changes["jobs"] = jobs
        if output is not None:
            changes["output"] = Path(os.path.abspath(os.path.expanduser(os.fspath(output))))
            if _too_long(changes["output"]):
                raise ValueError(f"--out: a folder name longer than {NAME_MAX} bytes: {output}")
        done = dataclasses.replace(self, **changes)
        if _too_long(done.output):
            # Its folder would be refused by the file system, with a traceback at the first stat.
            key = "out" if self.line_of("out") is not None else "name"
            raise self.error(key, f"too long to name the results folder (more than {NAME_MAX} bytes): "
                                  "shorten it, or give the results folder with out: or --out")
        return done

    def to_mapping(self) -> dict[str, Any]:
        """A JSON-friendly description (for storing with the results)."""
        out: dict[str, Any] = {
            "name": self.name,
            "bots": [b.to_mapping() for b in self.bots],
            "players": self.players,
            "rules": self.rules.to_mapping(),
            "time": {"startup": self.time.startup_seconds, "per_decision": self.time.per_decision_seconds,
                     "bank": self.time.bank_seconds},
            "faults": dataclasses.asdict(self.faults),
            "format": self.format,
            "challengers": list(self.challengers),
            "deals": self.deals,
            "settle": None if self.settle is None else self.settle.to_mapping(),
            "rating": self.rating,
            "duplicate": self.duplicate,
            "seed": self.seed,
            # A run resumed with a weaker sandbox would mix contained and
            # uncontained matches in one table.
            "sandbox": self.sandbox,
        }
        # Stored only when it is not what results stored before the key
        # existed were played with (the rotations of the listed order), so
        # that those still resume with 'seating: rotate' and never with a
        # schedule that seats their unplayed matches otherwise.
        if self.seating != ROTATE:
            out["seating"] = self.seating
        # Stored only when set, so results stored before the key existed still resume.
        if self.anonymous:
            out["anonymous"] = True
        return out


def _too_long(path: Path) -> bool:
    return any(len(os.fsencode(part)) > NAME_MAX for part in path.parts)
