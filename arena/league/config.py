"""The league file, ``DIR/league.yaml``: what every match of the league is played with.

A league is a directory: its file (this module), its store of versions
(``store``), its register of versions and tables (``register``) and its
results (``DIR/results/results.sqlite``, a tournament's results database).
The file is read as a tournament file is, by the same reader, so every
mistake is one line naming the file, the line and the key
(``league.yaml:12: authors[2].command: ...``); the keys shared with a
tournament file (``players``, ``rules``, ``time``, ``faults``, ``sandbox``,
``seed``, ``jobs``, an author's ``command`` and ``limits``) mean what they
mean there.
"""

from __future__ import annotations

import dataclasses
import os
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode

from ..process import TimeControl
from ..process.confine.sandbox import AUTO
from ..process.confine.sandbox import MODES as SANDBOX_MODES
from ..shanghai.ruleset import MAX_PLAYERS, MIN_PLAYERS, Ruleset
from ..tournament.config.bots import _NAME_RE
from ..tournament.config.bounded import read_text
from ..tournament.config.model import BotConfig, BotLimits, ConfigError, FaultSettings, TournamentConfig
from ..tournament.config.nodes import _line
from ..tournament.config.reader import Reader, compose
from ..tournament.pairing.schedule import derive_seed

__all__ = ["FILE_NAME", "LeagueConfig", "LeagueError", "load_league", "league_file", "read_league", "template"]

FILE_NAME = "league.yaml"
RESULTS = "results"     # DIR/results: the results directory (results.sqlite, logs/)

_TOP_KEYS = ("name", "players", "rules", "time", "faults", "sandbox", "key", "seed", "jobs", "command", "limits",
             "matchmaking", "submissions", "build", "authors")
_MATCHMAKING_KEYS = ("placement_matches", "max_width")
_AUTHOR_KEYS = ("name", "command", "builtin", "env", "limits", "token", "build")
_BUILD_KEYS = ("command", "seconds", "memory_mb")
# Each limit of ``submissions``: its least and greatest value.
_SUBMISSION_LIMITS = {"max_upload_mb": (1, 1024), "max_unpacked_mb": (1, 4096), "max_files": (1, 100_000),
                      "max_ratio": (1, 10_000), "per_hour": (1, 10_000)}
TOKEN_HASH = re.compile(r"^sha256:[0-9a-f]{64}$")
# The league's key: 128 to 256 bits, in hex (``init`` draws 256).
KEY = re.compile(r"^[0-9a-fA-F]{32,64}$")
KEY_BYTES = 32


class LeagueError(Exception):
    """A one-line, user-facing problem with a league (its directory, a version, the store)."""


@dataclass(frozen=True)
class Matchmaking:
    """How tables are chosen: a new version plays its first ``placement_matches``
    matches before anything else is played, and is "placed" once its rank range
    is at most ``max_width`` ranks wide as well."""

    placement_matches: int = 30
    max_width: int = 3


@dataclass(frozen=True)
class Submissions:
    """Versions handed in over HTTP (``POST /submit`` of ``arena league serve``):
    off unless ``http``.  An archive's body is at most ``max_upload_mb``; what
    it unpacks to at most ``max_unpacked_mb`` and ``max_files`` files, and at
    most ``max_ratio`` times the archive's size (a bomb is refused before it
    is written); an author hands in at most ``per_hour`` archives an hour."""

    http: bool = False
    max_upload_mb: int = 8
    max_unpacked_mb: int = 64
    max_files: int = 1000
    max_ratio: int = 100
    per_hour: int = 10


@dataclass(frozen=True)
class Build:
    """A version's build step: ``command`` run by ``/bin/sh -c`` in a writable
    copy of the version's folder, in the sandbox its matches have, within
    ``seconds`` (wall-clock, and CPU seconds per process) and ``memory_mb``."""

    command: str
    seconds: float = 300.0
    memory_mb: int = 2048


