"""Reading a YAML or JSON file within bounds: no hang, no traceback, whatever the file holds.

A hostile tournament, deal or ruleset file must not hang the arena or end it
in a traceback, so reading is bounded:

- ``read_text``: a regular file (not a directory, FIFO or device) of at most
  ``MAX_FILE_BYTES`` bytes, in UTF-8;
- ``compose``: at most ``MAX_VALUES`` values, counting each use of a YAML
  alias as the values its anchor expands to (a "billion laughs" file is
  refused while it is composed, before anything walks it), at most
  ``MAX_DEPTH`` levels of nesting (no ``RecursionError``), and numbers of at
  most ``MAX_NUMBER_CHARS`` characters (Python refuses to convert a
  5,000-digit one);
- ``construct``: a value whose explicit tag it cannot hold (``!!int abc``)
  is an error, not a ``ValueError``;
- ``load_data``: a deal or ruleset file, JSON or YAML, with the same bounds
  and only JSON's kinds of values.

Every mistake is a one-line ``ConfigError`` naming the file, and the line and
key path where they are known.  Anchors, aliases and ``<<`` merge keys within
the bounds work as usual.
"""

from __future__ import annotations

import json
import os
import stat
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.error import Mark
from yaml.events import AliasEvent, ScalarEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .model import ConfigError

__all__ = ["compose", "construct", "read_text", "load_data",
           "MAX_FILE_BYTES", "MAX_VALUES", "MAX_DEPTH", "MAX_NUMBER_CHARS"]

#: Larger files are refused unread: a tournament or deal file is a few kilobytes.
MAX_FILE_BYTES = 1 << 20
#: Values (scalars, lists, mappings) in a file, counting each use of a YAML alias
#: as the values it stands for.
MAX_VALUES = 100_000
#: Lists and mappings nested deeper than this are refused.
MAX_DEPTH = 64
#: A longer number (5,000 digits, say) is refused before Python converts it.
MAX_NUMBER_CHARS = 100

_NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")


# -- reading the file --------------------------------------------------------------

