"""What a match is made of (``MatchSpec``) and what comes out (``MatchResult``).

Plain frozen dataclasses of plain values, so they pickle (worker processes)
and have a JSON form (``to_json``/``from_json``) for a distributed runner or
a results store.  Nothing here starts processes or plays cards.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..process import BotSpec, DecisionStats, SandboxPolicy, TimeControl
from ..shanghai.ruleset import Ruleset

# Fault kinds, in the words bots and reports use.
TIMEOUT = "timeout"
CRASH = "crash"
MALFORMED = "malformed"
WRONG_ID = "wrong_id"
ILLEGAL = "illegal"
FAULT_KINDS = (TIMEOUT, CRASH, MALFORMED, WRONG_ID, ILLEGAL)

START = "start"  # the decision kind of a fault in the handshake
#: What an anonymous match tells bots instead of the seats' names: this and the seat.
ANONYMOUS_PREFIX = "seat "


@dataclass(frozen=True)
class SeatSpec:
    """One seat: a display name and either a built-in player or a bot command."""

    name: str
    player: str | None = None      # a built-in in-process player ('random', 'greedy', ...)
    bot: BotSpec | None = None     # a program spoken to over the protocol

    def __post_init__(self) -> None:
        if (self.player is None) == (self.bot is None):
            raise ValueError(f"seat {self.name!r}: give exactly one of player (built-in) or bot (command)")

    @classmethod
    def builtin(cls, player: str, name: str | None = None) -> SeatSpec:
        return cls(name or player, player=player)

    @classmethod
    def command(cls, argv: Sequence[str], name: str | None = None, **limits: Any) -> SeatSpec:
        spec = BotSpec(argv, **limits)
        return cls(name or spec.display_name, bot=spec)

    @property
    def is_bot(self) -> bool:
        return self.bot is not None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.player is not None:
            out["player"] = self.player
        if self.bot is not None:
            out["bot"] = bot_spec_to_json(self.bot)
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> SeatSpec:
        bot = obj.get("bot")
        return cls(obj["name"], player=obj.get("player"),
                   bot=bot_spec_from_json(bot) if bot is not None else None)


def bot_spec_to_json(spec: BotSpec) -> dict[str, Any]:
    return {
        "argv": list(spec.argv),
        "cwd": os.fspath(spec.cwd) if spec.cwd is not None else None,
        "env": dict(spec.env) if spec.env is not None else None,
        "memory_mb": spec.memory_mb,
        "cpu_seconds": spec.cpu_seconds,
        "max_line_bytes": spec.max_line_bytes,
        "stderr_max_bytes": spec.stderr_max_bytes,
        "max_processes": spec.max_processes,
        "sandbox": spec.sandbox.to_json(),
    }


def bot_spec_from_json(obj: Mapping[str, Any]) -> BotSpec:
    fields = dict(obj)
    if "sandbox" in fields:
        fields["sandbox"] = SandboxPolicy.from_json(fields["sandbox"])
    return BotSpec(**fields)


def pool_key(name: str, spec: BotSpec) -> tuple[Any, ...]:
    """Which kept processes may play a seat: those of the same bot (name) running
    the same program the same way.  A process plays as one bot only, so what it
    remembers of its matches stays with that bot, and several bots of one
    program (six copies of a baseline, say) each keep their own processes."""
    return (name, *bot_key(spec))


def bot_key(spec: BotSpec) -> tuple[Any, ...]:
    """A bot's identity: two seats with equal keys run the same program the same way."""
    env = tuple(sorted(spec.env.items())) if spec.env else ()
    cwd = os.fspath(spec.cwd) if spec.cwd is not None else None
    return (spec.argv, cwd, env, spec.memory_mb, spec.cpu_seconds, spec.max_line_bytes,
            spec.stderr_max_bytes, spec.max_processes, spec.sandbox)


@dataclass(frozen=True)
class FaultPolicy:
    """When a misbehaving bot forfeits its seat.

    Every fault is a strike; the seat is forfeited at ``max_strikes`` strikes,
    at the first fault if ``strict``, and always on a crash (or anything else
    that leaves the process unusable) and on a failed handshake.

    A program that cannot be started at all (``BotStartupError``: missing,
    not executable, no interpreter) is a mistake of the tournament's file,
    and fails the match; with ``unstartable_forfeits`` (``arena run
    --forfeit-unstartable``, for a class) its seat is forfeited instead, a
    crash at start-up, and the others play the match.
    """

    max_strikes: int = 3
    strict: bool = False
    unstartable_forfeits: bool = False

    def __post_init__(self) -> None:
        if self.max_strikes < 1:
            raise ValueError("max_strikes must be at least 1")