@dataclass(frozen=True)
class LeagueConfig:
    """A validated league file.  ``authors``: each author's program as a bot
    entry (a ``command`` run in a version's own folder of the store, or a
    ``builtin`` house player, which has one version and is never checked)."""

    path: Path
    name: str
    authors: tuple[BotConfig, ...]
    # The secret every deal derives from: a ``key`` (hex, 128-256 bits; what
    # ``init`` writes) or, in files made before it, a 63-bit ``seed``.  One of the two.
    seed: int | None = None
    key: str | None = None
    players: int = 3
    rules: Ruleset = field(default_factory=Ruleset)
    time: TimeControl = field(default_factory=TimeControl)
    faults: FaultSettings = field(default_factory=FaultSettings)
    sandbox: str = AUTO
    jobs: int | None = None
    matchmaking: Matchmaking = field(default_factory=Matchmaking)
    submissions: Submissions = field(default_factory=Submissions)
    tokens: tuple[tuple[str, str], ...] = ()     # (author, the SHA-256 of their token: "sha256:HEX")
    build: Build | None = None                  # every version's build step, unless its author has their own
    builds: tuple[tuple[str, Build], ...] = ()   # (author, their own build step)
    key_lines: tuple[tuple[str, int], ...] = ()

    @property
    def dir(self) -> Path:
        return self.path.parent

    @property
    def secret(self) -> int | str:
        """What the deals derive from (``plan.table_seed``): the seed of an older
        file, as it always was (the same deals), else ``key:HEX``."""
        if self.key is None:
            assert self.seed is not None, "a league has a key or a seed"
            return self.seed
        return f"key:{self.key}"

    @property
    def results(self) -> Path:
        return self.dir / RESULTS

    def author(self, name: str) -> BotConfig:
        """The author ``name``: LeagueError (naming the file's authors) if there is none."""
        for a in self.authors:
            if a.name == name:
                return a
        line = dict(self.key_lines).get("authors")
        where = f"{self.path}:{line}" if line else str(self.path)
        known = ", ".join(a.name for a in self.authors) or "none"
        raise LeagueError(f"{where}: authors: no author {name!r} (the authors are: {known}); "
                          f"add '- name: {name}' under authors:")

    def build_of(self, author: str) -> Build | None:
        """The build step of the author's versions (None: used as handed in)."""
        return dict(self.builds).get(author, self.build)

    def stored(self) -> dict[str, Any]:
        """What the results database keeps of the league: what every match is
        played with (not the authors, whose versions come and go)."""
        return {"name": self.name, "format": "league", "players": self.players, "rules": self.rules.to_mapping(),
                "time": {"startup": self.time.startup_seconds, "per_decision": self.time.per_decision_seconds,
                         "bank": self.time.bank_seconds},
                "faults": dataclasses.asdict(self.faults), "sandbox": self.sandbox, "seed": self.seed,
                "rating": "hands", "duplicate": True, "seating": "balanced",
                # A key is not stored (the league file keeps it); the bootstrap's seed, one-way from it, is.
                **({} if self.key is None else {"bootstrap_seed": derive_seed(self.secret, "league", "standings")})}

    def tournament(self, bots: tuple[BotConfig, ...]) -> TournamentConfig:
        """The league as the tournament layer's functions take it: ``bots`` are
        the versions (named ``author.vN``, each in its own folder)."""
        return TournamentConfig(path=self.path, dir=self.dir, name=self.name, bots=bots, players=self.players,
                                rules=self.rules, time=self.time, faults=self.faults,
                                seed=self.seed if self.key is None else derive_seed(self.secret, "league", "tournament"),
                                jobs=self.jobs, output=self.results, sandbox=self.sandbox)


def league_file(directory: str | os.PathLike[str]) -> Path:
    """``DIR/league.yaml``; LeagueError when DIR is no league."""
    path = Path(directory) / FILE_NAME
    if not path.is_file():
        raise LeagueError(f"{directory}: not a league: it has no {FILE_NAME} (arena league init {directory} makes one)")
    return path


def load_league(directory: str | os.PathLike[str]) -> LeagueConfig:
    """Read and check ``DIR/league.yaml``: ConfigError (one line, file:line: key: ...) on a mistake."""
    return read_league(league_file(directory))