def read_text(path: str | os.PathLike[str], what: str = "a YAML file") -> str:
    """The UTF-8 text of a regular file of at most ``MAX_FILE_BYTES``; ``ConfigError`` otherwise."""
    shown = os.fspath(path)
    try:
        raw = _read_regular(shown, what)
    except FileNotFoundError:
        raise ConfigError(shown, None, None, "no such file") from None
    except OSError as err:
        raise ConfigError(shown, None, None, f"cannot read: {err.strerror or err}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ConfigError(shown, None, None, f"larger than {MAX_FILE_BYTES // 1024} KiB, expected {what}")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise ConfigError(shown, line, None, f"not UTF-8 text (byte {err.start}), expected {what}") from None


def _read_regular(shown: str, what: str) -> bytes:
    """Up to ``MAX_FILE_BYTES + 1`` bytes of a regular file (not a directory, FIFO or device)."""
    # O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below).
    fd = os.open(shown, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise ConfigError(shown, None, None, f"is a directory, expected {what}")
        if not stat.S_ISREG(mode):
            raise ConfigError(shown, None, None, f"is not a regular file, expected {what}")
        chunks: list[bytes] = []
        left = MAX_FILE_BYTES + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


# -- composing within bounds -------------------------------------------------------

class _LimitError(yaml.YAMLError):
    """A bound of this module was crossed while composing (at ``mark``, under ``key``)."""

    def __init__(self, mark: Mark, key: str, message: str) -> None:
        super().__init__(message)
        self.mark = mark
        self.key = key
        self.message = message


class _BoundedLoader(yaml.SafeLoader):
    """``SafeLoader`` whose composer counts values, nesting and number lengths as it goes.

    Aliases compose to the anchored node itself, so the nodes form a small graph
    that a walk (or ``repr`` of the loaded value) expands into a huge tree; each
    alias is therefore counted as the number of values its anchor expands to.
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._count = 0
        self._sizes: dict[str, int] = {}  # anchor -> values it expands to, once composed
        self._path: list[str] = []

    def _key(self) -> str:
        parts = [p for p in self._path if p]
        text = "".join(p if p.startswith("[") or i == 0 else f".{p}" for i, p in enumerate(parts))
        return text if len(text) <= 60 else text[:57] + "..."

    def _add(self, n: int, mark: Mark, alias: bool) -> None:
        self._count += n
        if self._count > MAX_VALUES:
            why = "YAML aliases expand to" if alias else "the file holds"
            raise _LimitError(mark, self._key(), f"too many values ({why} more than {MAX_VALUES:,} values)")

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        event = self.peek_event()
        part = _path_part(parent, index)
        if part is not None:
            self._path.append(part)
        try:
            if isinstance(event, AliasEvent):
                if event.anchor in self.anchors and event.anchor not in self._sizes:
                    raise _LimitError(event.start_mark, self._key(),
                                      f"the alias *{event.anchor} is inside its own anchor (a value cannot contain itself)")
                self._add(self._sizes.get(event.anchor, 0), event.start_mark, alias=True)
                return super().compose_node(parent, index)  # an undefined alias is YAML's own error
            if isinstance(event, ScalarEvent):
                self._check_number(event)
            elif len(self._path) >= MAX_DEPTH:  # one level deeper than its parent, as a key or a value
                raise _LimitError(event.start_mark, self._key(), f"nested more than {MAX_DEPTH} levels deep")
            self._add(1, event.start_mark, alias=False)
            before = self._count - 1
            node = super().compose_node(parent, index)
            if event.anchor is not None:
                self._sizes[event.anchor] = self._count - before
            return node
        finally:
            if part is not None:
                self._path.pop()

    def _check_number(self, event: ScalarEvent) -> None:
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.resolve(ScalarNode, event.value, event.implicit)
        if tag in _NUMBER_TAGS and len(event.value) > MAX_NUMBER_CHARS:
            raise _LimitError(event.start_mark, self._key(),
                              f"a number of {len(event.value):,} characters is too long "
                              f"(at most {MAX_NUMBER_CHARS})")


def _path_part(parent: Node | None, index: Any) -> str | None:
    """The key-path part of a node composed under ``parent`` ("" for a mapping's key itself)."""
    if isinstance(parent, SequenceNode):
        return f"[{index}]"
    if isinstance(parent, MappingNode):
        if index is None:
            return ""
        return str(index.value) if isinstance(index, ScalarNode) else "?"
    return None


def compose(shown: str, text: str) -> Node | None:
    """The YAML nodes of ``text`` (None for an empty file); ``ConfigError`` if it is not YAML."""
    loader: _BoundedLoader | None = None
    try:
        loader = _BoundedLoader(text)  # checks the characters first
        return loader.get_single_node()
    except _LimitError as err:
        raise ConfigError(shown, err.mark.line + 1, err.key or None, err.message) from None
    except yaml.reader.ReaderError as err:
        line = text.count("\n", 0, err.position) + 1
        raise ConfigError(shown, line, None,
                          f"not valid YAML: control character #x{err.character:04x} is not allowed "
                          f"(is this a text file?)") from None
    except yaml.YAMLError as err:
        raise _yaml_error(shown, err) from None
    finally:
        if loader is not None:
            loader.dispose()


def _yaml_error(shown: str, err: yaml.YAMLError) -> ConfigError:
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    problem = getattr(err, "problem", None) or str(err)
    context = getattr(err, "context", None)
    context_mark = getattr(err, "context_mark", None)
    if context and problem.startswith("but "):
        problem = f"{context}, {problem}"
    elif context and getattr(err, "problem", None):
        where = f", line {context_mark.line + 1}" if context_mark is not None else ""
        problem = f"{problem} ({context}{where})"
    hint = next((h for found, h in _HINTS if found in problem), "")
    return ConfigError(shown, mark.line + 1 if mark is not None else None, None,
                       f"not valid YAML: {problem}{hint}")


# What people do to a YAML file, said in their words: the parser's names for
# these (a block end, a mapping value) tell nobody what to change.
_INDENTATION = "; check the indentation of this line against the lines above it"
_HINTS = (
    ("expected <block end>", _INDENTATION),
    ("did not find expected key", _INDENTATION),
    ("did not find expected '-' indicator", _INDENTATION),
    ("mapping values are not allowed here", f"{_INDENTATION}, or quote a value that holds ': '"),
    ("found character '\\t' that cannot start", "; indent with spaces: YAML does not allow tabs there"),
)


def construct(constructor: SafeConstructor, shown: str, node: Node, key: str | None = None) -> Any:
    """The Python value of ``node`` (at ``key``); ``ConfigError`` for a value its tag cannot hold."""
    try:
        return constructor.construct_object(node, deep=True)
    except yaml.YAMLError as err:
        raise _yaml_error(shown, err) from None
    except (ValueError, TypeError, KeyError, AttributeError, OverflowError):
        # SafeConstructor trusts explicit tags: "!!int abc" or "!!bool maybe" fail in int(), a dict lookup...
        text = node.value if isinstance(node, ScalarNode) else "this"
        raise ConfigError(shown, _line(node), key,
                          f"not valid YAML: {str(text)[:60]!r} is not a valid {node.tag.rsplit(':', 1)[-1]}") from None


# -- JSON or YAML data (deal files, ruleset files) ------------------------------------

def load_data(path: str | os.PathLike[str], what: str) -> Any:
    """The plain data of a JSON file (name ending in .json) or a YAML file, within this module's bounds.

    YAML values other than JSON's (dates, binary, sets) are refused, so whatever
    reads the data sees only dicts, lists, strings, numbers, booleans and None.
    """
    shown = os.fspath(path)
    text = read_text(shown, what)
    if shown.lower().endswith(".json"):
        return _load_json(shown, text)
    root = compose(shown, text)
    if root is None:
        return None
    constructor = SafeConstructor()
    _plain(shown, constructor, root, "")
    return construct(constructor, shown, root)


def _plain(shown: str, constructor: SafeConstructor, node: Node, key: str) -> None:
    """Refuse non-JSON YAML values (by tag); depth and size are already bounded by ``compose``."""
    kind = node.tag.rsplit(":", 1)[-1]
    if isinstance(node, ScalarNode):
        if node.tag not in _JSON_SCALAR_TAGS:
            raise ConfigError(shown, _line(node), key or None,
                              f"expected a string, number, true/false or null, got a YAML {kind}")
        return
    if node.tag not in _JSON_COLLECTION_TAGS:
        raise ConfigError(shown, _line(node), key or None, f"expected a list or mapping, got a YAML {kind}")
    if isinstance(node, SequenceNode):
        for i, item in enumerate(node.value):
            _plain(shown, constructor, item, f"{key}[{i}]")
        return
    try:
        constructor.flatten_mapping(node)  # "<<" merge keys
    except yaml.YAMLError as err:
        raise _yaml_error(shown, err) from None
    for key_node, value_node in node.value:
        if not (isinstance(key_node, ScalarNode) and key_node.tag in _JSON_SCALAR_TAGS):
            raise ConfigError(shown, _line(key_node), key or None, "expected a key (a string or number)")
        name = str(key_node.value)[:40]
        _plain(shown, constructor, value_node, f"{key}.{name}" if key else name)


_JSON_SCALAR_TAGS = tuple(f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null"))
_JSON_COLLECTION_TAGS = ("tag:yaml.org,2002:seq", "tag:yaml.org,2002:map")


def _load_json(shown: str, text: str) -> Any:
    def number(digits: str) -> int | float:
        if len(digits) > MAX_NUMBER_CHARS:
            raise _JsonLimit(f"a number of {len(digits):,} characters is too long (at most {MAX_NUMBER_CHARS})",
                             digits)
        return float(digits) if any(c in digits for c in ".eE") else int(digits)

    try:
        data = json.loads(text, parse_int=number, parse_float=number)
    except json.JSONDecodeError as err:
        raise ConfigError(shown, err.lineno, None, f"not valid JSON: {err.msg}") from None
    except _JsonLimit as err:
        line = text.count("\n", 0, max(text.find(err.digits), 0)) + 1
        raise ConfigError(shown, line, None, err.message) from None
    except RecursionError:
        # The C decoder guards its recursion; this is its documented way out for deep arrays.
        raise ConfigError(shown, None, None, f"nested more than {MAX_DEPTH} levels deep") from None
    _check_json(shown, data)
    return data


class _JsonLimit(ValueError):
    def __init__(self, message: str, digits: str) -> None:
        super().__init__(message)
        self.message = message
        self.digits = digits


def _check_json(shown: str, data: Any) -> None:
    """Depth and size of decoded JSON within the YAML bounds (no recursion: data may be ~1000 deep)."""
    count = 0
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        count += 1
        if count > MAX_VALUES:
            raise ConfigError(shown, None, None, f"too many values (the file holds more than {MAX_VALUES:,} values)")
        if isinstance(value, (dict, list)):
            if depth >= MAX_DEPTH:
                raise ConfigError(shown, None, None, f"nested more than {MAX_DEPTH} levels deep")
            items = value.values() if isinstance(value, dict) else value
            stack.extend((item, depth + 1) for item in items)


def _line(node: Node) -> int:
    return node.start_mark.line + 1