@dataclass(frozen=True)
class MatchSpec:
    """Everything needed to play one match, reproducibly."""

    match_id: str
    seats: tuple[SeatSpec, ...]
    rules: Ruleset | Mapping[str, Any] = field(default_factory=dict)
    seed: int = 0
    deal: Mapping[str, Any] | None = None          # a deal plan (docs/DEALS.md)
    time: TimeControl = field(default_factory=TimeControl)
    faults: FaultPolicy = field(default_factory=FaultPolicy)
    log_dir: str | None = None                      # per-bot per-match stderr logs go here
    anonymous: bool = False                         # bots are not told who sits at the table

    def __post_init__(self) -> None:
        object.__setattr__(self, "seats", tuple(self.seats))
        if not 2 <= len(self.seats) <= 8:
            raise ValueError(f"a match needs 2 to 8 seats, got {len(self.seats)}")
        if self.log_dir is not None:
            object.__setattr__(self, "log_dir", os.fspath(self.log_dir))

    def ruleset(self) -> Ruleset:
        return self.rules if isinstance(self.rules, Ruleset) else Ruleset.from_mapping(self.rules)

    @property
    def deal_key(self) -> Hashable:
        """What makes the cards of this match: a bot process never plays two
        matches with equal keys (``BotPool``), so it cannot remember a
        duplicate deal's cards from one rotation to the next."""
        if self.deal is not None:
            return ("plan", self.seed, json.dumps(self.deal, sort_keys=True, default=str))
        return ("seed", self.seed)

    def process_keys(self) -> tuple[Hashable, ...]:
        """The ``BotPool`` key of each seat that runs a program (``pool_key``),
        in seat order: which kept processes could play this match."""
        return tuple(pool_key(s.name, s.bot) for s in self.seats if s.bot is not None)

    def told_names(self) -> list[str]:
        """The ``names`` of ``start``: the seats' names, or with ``anonymous``
        a placeholder per seat (``seat 0``, ...), the same in every match, so
        that no bot learns who sits at its table or meets the same name twice."""
        if self.anonymous:
            return [f"{ANONYMOUS_PREFIX}{i}" for i in range(len(self.seats))]
        return [s.name for s in self.seats]

    def told_match_id(self) -> str:
        """The ``match`` of ``start`` and ``end``.  With ``anonymous`` not the
        id (a tournament's ids name the table, which with the list of bots
        tells who sits there, and the rotation) but a digest of it and the
        match's seed: the same for the same match replayed (a bot may seed
        its generator with it), opaque to whoever does not know the seed."""
        if not self.anonymous:
            return self.match_id
        digest = hashlib.blake2b(f"{self.seed}/{self.match_id}".encode(), digest_size=8).hexdigest()
        return f"m-{digest}"

    def stderr_log(self, seat: int) -> str | None:
        if self.log_dir is None:
            return None
        name = _file_safe(self.seats[seat].name)
        return os.path.join(self.log_dir, f"{_file_safe(self.match_id)}-seat{seat}-{name}.stderr.log")

    def to_json(self) -> dict[str, Any]:
        rules = self.rules.to_mapping() if isinstance(self.rules, Ruleset) else dict(self.rules)
        out = {
            "match_id": self.match_id,
            "seats": [s.to_json() for s in self.seats],
            "rules": rules,
            "seed": self.seed,
            "deal": self.deal,
            "time": asdict(self.time),
            "faults": asdict(self.faults),
            "log_dir": self.log_dir,
        }
        if self.anonymous:
            out["anonymous"] = True
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> MatchSpec:
        return cls(
            match_id=obj["match_id"],
            seats=tuple(SeatSpec.from_json(s) for s in obj["seats"]),
            rules=obj.get("rules") or {},
            seed=obj.get("seed", 0),
            deal=obj.get("deal"),
            time=TimeControl(**obj.get("time", {})),
            faults=FaultPolicy(**obj.get("faults", {})),
            log_dir=obj.get("log_dir"),
            anonymous=bool(obj.get("anonymous", False)),
        )


def _file_safe(text: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in text)
    return safe.strip(".") or "bot"


@dataclass(frozen=True)
class Fault:
    """One misbehaviour of a bot, and what the arena did about it."""

    seat: int
    kind: str                  # one of FAULT_KINDS
    hand: int                  # 1-based hand number (the hand being played)
    decision: int | None       # len(game.actions) when it happened; None in the handshake
    decision_kind: str         # draw, buy, play, or start (the handshake)
    detail: str                # why, in words (the rules' reason for an illegal action)
    excerpt: str | None = None  # the offending line (shortened), when there was one
    strike: int = 1            # the seat's strike count after this fault
    forfeit: bool = False      # this fault forfeited the seat
    request_id: int | None = None  # the id of the request the bot failed, as it saw it

    def describe(self) -> str:
        where = "handshake" if self.decision is None else \
            fault_place(self.hand, self.decision, self.decision_kind, self.request_id)
        text = f"{self.kind} at {where}: {self.detail}"
        if self.forfeit:
            text += " [seat forfeited]"
        return text


def fault_place(hand: Any, decision: Any, decision_kind: Any, request_id: Any) -> str:
    """Where a fault of a decision happened, in the words its bot can check:
    the id of the request it was sent (``hand 2, request id 6 (play)``).  The
    decision index, the arena's own count (``arena show --decision``), only
    where the id is not known (a record of an older arena)."""
    if request_id is not None:
        return f"hand {hand}, request id {request_id} ({decision_kind})"
    return f"hand {hand}, decision {decision} ({decision_kind})"