def read_league(path: Path) -> LeagueConfig:
    """Read and check the league file at ``path``, whatever its name."""
    shown = os.fspath(path)
    root = compose(shown, read_text(shown, "a YAML file"))
    if root is None:
        raise ConfigError(shown, 1, None, "the file is empty; expected the league's settings with at least 'authors'")
    return _LeagueReader(shown, Path(os.path.abspath(path.parent))).league(root, path)


class _LeagueReader(Reader):
    """The tournament file's reader, with the league's own top level and ``authors``."""

    def league(self, root: Node, path: Path) -> LeagueConfig:
        top = self.mapping(root, "", _TOP_KEYS, what="a mapping of league settings (name, authors, ...)",
                           required=("authors",), extensions=True)
        values: dict[str, Any] = {"key_lines": tuple((k, _line(kn)) for k, (kn, _) in top.items())}
        values["name"] = self._name(top, path.parent.name or "league")
        players_node = top["players"][1] if "players" in top else None
        players = values["players"] = 3 if players_node is None else self.integer(
            players_node, "players", MIN_PLAYERS, MAX_PLAYERS, "a number of players per table")
        values["rules"] = self.rules(top.get("rules"), players, players_node)
        if "time" in top:
            values["time"] = self.time(top["time"][1])
        if "faults" in top:
            values["faults"] = self.faults(top["faults"][1])
        if "sandbox" in top:
            values["sandbox"] = self.choice(top["sandbox"][1], "sandbox", SANDBOX_MODES,
                                            ", ".join(map(repr, SANDBOX_MODES)))
        if "jobs" in top:
            values["jobs"] = self._jobs(top["jobs"][1])
        values.update(self._secret(top, root))
        if "matchmaking" in top:
            values["matchmaking"] = self._matchmaking(top["matchmaking"][1])
        if "submissions" in top:
            values["submissions"] = self._submissions(top["submissions"][1])
        if "build" in top:
            values["build"] = self._build(top["build"][1], "build")
        values["authors"], values["tokens"], values["builds"] = self._authors(top)
        return LeagueConfig(path=path, **values)

    def _secret(self, top: dict[str, tuple[Node, Node]], root: Node) -> dict[str, Any]:
        """``key`` (hex, 128-256 bits), or an older file's ``seed``: one of them."""
        if "key" in top and "seed" in top:
            raise self.fail(top["seed"][0], "seed", "give 'key' or 'seed', not both: the deals derive from one "
                                                   "(a league made by 'arena league init' has a key)")
        if "seed" in top:
            return {"seed": self.integer(top["seed"][1], "seed", 0, 2 ** 63 - 1, "a seed")}
        if "key" not in top:
            raise self.fail(root, "key", "missing; every deal derives from the league's key: give "
                                         "'key: ' and 64 hex digits (arena league init draws one)")
        node = top["key"][1]
        text = node.value if isinstance(node, ScalarNode) else None
        if not isinstance(text, str) or not KEY.match(text):
            raise self.fail(node, "key", "expected 32 to 64 hex digits (a key of 128 to 256 bits), such as "
                                         "'arena league init' draws")
        return {"key": text.lower()}

    def _matchmaking(self, node: Node) -> Matchmaking:
        entries = self.mapping(node, "matchmaking", _MATCHMAKING_KEYS,
                               what="a mapping (placement_matches, max_width)")
        values = {key: self.integer(entries[key][1], f"matchmaking.{key}", lo, 10_000)
                  for key, lo in (("placement_matches", 1), ("max_width", 1)) if key in entries}
        return Matchmaking(**values)

    def _submissions(self, node: Node) -> Submissions:
        entries = self.mapping(node, "submissions", ("http", *_SUBMISSION_LIMITS),
                               what="a mapping (http, max_upload_mb, max_unpacked_mb, max_files, max_ratio, per_hour)")
        values: dict[str, Any] = {key: self.integer(entries[key][1], f"submissions.{key}", lo, hi)
                                  for key, (lo, hi) in _SUBMISSION_LIMITS.items() if key in entries}
        if "http" in entries:
            values["http"] = self.boolean(entries["http"][1], "submissions.http")
        return Submissions(**values)

    def _build(self, node: Node, path: str) -> Build:
        """A shell command (the limits' defaults), or a mapping: command, seconds, memory_mb."""
        if isinstance(node, ScalarNode):
            return Build(self._shell(node, path))
        entries = self.mapping(node, path, _BUILD_KEYS, what="a shell command, or a mapping (command, seconds, "
                               "memory_mb)", required=("command",))
        values: dict[str, Any] = {"command": self._shell(entries["command"][1], f"{path}.command")}
        if "seconds" in entries:
            values["seconds"] = self.number(entries["seconds"][1], f"{path}.seconds", positive=True, hi=24 * 3600)
        if "memory_mb" in entries:
            values["memory_mb"] = self.integer(entries["memory_mb"][1], f"{path}.memory_mb", 16, 1 << 20,
                                               "a number of megabytes")
        return Build(**values)

    def _shell(self, node: Node, path: str) -> str:
        command = self.string(node, path, "a shell command (a string)")
        if not command.strip():
            raise self.fail(node, path, "expected a shell command, got an empty string")
        return command

    def _token(self, node: Node, path: str) -> str:
        value = self.string(node, path, "a token's hash (a string)")
        if not TOKEN_HASH.match(value):
            raise self.fail(node, path, "expected a token's hash, sha256: and 64 hex digits, as 'arena league "
                                        "token' writes it (never the token itself)")
        return value

    def _authors(self, top: Mapping[str, tuple[Node, Node]]) -> tuple[tuple[BotConfig, ...],
                                                                   tuple[tuple[str, str], ...],
                                                                   tuple[tuple[str, Build], ...]]:
        default = top["command"][1] if "command" in top else None
        limits = self.limits(top["limits"][1], "limits") if "limits" in top else BotLimits()
        items = self.sequence(top["authors"][1], "authors", "a list of authors (each a mapping with a name)")
        authors: list[BotConfig] = []
        tokens: list[tuple[str, str]] = []
        builds: list[tuple[str, Build]] = []
        first: dict[str, int] = {}
        for i, item in enumerate(items):
            author, token, build = self._author(item, f"authors[{i}]", default, limits)
            if token is not None:
                tokens.append((author.name, token))
            if build is not None:
                builds.append((author.name, build))
            if author.name in first:
                raise self.fail(item, f"authors[{i}].name", f"duplicate author '{author.name}' "
                                                           f"(already on line {first[author.name]})")
            first[author.name] = _line(item)
            authors.append(author)
        return tuple(authors), tuple(tokens), tuple(builds)

    def _author(self, node: Node, path: str, default: Node | None,
                limits: BotLimits) -> tuple[BotConfig, str | None, Build | None]:
        """The author's entry, the hash of their token for submissions over HTTP
        and their own build step (each None if they have none)."""
        entries = self.mapping(node, path, _AUTHOR_KEYS, what="an author (a mapping with name, and command "
                               "or builtin)", required=("name",))
        for key in ("token", "build"):
            if "builtin" in entries and key in entries:
                raise self.fail(entries[key][0], f"{path}.{key}", "not used with 'builtin' (a house player "
                                                                  "hands nothing in); remove it")
        token = self._token(entries["token"][1], f"{path}.token") if "token" in entries else None
        build = self._build(entries["build"][1], f"{path}.build") if "build" in entries else None
        return self._program(node, entries, path, default, limits), token, build

    def _program(self, node: Node, entries: Mapping[str, tuple[Node, Node]], path: str, default: Node | None,
                 limits: BotLimits) -> BotConfig:
        if "command" in entries or "builtin" in entries:
            assert isinstance(node, MappingNode)
            # The tournament's bot entry, read without the league's own key.
            plain = MappingNode(node.tag, [(k, v) for k, v in node.value
                                           if not (isinstance(k, ScalarNode) and k.value in ("token", "build"))],
                                node.start_mark, node.end_mark, node.flow_style)
            bot, _ = self.bot(plain, path)
            return bot if bot.command is None or "limits" in entries else dataclasses.replace(bot, limits=limits)
        if default is None:
            raise self.fail(node, f"{path}.command", "missing; give the author a 'command' (how a version "
                                                     "of theirs is run), or give the league one ('command:')")
        name_node = entries["name"][1]
        name = self.string(name_node, f"{path}.name", "an author's name (a string)")
        if not _NAME_RE.match(name):
            raise self.fail(name_node, f"{path}.name", f"expected a name of 1-40 letters, digits, '_', '.', '+' "
                                                       f"or '-' (starting with a letter or digit), got {name!r}")
        env = self.env(entries["env"][1], f"{path}.env") if "env" in entries else ()
        own = self.limits(entries["limits"][1], f"{path}.limits") if "limits" in entries else limits
        return BotConfig(name=name, command=self.command(default, "command"), dir=self.base, env=env,
                         limits=own, line=_line(node))


