"""Reading YAML nodes with line numbers and key paths.

The file is composed into YAML nodes (not just loaded), so every value keeps
the line it came from.  ``NodeReader`` walks those nodes: it reads plain values
(strings, whole numbers, numbers of seconds, booleans, directories), checks a
mapping's keys against the ones allowed, and turns any mistake into a one-line
``ConfigError`` pointing at the offending value, at the key for unknown keys,
or at the enclosing mapping for missing keys.  Key paths look like
``bots[2].command`` (list indexes count from 0).  What a tournament file holds
is read by ``configreader.Reader``, built on this.  The nodes come from
``bounded.compose``, which bounds what a hostile file can make the reader do.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ...words import did_you_mean
from .bounded import _line, _yaml_error, compose, construct
from .model import ConfigError

__all__ = ["NodeReader", "compose"]


def _suggest(word: str, choices: Iterable[str], aliases: Mapping[str, str] | None = None) -> str:
    """`` (did you mean 'x'?)`` or the list of ``choices``; a word close to an
    old spelling in ``aliases`` gets the current one suggested."""
    choices = list(choices)
    return did_you_mean(word, choices, aliases) or f"; expected one of: {', '.join(choices)}"


def _both_spellings(name: str, key: str, first: str, line: int) -> str:
    """The error for one key given by its current and its old name."""
    old = key if key != name else first
    return (f"'{old}' is the old name of '{name}', and both are given (the other on line {line}); "
            f"give it once, as '{name}'")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


class NodeReader:
    """Walks the composed YAML nodes, building values and one-line errors."""

    def __init__(self, file: str, base: Path) -> None:
        self.file = file
        self.base = base
        self.constructor = SafeConstructor()

    # -- errors and plain values ------------------------------------------------------
    def fail(self, node: Node | None, key: str | None, message: str) -> ConfigError:
        return ConfigError(self.file, _line(node) if node is not None else None, key, message)

    def value(self, node: Node, path: str | None = None) -> Any:
        return construct(self.constructor, self.file, node, path)

    def got(self, node: Node) -> str:
        if isinstance(node, MappingNode):
            return "a mapping"
        if isinstance(node, SequenceNode):
            return "a list"
        value = self.value(node)
        if value is None:
            return "an empty value"
        if isinstance(value, str):
            text = value if len(value) <= 60 else value[:57] + "..."
            return repr(text)
        return str(node.value)

    def mapping(self, node: Node, path: str, known: Sequence[str], *, what: str,
                required: Sequence[str] = (), extensions: bool = False,
                aliases: Mapping[str, str] | None = None) -> dict[str, tuple[Node, Node]]:
        """The entries of a mapping node with only ``known`` keys: key -> (key node, value node).

        ``aliases`` maps old spellings to keys of ``known``: an entry given by
        its old spelling is returned under the current one (its key node keeps
        the spelling, for errors about its value); both spellings of one key
        are an error."""
        aliases = aliases or {}
        if not isinstance(node, MappingNode):
            raise self.fail(node, path or None, f"expected {what}, got {self.got(node)}")
        seen: dict[str, Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.value(key_node) if isinstance(key_node, ScalarNode) else None
            if not isinstance(key, str):
                raise self.fail(key_node, path or None, f"expected a key name, got {self.got(key_node)}")
            if key in seen:
                raise self.fail(key_node, _join(path, key),
                                f"duplicate key (first given on line {_line(seen[key])})")
            seen[key] = key_node
        try:
            self.constructor.flatten_mapping(node)  # resolve "<<" merge keys
        except yaml.YAMLError as err:
            raise _yaml_error(self.file, err) from None
        entries: dict[str, tuple[Node, Node]] = {}
        for key_node, value_node in node.value:
            key = self.value(key_node) if isinstance(key_node, ScalarNode) else None
            if not isinstance(key, str):
                raise self.fail(key_node, path or None, f"expected a key name, got {self.got(key_node)}")
            if extensions and key.startswith("x-"):
                continue
            name = aliases.get(key, key)
            if name not in known:
                raise self.fail(key_node, _join(path, key), f"unknown key{_suggest(key, known, aliases)}")
            # One spelling twice is a duplicate key (above) or a "<<" merge's override (later wins).
            first = entries[name][0] if name in entries else None
            if first is not None and self.value(first) != key:
                raise self.fail(key_node, _join(path, key), _both_spellings(name, key, str(self.value(first)),
                                                                            _line(first)))
            entries[name] = (key_node, value_node)
        for key in required:
            if key not in entries:
                raise self.fail(node, _join(path, key), f"missing; {what} needs '{key}'")
        return entries

    def spelt(self, entry: tuple[Node, Node], path: str) -> str:
        """``path`` with its last key as the file spells it (an old name, from
        ``mapping``'s aliases), so that an error names what the file says."""
        given = self.value(entry[0])
        head, _, _ = path.rpartition(".")
        return _join(head, str(given))

    def sequence(self, node: Node, path: str, what: str) -> list[Node]:
        if not isinstance(node, SequenceNode):
            raise self.fail(node, path, f"expected {what}, got {self.got(node)}")
        return list(node.value)

    def string(self, node: Node, path: str, what: str = "a string") -> str:
        value = self.value(node, path) if isinstance(node, ScalarNode) else None
        if not isinstance(value, str):
            raise self.fail(node, path, f"expected {what}, got {self.got(node)}")
        return value

    def integer(self, node: Node, path: str, lo: int, hi: int | None = None, what: str = "a whole number") -> int:
        value = self.value(node, path) if isinstance(node, ScalarNode) else None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(node, path, f"expected {what}, got {self.got(node)}")
        if value < lo or (hi is not None and value > hi):
            span = f"{lo}..{hi}" if hi is not None else f"at least {lo}"
            raise self.fail(node, path, f"expected {what} {span}, got {value}")
        return value

    def number(self, node: Node, path: str, *, positive: bool, hi: float) -> float:
        value = self.value(node, path) if isinstance(node, ScalarNode) else None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
            raise self.fail(node, path, f"expected a number of seconds, got {self.got(node)}")
        if (value <= 0 if positive else value < 0) or value > hi:
            lo = "more than 0" if positive else "0 or more"
            raise self.fail(node, path, f"expected a number of seconds, {lo} and at most {hi:g}, got {self.got(node)}")
        return float(value)

    def boolean(self, node: Node, path: str) -> bool:
        value = self.value(node, path) if isinstance(node, ScalarNode) else None
        if not isinstance(value, bool):
            raise self.fail(node, path, f"expected true or false, got {self.got(node)}")
        return value

    def directory(self, node: Node, path: str) -> Path:
        text = self.string(node, path, "a directory (a string)")
        if not text.strip():
            raise self.fail(node, path, "expected a directory, got an empty string")
        return Path(os.path.normpath(self.base / os.path.expanduser(text)))