def first_fault_line(match_id: str, kind: str, hand: Any, decision: Any, decision_kind: Any,
                     request_id: Any, detail: str) -> str:
    """A bot's first fault as one line, what to tell its author first:
    ``crash in t005-r0-d0, at start-up: exited with code 1; stderr: ...``."""
    where = "at start-up" if decision is None else fault_place(hand, decision, decision_kind, request_id)
    return f"{kind} in {match_id}, {where}: {detail}"


@dataclass(frozen=True)
class IgnoredLines:
    """Lines a bot sent that nobody asked for (a second reply, a reply to an
    old id, stray output on stdout) in one match: thrown away, not faults,
    but a sign of a confused bot, so the match record keeps them."""

    seat: int
    count: int
    hand: int                  # where the first one was noticed
    decision: int | None       # None: in the handshake
    examples: tuple[str, ...] = ()   # the first few, shortened

    def describe(self) -> str:
        where = "the handshake" if self.decision is None else f"hand {self.hand}, decision {self.decision}"
        lines = "line" if self.count == 1 else "lines"
        shown = "; ".join(self.examples)
        return f"{self.count} ignored {lines}, the first at {where}" + (f": {shown}" if shown else "")


@dataclass(frozen=True)
class SeatStats:
    """A seat's decision times (seconds) in one match."""

    count: int = 0
    mean: float | None = None
    p95: float | None = None
    max: float | None = None
    timeouts: int = 0

    @classmethod
    def of(cls, stats: DecisionStats) -> SeatStats:
        return cls(stats.count, stats.mean, stats.p95, stats.max, stats.timeouts)


@dataclass(frozen=True)
class MatchResult:
    """The outcome of one match; ``record`` replays it (``Game.from_record``)."""

    match_id: str
    names: tuple[str, ...]
    totals: tuple[int, ...]
    places: tuple[int, ...]                      # forfeit-adjusted, 1 = best
    hand_scores: tuple[tuple[int, ...], ...]
    winners: tuple[int | None, ...]              # per hand; None: nobody went out
    forfeited: tuple[bool, ...]
    faults: tuple[Fault, ...]
    stats: tuple[SeatStats, ...]
    stderr_logs: tuple[str | None, ...]          # None for built-in seats; the file exists once the bot wrote
    record: dict[str, Any]
    wall_seconds: float
    startup_seconds: float                       # starting processes and handshakes
    bot_names: tuple[str | None, ...] = ()       # the names bots gave in 'ready'
    pids: tuple[int | None, ...] = ()            # bot process (and group) ids, for diagnostics
    reused: tuple[bool, ...] = ()                # the process came from a BotPool
    protocols: tuple[int | None, ...] = ()       # the protocol each bot chose in 'ready'
    warnings: tuple[IgnoredLines, ...] = ()      # per bot seat that sent lines nobody asked for
    # Per seat: CPU seconds used between its turns in this match if the bot
    # was caught computing then (process.confine.turns), else None.
    off_turn_cpu: tuple[float | None, ...] = ()

    @property
    def decisions(self) -> int:
        return len(self.record.get("actions", ()))

    def faults_of(self, seat: int) -> list[Fault]:
        return [f for f in self.faults if f.seat == seat]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> MatchResult:
        return cls(
            match_id=obj["match_id"],
            names=tuple(obj["names"]),
            totals=tuple(obj["totals"]),
            places=tuple(obj["places"]),
            hand_scores=tuple(tuple(h) for h in obj["hand_scores"]),
            winners=tuple(obj["winners"]),
            forfeited=tuple(obj["forfeited"]),
            faults=tuple(Fault(**f) for f in obj["faults"]),
            stats=tuple(SeatStats(**s) for s in obj["stats"]),
            stderr_logs=tuple(obj["stderr_logs"]),
            record=dict(obj["record"]),
            wall_seconds=obj["wall_seconds"],
            startup_seconds=obj["startup_seconds"],
            bot_names=tuple(obj.get("bot_names", ())),
            pids=tuple(obj.get("pids", ())),
            reused=tuple(obj.get("reused", ())),
            protocols=tuple(obj.get("protocols", ())),
            warnings=tuple(IgnoredLines(**{**w, "examples": tuple(w.get("examples", ()))})
                           for w in obj.get("warnings", ())),
            off_turn_cpu=tuple(obj.get("off_turn_cpu", ())),
        )


def forfeit_places(totals: Sequence[int], forfeited: Sequence[bool]) -> list[int]:
    """Competition ranking of the seats that did not forfeit, lowest total
    first (equal totals share a place), and every forfeited seat in the last
    place, ``len(totals)``, tied with the other forfeited seats: their totals
    are the arena's stand-in moves, not their bots' play, so they order
    nothing.  A match every seat forfeited is a draw in which all lost."""
    last = len(totals)
    return [last if f else 1 + sum(1 for u, g in zip(totals, forfeited) if not g and u < t)
            for t, f in zip(totals, forfeited)]
