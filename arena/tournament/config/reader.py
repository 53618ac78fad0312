"""Reading a tournament file's sections into the ``config`` dataclasses.

``Reader`` extends ``botreader.BotReader`` (the bots, each bot's command,
env, limits and sandbox, on the generic ``yamlreader.NodeReader``) with the
tournament file's other sections (the tournament, rules, time, faults,
settle, executor, challengers): it checks each key against what the
tournament file allows and builds the ``config`` dataclasses; any mistake
becomes a one-line ``ConfigError`` pointing at the offending value, at the key
for unknown keys, or at the enclosing mapping for missing keys.  Key paths
look like ``bots[2].command`` (list indexes count from 0).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ...process import TimeControl
from ...process.confine.sandbox import MODES as SANDBOX_MODES
from ...shanghai.errors import RulesetError
from ...shanghai.ruleset import MAX_PLAYERS, MIN_PLAYERS, Ruleset
from ...words import did_you_mean
from .bots import BotReader
from .model import (
    DEFAULT_PLAYERS,
    EXECUTORS,
    FILE_MODES,
    FORMATS,
    GAUNTLET,
    MAX_MATCHES,
    OUTPUT_FORMATS,
    RATINGS,
    ROUND_ROBIN,
    SEATINGS,
    SWISS,
    ConfigError,
    ExecutorSettings,
    FaultSettings,
    Settle,
    TournamentConfig,
)
from .nodes import _line, _suggest, compose

__all__ = ["Reader", "compose"]

_TOP_KEYS = ("name", "bots", "players", "rules", "time", "faults", "format", "challengers",
             "deals", "settle", "rating", "duplicate", "seating", "seed", "jobs", "affinity", "anonymous", "out", "sandbox",
             "executor")
_TIME_KEYS = ("startup", "per_decision", "bank")
# Old spellings, still read: the file's keys now match the command line's
# options (--out, --per-decision).  The protocol's names are the bots' business.
_TOP_ALIASES = {"output": "out"}
_TIME_ALIASES = {"per_move": "per_decision"}
_FAULT_KEYS = ("max_strikes", "strict")
_SETTLE_KEYS = ("confidence", "max_matches", "max_minutes")
_EXECUTOR_KEYS = ("backend", "address", "files")
_RULE_KEYS = tuple(Ruleset().to_mapping())  # "preset" and every setting


class Reader(BotReader):
    """Reads a tournament file's sections from its composed YAML nodes."""

    # -- the tournament ---------------------------------------------------------------
    def tournament(self, root: Node | None, default_name: str) -> TournamentConfig:
        if root is None:
            raise ConfigError(self.file, 1, None,
                              "the file is empty; expected a mapping of tournament settings with at least 'bots'")
        top = self.mapping(root, "", _TOP_KEYS, what="a mapping of tournament settings (name, bots, ...)",
                           required=("bots",), extensions=True, aliases=_TOP_ALIASES)
        values: dict[str, Any] = {}
        key_lines = tuple((k, _line(kn)) for k, (kn, _) in top.items())

        name = values["name"] = self._name(top, default_name)
        bots_key, bots_node = top["bots"]
        bots = self.bots(bots_node)
        values["bots"] = tuple(bots)
        players_node = top["players"][1] if "players" in top else None
        players = values["players"] = self._players(players_node)
        values["rules"] = self.rules(top.get("rules"), players, players_node)
        if "time" in top:
            values["time"] = self.time(top["time"][1])
        if "faults" in top:
            values["faults"] = self.faults(top["faults"][1])
        fmt = values["format"] = self._format(top)
        challengers = values["challengers"] = self._gauntlet_challengers(top, fmt, [b.name for b in bots])
        self._check_table_size(players, players_node if players_node is not None else bots_key,
                               players_node is not None, len(bots), fmt,
                               len(challengers))
        self._match_options(top, fmt, values)
        self._running_options(top, values)
        values["output"] = self._output(top, name)
        return TournamentConfig(path=Path(self.file), dir=self.base, key_lines=key_lines, **values)

    def _name(self, top: Mapping[str, tuple[Node, Node]], default_name: str) -> str:
        if "name" not in top:
            return default_name
        node = top["name"][1]
        name = self.string(node, "name", "a tournament name (a string)").strip()
        if not name:
            raise self.fail(node, "name", "expected a tournament name, got an empty string")
        return name

    def _players(self, node: Node | None) -> int:
        if node is None:
            return DEFAULT_PLAYERS
        return self.integer(node, "players", MIN_PLAYERS, MAX_PLAYERS, "a number of players per table")

    def _format(self, top: Mapping[str, tuple[Node, Node]]) -> str:
        if "format" not in top:
            return ROUND_ROBIN
        node = top["format"][1]
        fmt = self.value(node) if isinstance(node, ScalarNode) else None
        if fmt not in FORMATS:
            hint = did_you_mean(fmt, FORMATS) if isinstance(fmt, str) else ""
            if isinstance(fmt, str) and fmt in OUTPUT_FORMATS:
                hint = " (the output's format is not set here: arena run --format)"
            raise self.fail(node, "format", f"expected the tournament's format, 'round_robin', 'gauntlet' "
                                            f"or 'swiss', got {self.got(node)}{hint}")
        return str(fmt)

    def _gauntlet_challengers(self, top: Mapping[str, tuple[Node, Node]], fmt: str,
                              names: list[str]) -> tuple[str, ...]:
        if fmt == GAUNTLET:
            if "challengers" not in top:
                raise self.fail(top["format"][1], "challengers",
                                "missing; format: gauntlet needs 'challengers', a list of bot names")
            return self.challengers(top["challengers"][1], names)
        if "challengers" in top:
            raise self.fail(top["challengers"][0], "challengers",
                            "only used with 'format: gauntlet' (this tournament is a round robin)")
        return ()

    def _check_table_size(self, players: int, where: Node, players_set: bool, nbots: int, fmt: str,
                          nchallengers: int) -> None:
        """The table size against the number of bots; ``where`` is the
        players value, or the bots key when players is the default."""
        shown_players = f"{players} players per table" + ("" if players_set else " (the default)")
        if fmt in (ROUND_ROBIN, SWISS) and players > nbots:
            raise self.fail(where, "players",
                            f"{shown_players} but only {nbots} bots; expected at most {nbots} "
                            f"(set 'players' or add bots)")
        if fmt == GAUNTLET:
            field_size = nbots - nchallengers
            if players - 1 > field_size:
                raise self.fail(where, "players",
                                f"{shown_players} needs {players - 1} field bots besides each challenger, "
                                f"but the field (bots that are not challengers) has {field_size}; "
                                f"expected at most {field_size + 1} players")

    def _match_options(self, top: Mapping[str, tuple[Node, Node]], fmt: str, values: dict[str, Any]) -> None:
        """What the matches play and how they are ranked: deals, settle,
        rating, duplicate, seating, affinity, anonymous, seed."""
        if "deals" in top:
            values["deals"] = self.integer(top["deals"][1], "deals", 1, 10_000, "a number of deals per table")
        if "settle" in top:
            values["settle"] = self.settle(top["settle"][1])
        elif fmt == SWISS:
            values["settle"] = Settle()
        if "settle" in values and fmt == GAUNTLET:
            raise self.fail(top["settle"][0], "settle", "not available with 'format: gauntlet' (a gauntlet "
                            "ranks challengers against a fixed field; use round_robin or swiss)")
        if "rating" in top:
            values["rating"] = self.choice(top["rating"][1], "rating", RATINGS,
                                           "'hands' (each hand is a ranked game) or 'matches' (each match is one)")
        if "duplicate" in top:
            values["duplicate"] = self.boolean(top["duplicate"][1], "duplicate")
        if "seating" in top:
            values["seating"] = self.choice(top["seating"][1], "seating", SEATINGS,
                                            "'balanced' (neighbours balanced over the deals) or 'rotate' (the "
                                            "rotations of the listed order, as results stored before 'seating' "
                                            "existed were played)")
        if "affinity" in top:
            values["affinity"] = self.boolean(top["affinity"][1], "affinity")
        if "anonymous" in top:
            values["anonymous"] = self.boolean(top["anonymous"][1], "anonymous")
        if "seed" in top:
            values["seed"] = self.integer(top["seed"][1], "seed", -(2**63), 2**63 - 1, "a whole number")

    def _running_options(self, top: Mapping[str, tuple[Node, Node]], values: dict[str, Any]) -> None:
        """Where and how the matches run: jobs, sandbox, executor."""
        if "jobs" in top:
            values["jobs"] = self._jobs(top["jobs"][1])
        if "sandbox" in top:
            values["sandbox"] = self.choice(top["sandbox"][1], "sandbox", SANDBOX_MODES,
                                            ", ".join(map(repr, SANDBOX_MODES)))
        if "executor" in top:
            values["executor"] = self.executor(top["executor"][1])

    def _jobs(self, node: Node) -> int | None:
        """A number of parallel matches; None for 'auto' (or an empty value)."""
        value = self.value(node) if isinstance(node, ScalarNode) else None
        if value == "auto" or value is None and isinstance(node, ScalarNode) and node.value == "":
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            return self.integer(node, "jobs", 1, 1024, "a number of parallel matches")
        raise self.fail(node, "jobs", f"expected a number of parallel matches or 'auto', got {self.got(node)}")

    def _output(self, top: Mapping[str, tuple[Node, Node]], name: str) -> Path:
        if "out" in top:
            return self.directory(top["out"][1], self.spelt(top["out"], "out"))
        slug = re.sub(r"[^A-Za-z0-9._+-]+", "-", name).strip("-.") or "tournament"
        return self.base / "arena-results" / slug

    # -- the other sections -----------------------------------------------------------
    def rules(self, entry: tuple[Node, Node] | None, players: int, players_node: Node | None) -> Ruleset:
        if entry is None:
            rules = Ruleset()
            rules_node: Node | None = None
            entries: dict[str, tuple[Node, Node]] = {}
        else:
            rules_node = entry[1]
            if isinstance(rules_node, ScalarNode) and self.value(rules_node) is None:
                entries = {}
            else:
                entries = self.mapping(rules_node, "rules", _RULE_KEYS,
                                       what="a mapping of rule settings (preset and overrides)")
            data = {key: self.value(value_node) for key, (_, value_node) in entries.items()}
            try:
                rules = Ruleset.from_mapping(data)
            except RulesetError as err:
                raise self.ruleset_error(err, rules_node, entries) from None
            except (TypeError, ValueError) as err:
                raise self.fail(rules_node, "rules", f"not a valid ruleset: {err}") from None
        # the cards must go round this table size (the engine's own check); lazy: the engine is
        # ~15 % of import arena.cli's CPU time (measured), and only reading a tournament file needs it
        from ...shanghai.game import Game
        try:
            Game.seeded(rules, players, 0)
        except RulesetError as err:
            culprit = next((k for k in (err.setting, "decks") if k in entries), None)
            if culprit is not None:
                node, key = entries[culprit][1], f"rules.{culprit}"
            elif players_node is not None:
                node, key = players_node, "players"
            else:
                node, key = rules_node, f"rules.{err.setting}"
            raise ConfigError(self.file, _line(node) if node is not None else None, key,
                              _ruleset_message(err)) from None
        return rules

    def ruleset_error(self, err: RulesetError, rules_node: Node, entries: Mapping[str, tuple[Node, Node]]) -> ConfigError:
        """Map a ``RulesetError`` (setting like ``decks.5`` or ``contracts[3]``) to its node."""
        setting = err.setting
        parts = re.findall(r"[^.\[\]]+|\[\d+\]", setting)
        node: Node = rules_node
        if parts and parts[0] in entries:
            node = entries[parts[0]][1]
            for part in parts[1:]:
                child = None
                if part.startswith("[") and isinstance(node, SequenceNode):
                    i = int(part[1:-1])
                    child = node.value[i] if i < len(node.value) else None
                elif isinstance(node, MappingNode):
                    for key_node, value_node in node.value:
                        if isinstance(key_node, ScalarNode) and str(key_node.value) == part:
                            child = value_node
                            break
                if child is None:
                    break
                node = child
        return self.fail(node, f"rules.{setting}", _ruleset_message(err))

    def time(self, node: Node) -> TimeControl:
        entries = self.mapping(node, "time", _TIME_KEYS, what="a mapping of times in seconds (startup, per_decision, "
                               "bank)", aliases=_TIME_ALIASES)
        values: dict[str, Any] = {}
        if "startup" in entries:
            values["startup_seconds"] = self.number(entries["startup"][1], "time.startup", positive=True, hi=600)
        if "per_decision" in entries:
            values["per_decision_seconds"] = self.number(entries["per_decision"][1],
                                                         self.spelt(entries["per_decision"], "time.per_decision"),
                                                         positive=True, hi=600)
        if "bank" in entries:
            bank_node = entries["bank"][1]
            if isinstance(bank_node, ScalarNode) and self.value(bank_node) is None:
                values["bank_seconds"] = None
            else:
                values["bank_seconds"] = self.number(bank_node, "time.bank", positive=False, hi=86_400)
        return TimeControl(**values)

    def choice(self, node: Node, path: str, options: Sequence[str], expected: str) -> str:
        """A scalar that must be one of ``options``."""
        value = self.value(node) if isinstance(node, ScalarNode) else None
        if value not in options:
            raise self.fail(node, path, f"expected {expected}, got {self.got(node)}")
        return str(value)

    def settle(self, node: Node) -> Settle:
        entries = self.mapping(node, "settle", _SETTLE_KEYS,
                               what="a mapping (confidence, max_matches, max_minutes)")
        values: dict[str, Any] = {}
        if "confidence" in entries:
            conf_node = entries["confidence"][1]
            conf = self.number(conf_node, "settle.confidence", positive=True, hi=0.999)
            if conf < 0.5:
                raise self.fail(conf_node, "settle.confidence", f"expected a confidence between 0.5 and 0.999 "
                                                                f"(e.g. 0.95), got {conf}")
            values["confidence"] = conf
        if "max_matches" in entries:
            values["max_matches"] = self.integer(entries["max_matches"][1], "settle.max_matches", 1, MAX_MATCHES,
                                                 "a number of matches")
        if "max_minutes" in entries:
            values["max_minutes"] = self.number(entries["max_minutes"][1], "settle.max_minutes",
                                                positive=True, hi=100_000)
        return Settle(**values)

    def executor(self, node: Node) -> ExecutorSettings:
        """``executor: ray``, or a mapping (backend, address, files)."""
        backends = "'local' or 'ray'"
        if isinstance(node, ScalarNode):
            return ExecutorSettings(self.choice(node, "executor", EXECUTORS, backends))
        entries = self.mapping(node, "executor", _EXECUTOR_KEYS, what="'local', 'ray' or a mapping "
                               "(backend, address, files)", required=("backend",))
        values: dict[str, Any] = {"backend": self.choice(entries["backend"][1], "executor.backend", EXECUTORS,
                                                         backends)}
        if "address" in entries:
            address = self.string(entries["address"][1], "executor.address",
                                  "a Ray cluster's address (host:port, ray://host:port or auto)").strip()
            values["address"] = address or None
        if "files" in entries:
            values["files"] = self.choice(entries["files"][1], "executor.files", FILE_MODES,
                                          "'ship' (Ray copies the tournament's directory to every node) or "
                                          "'shared' (the same paths on every node)")
        if values["backend"] != "ray" and len(values) > 1:
            raise self.fail(node, "executor", "address and files are for 'backend: ray'")
        return ExecutorSettings(**values)

    def faults(self, node: Node) -> FaultSettings:
        entries = self.mapping(node, "faults", _FAULT_KEYS, what="a mapping (max_strikes, strict)")
        values: dict[str, Any] = {}
        if "max_strikes" in entries:
            values["max_strikes"] = self.integer(entries["max_strikes"][1], "faults.max_strikes", 1, 1000,
                                                 "a number of strikes")
        if "strict" in entries:
            values["strict"] = self.boolean(entries["strict"][1], "faults.strict")
        return FaultSettings(**values)

    def challengers(self, node: Node, names: Sequence[str]) -> tuple[str, ...]:
        items = self.sequence(node, "challengers", "a list of bot names")
        if not items:
            raise self.fail(node, "challengers", "expected at least one bot name, got an empty list")
        out: list[str] = []
        for i, item in enumerate(items):
            name = self.string(item, f"challengers[{i}]", "a bot name")
            if name not in names:
                raise self.fail(item, f"challengers[{i}]",
                                f"unknown bot '{name}'{_suggest(name, names)}")
            if name in out:
                raise self.fail(item, f"challengers[{i}]", f"'{name}' is listed twice")
            out.append(name)
        if len(out) >= len(names):
            raise self.fail(node, "challengers", "every bot is a challenger; expected at least one bot left as the field")
        return tuple(out)


def _ruleset_message(err: RulesetError) -> str:
    text = str(err)
    prefix = f"setting '{err.setting}': "
    return text[len(prefix):] if text.startswith(prefix) else text
