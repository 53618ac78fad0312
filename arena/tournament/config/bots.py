"""Reading a tournament file's bot entries into ``BotConfig`` values.

``BotReader`` extends the generic ``yamlreader.NodeReader`` with the ``bots``
section: each bot's name, its program (``command``, with ``dir``, ``env``,
``build``, ``limits`` and ``sandbox``) or its ``builtin`` player.
``configreader.Reader`` adds the tournament's other sections to it.  Every
mistake is a one-line ``ConfigError`` at the offending value, as there.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ...players.registry import BUILTIN_PLAYERS
from .model import BotConfig, BotLimits, BotSandbox
from .nodes import NodeReader, _line, _yaml_error

__all__ = ["BotReader"]

_BOT_KEYS = ("name", "command", "builtin", "dir", "env", "build", "limits", "sandbox")
_BOT_SANDBOX_KEYS = ("read", "write", "scratch")
_LIMIT_KEYS = ("memory_mb", "cpu_seconds", "max_line_bytes", "stderr_max_bytes", "processes", "ponder")

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}$")
_ENV_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class BotReader(NodeReader):
    """Reads the ``bots`` section of a tournament file from its YAML nodes."""

    def bots(self, node: Node) -> list[BotConfig]:
        items = self.sequence(node, "bots", "a list of bots (each a mapping with name and command)")
        if len(items) < 2:
            raise self.fail(node, "bots", f"expected at least 2 bots, got {len(items)}")
        bots: list[BotConfig] = []
        first_line: dict[str, int] = {}
        for i, item in enumerate(items):
            bot, name_node = self.bot(item, f"bots[{i}]")
            if bot.name in first_line:
                raise self.fail(name_node, f"bots[{i}].name",
                                f"duplicate bot name '{bot.name}' (already used on line {first_line[bot.name]}); "
                                f"expected a unique name")
            first_line[bot.name] = _line(name_node)
            bots.append(bot)
        return bots

    def bot(self, node: Node, path: str) -> tuple[BotConfig, Node]:
        entries = self.mapping(node, path, _BOT_KEYS, what="a bot (a mapping with name and command)",
                               required=("name",))
        name_node = entries["name"][1]
        name = self.string(name_node, f"{path}.name", "a bot name (a string)")
        if not _NAME_RE.match(name):
            raise self.fail(name_node, f"{path}.name",
                            f"expected a bot name of 1-40 letters, digits, '_', '.', '+' or '-' "
                            f"(starting with a letter or digit), got {name!r}")

        if "command" in entries and "builtin" in entries:
            raise self.fail(entries["builtin"][0], f"{path}.builtin",
                            "give either 'command' (a program) or 'builtin' (an in-process player), not both")
        if "builtin" in entries:
            bnode = entries["builtin"][1]
            value = self.value(bnode) if isinstance(bnode, ScalarNode) else None
            if not isinstance(value, str) or value not in BUILTIN_PLAYERS:
                raise self.fail(bnode, f"{path}.builtin",
                                f"expected a built-in player ({_builtin_choices()}), got {self.got(bnode)}")
            for key in ("dir", "env", "build", "limits", "sandbox"):
                if key in entries:
                    raise self.fail(entries[key][0], f"{path}.{key}",
                                    "not used with 'builtin' (a built-in player runs inside the arena); "
                                    "remove it or give a 'command'")
            return BotConfig(name=name, builtin=value, line=_line(node)), name_node
        if "command" not in entries:
            raise self.fail(node, f"{path}.command",
                            f"missing; a bot needs 'command' (the program to run) or 'builtin' "
                            f"({_builtin_choices()})")

        command = self.command(entries["command"][1], f"{path}.command")
        cwd = self.directory(entries["dir"][1], f"{path}.dir") if "dir" in entries else self.base
        if "dir" in entries and not cwd.is_dir():
            raise self.fail(entries["dir"][1], f"{path}.dir", f"expected an existing directory, but {cwd} is not one")
        env = self.env(entries["env"][1], f"{path}.env") if "env" in entries else ()
        build = None
        if "build" in entries:
            build = self.string(entries["build"][1], f"{path}.build", "a shell command (a string)")
            if not build.strip():
                raise self.fail(entries["build"][1], f"{path}.build", "expected a shell command, got an empty string")
        limits = self.limits(entries["limits"][1], f"{path}.limits") if "limits" in entries else BotLimits()
        box = self.bot_sandbox(entries["sandbox"][1], f"{path}.sandbox") if "sandbox" in entries else BotSandbox()
        return BotConfig(name=name, command=command, dir=cwd, env=env, build=build, limits=limits,
                         sandbox=box, line=_line(node)), name_node

    def bot_sandbox(self, node: Node, path: str) -> BotSandbox:
        entries = self.mapping(node, path, _BOT_SANDBOX_KEYS,
                               what="a mapping with read, write (lists of paths) and scratch")
        paths: dict[str, tuple[Path, ...]] = {}
        for key in ("read", "write"):
            if key not in entries:
                continue
            items = self.sequence(entries[key][1], f"{path}.{key}", "a list of paths")
            found: list[Path] = []
            for i, item in enumerate(items):
                where = f"{path}.{key}[{i}]"
                p = self.directory(item, where)
                if not p.exists():
                    raise self.fail(item, where, f"expected an existing path, but {p} does not exist")
                if key == "write" and p.resolve() == Path("/"):
                    raise self.fail(item, where, "expected a folder the bot may write, not / (the host's whole "
                                                 "file system, /proc with every process and /tmp included)")
                found.append(p)
            paths[key] = tuple(found)
        scratch = self.boolean(entries["scratch"][1], f"{path}.scratch") if "scratch" in entries else False
        return BotSandbox(read=paths.get("read", ()), write=paths.get("write", ()), scratch=scratch)

    def command(self, node: Node, path: str) -> tuple[str, ...]:
        expected = "a string or a list of strings"
        if isinstance(node, SequenceNode):
            argv: list[str] = []
            for i, item in enumerate(node.value):
                value = self.value(item) if isinstance(item, ScalarNode) else None
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    value = str(item.value)  # e.g. ["./bot", "--depth", 3]
                if not isinstance(value, str):
                    raise self.fail(item, f"{path}[{i}]", f"expected a string, got {self.got(item)}")
                argv.append(value)
        elif isinstance(node, ScalarNode) and isinstance(self.value(node), str):
            try:
                argv = shlex.split(self.value(node))
            except ValueError as err:
                raise self.fail(node, path, f"cannot split the command into words: {err}") from None
        else:
            raise self.fail(node, path, f"expected {expected}, got {self.got(node)}")
        if not argv or not argv[0]:
            raise self.fail(node, path, f"expected {expected} naming a program, got an empty command")
        return tuple(argv)

    def env(self, node: Node, path: str) -> tuple[tuple[str, str], ...]:
        if not isinstance(node, MappingNode):
            raise self.fail(node, path, f"expected a mapping of variable names to strings, got {self.got(node)}")
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag != "tag:yaml.org,2002:merge" and isinstance(key_node, ScalarNode):
                if key_node.value in seen:
                    raise self.fail(key_node, f"{path}.{key_node.value}", "duplicate key")
                seen.add(key_node.value)
        try:
            self.constructor.flatten_mapping(node)  # "<<" merge keys; later entries win
        except yaml.YAMLError as err:
            raise _yaml_error(self.file, err) from None
        pairs: dict[str, str] = {}
        for key_node, value_node in node.value:
            key = self.value(key_node) if isinstance(key_node, ScalarNode) else None
            if not isinstance(key, str) or not _ENV_RE.match(key):
                raise self.fail(key_node, path, f"expected an environment variable name, got {self.got(key_node)}")
            value = self.value(value_node) if isinstance(value_node, ScalarNode) else None
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                value = str(value_node.value)
            if not isinstance(value, str):
                raise self.fail(value_node, f"{path}.{key}",
                                f"expected a string (quote it), got {self.got(value_node)}")
            if "\0" in value:
                raise self.fail(value_node, f"{path}.{key}", "expected a string without NUL characters")
            pairs[key] = value
        return tuple(pairs.items())

    def limits(self, node: Node, path: str) -> BotLimits:
        entries = self.mapping(node, path, _LIMIT_KEYS, what="a mapping of limits")
        values: dict[str, Any] = {}
        if "memory_mb" in entries:
            values["memory_mb"] = self.integer(entries["memory_mb"][1], f"{path}.memory_mb", 16, 1 << 20,
                                               "a number of megabytes")
        if "cpu_seconds" in entries:
            values["cpu_seconds"] = self.number(entries["cpu_seconds"][1], f"{path}.cpu_seconds",
                                                positive=True, hi=86_400)
        if "max_line_bytes" in entries:
            values["max_line_bytes"] = self.integer(entries["max_line_bytes"][1], f"{path}.max_line_bytes",
                                                    1024, 1 << 30, "a number of bytes")
        if "stderr_max_bytes" in entries:
            values["stderr_max_bytes"] = self.integer(entries["stderr_max_bytes"][1], f"{path}.stderr_max_bytes",
                                                      0, 1 << 34, "a number of bytes")
        if "processes" in entries:
            values["processes"] = self.integer(entries["processes"][1], f"{path}.processes",
                                               1, 100_000, "a number of processes")
        if "ponder" in entries:
            values["ponder"] = self.boolean(entries["ponder"][1], f"{path}.ponder")
        return BotLimits(**values)


def _builtin_choices() -> str:
    names = [repr(n) for n in BUILTIN_PLAYERS]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