def template(name: str) -> str:
    """A new league file, every key shown and explained, with a fresh key of 256 random bits: any
    published match's deal seed lets one try keys until one gives it, so a key is out of reach of that."""
    return _TEMPLATE.format(name=name, key=secrets.token_hex(KEY_BYTES))


_TEMPLATE = """\
# A league: a competition that runs for weeks.  Authors hand in versions
# (arena league submit DIR AUTHOR PATH); each is checked (arena check's
# scenarios) and, if it passes, placed by playing, and from then on the table
# is current (arena league run DIR; arena league serve DIR --port 8000).
# A mistake here is reported as one line: league.yaml:LINE: key: what is wrong.
# The keys shared with a tournament file mean what they mean there
# (tournaments/example.yaml explains each).

name: {name}

# Seats per table (2-8).  Every table is played in as many seatings as it has
# seats, on one duplicate deal, so seat and card luck cancel.
players: 3

# The rules: a preset and overrides of any setting.
rules:
  preset: shanghai
  # contracts: [2S3, S3+R4]

# The time control of every version, in seconds.
time:
  startup: 10
  per_decision: 1
  bank: null

# A version forfeits its seat in a match after this many faults (timeouts,
# crashes, illegal or malformed replies).
faults:
  max_strikes: 3

# The sandbox every version runs in: auto (bubblewrap where it runs), bwrap, none.
sandbox: auto

# Matches in parallel (auto: one per core); arena league run --jobs overrides it.
jobs: auto

# The key every deal derives from (256 random bits, in hex): keep it secret while
# the league runs (an export does not hold it), and keep the one drawn.  A file
# of an older arena has 'seed:' instead, which keeps dealing as it did.
key: {key}

# How an author's version is run, in its own copy of the folder they handed
# in (an author may give their own 'command').
command: python3 bot.py

# Limits of every version's processes (an author may give their own 'limits').
limits:
  memory_mb: 512
  cpu_seconds: 600

# How tables are chosen.  A new version plays first: placement_matches of
# them before the others go on, and it is "placed" once its rank range is at
# most max_width ranks wide.  Otherwise the tables go where the ratings are
# least certain.
matchmaking:
  placement_matches: 30
  max_width: 3

# Versions handed in over HTTP (POST /submit to arena league serve): off
# unless http is true.  An author needs a token: arena league token DIR AUTHOR
# prints a new one, once, and writes only its hash under the author here.
# The limits of one archive (zip or tar, gzipped or not): its size, what it
# unpacks to (size, files, and size over the archive's: a bomb is refused),
# and how many an author may hand in an hour.
submissions:
  http: false
  max_upload_mb: 8
  max_unpacked_mb: 64
  max_files: 1000
  max_ratio: 100
  per_hour: 10

# A build step for every version (an author may give their own 'build'):
# a shell command run in a writable copy of the version's folder, in the
# sandbox its matches have, before its check; the version then plays from
# what the build left.  A build that fails or runs over its time refuses the
# version, with the last lines it wrote.  Off unless given.
# build:
#   command: make bot
#   seconds: 300
#   memory_mb: 2048

# Who may hand in versions.  A builtin author (random, greedy, passive) is a
# house player: always in the league, never checked.
authors:
  - name: house-greedy
    builtin: greedy
  - name: house-random
    builtin: random
  # - name: alice
  #   token: sha256:...            # written by arena league token, for submissions over HTTP
  # - name: bob
  #   command: java -jar bot.jar
"""
