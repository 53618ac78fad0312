"""Strict decoding of one line a bot wrote: bytes -> one JSON object.

Every line a bot sends goes through ``decode_object``; anything it refuses is
a ``JSONLineError`` whose ``reason`` is one short line ("integer with 5000
digits", "duplicate key 'id'", "invalid UTF-8 at byte 12").  The limits keep
a hostile line from costing more than its length: the stdlib parser is used
with hooks that see every number, constant and object before Python builds
it, and nesting is measured before parsing (the C scanner would otherwise
recurse until ``RecursionError``).

Refused: invalid UTF-8, a byte-order mark, NUL bytes, anything but one JSON
object, ``NaN``/``Infinity``, numbers out of a float's range, integers of more
than ``max_int_digits`` digits, duplicate keys, nesting deeper than
``max_depth``, strings longer than ``max_string_chars`` or holding lone
surrogates (which could not be written out as UTF-8 again).  Whitespace
around the object is ignored, so a line ending in CR LF is accepted.
The line length itself is capped earlier, by the reader (``max_line_bytes``).

It is the reference reader of the protocol: the typed msgspec codec
(``arena/protocol/wire.py``) reads well-formed replies faster, and hands every
line it does not take whole to this decoder, whose reasons the docs quote.

Shared by the process layer (a handshake, a bare ``BotProcess.request``) and
the protocol layer (replies): neither imports the other.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

JSONObject = dict[str, Any]
# The id of a reply that has none (a reply decoder's answer, see exchange.Decode).
NO_ID: Any = object()


@dataclass(frozen=True, slots=True)
class JSONLimits:
    """What one decoded line may hold.  The protocol's own replies need far
    less: small ids and meld numbers, cards and names of a few characters,
    nesting of about five levels."""

    max_int_digits: int = 20
    max_depth: int = 32
    max_string_chars: int = 4096
    max_number_chars: int = 64        # the text of a non-integer number


DEFAULT_LIMITS = JSONLimits()


class JSONLineError(ValueError):
    """A line that is not one acceptable JSON object; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_BOM = b"\xef\xbb\xbf"
# A JSON string literal (the unrolled form: linear, no backtracking blow-up).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
# +1 for an opening bracket, -1 for a closing one (indexed by the byte).
_DEPTH_STEP = [1 if b in b"[{" else -1 for b in range(256)]
_JSON_TYPES = {dict: "object", list: "array", str: "string", int: "number", float: "number",
               bool: "boolean", type(None): "null"}


def json_type(value: object) -> str:
    """The JSON name of a decoded value's type (``object``, ``number``...)."""
    return _JSON_TYPES.get(type(value), type(value).__name__)


def decode_object(raw: bytes, limits: JSONLimits = DEFAULT_LIMITS) -> JSONObject:
    """Decode one line (without its newline) as a JSON object, within ``limits``."""
    if raw.startswith(_BOM):
        raise JSONLineError("starts with a byte-order mark (BOM); send plain UTF-8")
    nul = raw.find(b"\0")
    if nul >= 0:
        raise JSONLineError(f"NUL byte at byte {nul}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JSONLineError(f"invalid UTF-8 at byte {exc.start}") from None
    _check_depth(text, limits.max_depth)
    try:
        value = _decoder(limits).decode(text)
    except json.JSONDecodeError as exc:
        raise JSONLineError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:        # cannot happen after _check_depth; kept as a safety net
        raise JSONLineError(f"nesting deeper than {limits.max_depth}") from None
    if not isinstance(value, dict):
        raise JSONLineError(f"expected a JSON object, got {json_type(value)}")
    _check_strings(value, limits.max_string_chars)
    return value


def _check_depth(text: str, max_depth: int) -> None:
    """Refuse nesting deeper than ``max_depth`` before the parser recurses.

    Most lines have fewer brackets than the limit, and are let through at
    the cost of two counts.  Otherwise the string literals are cut out and the
    running depth computed over the remaining brackets (in C loops: a line of
    a million brackets costs a fraction of a second)."""
    if text.count("[") + text.count("{") <= max_depth:
        return
    brackets = _STRING.sub("", text).encode("utf-8").translate(None, _NOT_BRACKETS)
    depth = max(accumulate(map(_DEPTH_STEP.__getitem__, brackets)), default=0)
    if depth > max_depth:
        raise JSONLineError(f"nesting deeper than {max_depth}")


_DECODERS: dict[JSONLimits, json.JSONDecoder] = {}


def _decoder(limits: JSONLimits) -> json.JSONDecoder:
    """A stdlib decoder whose hooks enforce ``limits`` (one per limits value)."""
    decoder = _DECODERS.get(limits)
    if decoder is None:
        def parse_int(text: str) -> int:
            digits = len(text) - text.startswith("-")
            if digits > limits.max_int_digits:
                raise JSONLineError(f"integer with {digits} digits (at most {limits.max_int_digits})")
            return int(text)

        def parse_float(text: str) -> float:
            if len(text) > limits.max_number_chars:
                raise JSONLineError(f"number of {len(text)} characters "
                                    f"(at most {limits.max_number_chars})")
            value = float(text)
            if math.isinf(value):
                raise JSONLineError(f"number {text} is out of range")
            return value

        decoder = json.JSONDecoder(parse_int=parse_int, parse_float=parse_float,
                                   parse_constant=_refuse_constant,
                                   object_pairs_hook=_unique_keys, strict=True)
        _DECODERS[limits] = decoder
    return decoder


def _refuse_constant(name: str) -> Any:
    raise JSONLineError(f"{name} is not JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> JSONObject:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise JSONLineError(f"duplicate key {_short(key)}")
            seen.add(key)
    return obj


def _check_strings(value: JSONObject, max_chars: int) -> None:
    """Every key and string value: not too long, and encodable as UTF-8."""
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, sub in item.items():
                _check_string(key, max_chars)
                if isinstance(sub, (dict, list)):
                    stack.append(sub)
                elif isinstance(sub, str):
                    _check_string(sub, max_chars)
        else:
            for sub in item:
                if isinstance(sub, (dict, list)):
                    stack.append(sub)
                elif isinstance(sub, str):
                    _check_string(sub, max_chars)


def _check_string(text: str, max_chars: int) -> None:
    if len(text) > max_chars:
        raise JSONLineError(f"string of {len(text)} characters (at most {max_chars})")
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise JSONLineError(f"string with a lone surrogate \\u{ord(text[exc.start]):04x}") from None


def _short(key: str, limit: int = 40) -> str:
    return repr(key if len(key) <= limit else key[:limit] + "...")
