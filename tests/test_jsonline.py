"""The strict line decoder (arena.jsonline), by example and by seeded fuzzing.

- each refusal has its one-line reason: invalid UTF-8 (with the byte), BOM,
  NUL, NaN/Infinity, 1e400, huge integers, duplicate keys (nested too), deep
  nesting (50,000 brackets, open or closed, inside an object too), long
  strings, lone surrogates, anything but an object;
- the limits are exact: 20 digits pass, 21 do not; depth 32 passes, 33 not;
  brackets inside strings do not count; CR LF and surrounding blanks pass;
- fuzz: random bytes, and valid replies mutated byte by byte, only ever give
  a dict or a JSONLineError with a short one-line reason; random JSON objects
  within the limits decode to what json.loads gives.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from arena.jsonline import DEFAULT_LIMITS, JSONLimits, JSONLineError, decode_object

REPLY = b'{"id": 7, "go_down": [["7H", "7S", "JK"], {"cards": "8C 8D 8S", "kind": "set"}], "discard": "QH"}'


def refusal(raw: bytes, limits: JSONLimits = DEFAULT_LIMITS) -> str:
    with pytest.raises(JSONLineError) as info:
        decode_object(raw, limits)
    reason = info.value.reason
    assert "\n" not in reason and len(reason) < 120, reason
    return reason


@pytest.mark.parametrize("raw,reason", [
    (b'{"id": 1, "name": "caf\xc3"}', "invalid UTF-8 at byte 22"),
    (b'\xff{"id": 1}', "invalid UTF-8 at byte 0"),
    (b'{"id": 1, "x": "\xed\xa0\x80"}', "invalid UTF-8 at byte 16"),     # an encoded surrogate
    (b'\xef\xbb\xbf{"id": 1}', "byte-order mark"),
    (b'{"id": 1}\x00', "NUL byte at byte 9"),
    (b'{"id": "\x00"}', "NUL byte at byte 8"),
    (b'{"id": NaN}', "NaN is not JSON"),
    (b'{"id": [Infinity]}', "Infinity is not JSON"),
    (b'{"id": {"x": -Infinity}}', "-Infinity is not JSON"),
    (b'{"id": 1e400}', "number 1e400 is out of range"),
    (b'{"id": -1.5E+999}', "number -1.5E+999 is out of range"),
    (b'{"id": 0.' + b"1" * 70 + b'}', "number of 72 characters"),
    (b'{"id": ' + b"9" * 5000 + b'}', "integer with 5000 digits (at most 20)"),
    (b'{"id": -' + b"9" * 5000 + b'}', "integer with 5000 digits"),
    (b'{"x": [1, 2, ' + b"1" * 21 + b']}', "integer with 21 digits"),
    (b'{"id": 1, "id": 2}', "duplicate key 'id'"),
    (b'{"a": [{"k": 1, "k": 1}]}', "duplicate key 'k'"),
    (b'{"' + b"k" * 100 + b'": 1, "' + b"k" * 100 + b'": 2}', "duplicate key 'kkkk"),
    (b"[" * 50000, "nesting deeper than 32"),
    (b"[" * 50000 + b"]" * 50000, "nesting deeper than 32"),
    (b'{"a": ' + b"{\"b\": " * 50000 + b"1" + b"}" * 50001, "nesting deeper than 32"),
    (b'{"a": "' + b"x" * 4097 + b'"}', "string of 4097 characters (at most 4096)"),
    (b'{"' + b"k" * 5000 + b'": 1}', "string of 5000 characters"),
    (b'{"a": ["\\ud800"]}', "lone surrogate \\ud800"),
    (b'{"\\udfff": 1}', "lone surrogate \\udfff"),
    (b"[1, 2]", "expected a JSON object, got array"),
    (b'"id"', "expected a JSON object, got string"),
    (b"7", "expected a JSON object, got number"),
    (b"null", "expected a JSON object, got null"),
    (b"true", "expected a JSON object, got boolean"),
    (b'{"id": 1} {"id": 2}', "not valid JSON (Extra data at column 11)"),
    (b'{"id": 1,}', "not valid JSON"),
    (b"{'id': 1}", "not valid JSON"),
    (b'{"a": "tab\there"}', "not valid JSON (Invalid control character"),
    (b"", "not valid JSON (Expecting value at column 1)"),
    (b"\r", "not valid JSON"),
])
def test_refusals_have_their_reason(raw: bytes, reason: str) -> None:
    assert reason in refusal(raw)


@pytest.mark.parametrize("raw,value", [
    (b'{"id": 1}\r', {"id": 1}),                                   # CR LF line ending
    (b' \t{"id": 1} \r', {"id": 1}),
    (b'{"id": 99999999999999999999}', {"id": 10**20 - 1}),         # 20 digits
    (b'{"id": -99999999999999999999}', {"id": -(10**20 - 1)}),
    (b'{"x": 1.5e300, "y": -0.0, "z": 1E-400}', {"x": 1.5e300, "y": -0.0, "z": 0.0}),   # underflow is 0
    (b'{"a": "' + b"x" * 4096 + b'"}', {"a": "x" * 4096}),
    (b'{"a": "' + b"[[[[{{{{" * 10 + b'"}', {"a": "[[[[{{{{" * 10}),   # brackets in strings do not count
    (b'{"a": "\\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}', {"a": '"' + "[" * 40}),
    (b'{"a": "\\ud83d\\ude00 \xc3\xa9"}', {"a": "\U0001F600 \u00e9"}),   # a surrogate pair is one character
    (b'{"a": "\\u0000"}', {"a": "\x00"}),                          # escaped, it is a character like any other
    (b"{}", {}),
])
def test_accepted(raw: bytes, value: Any) -> None:
    assert decode_object(raw) == value


def test_depth_limit_is_exact() -> None:
    limit = DEFAULT_LIMITS.max_depth
    ok = b'{"a":' + b"[" * (limit - 1) + b"]" * (limit - 1) + b"}"
    value = decode_object(ok)["a"]
    for _ in range(limit - 2):
        (value,) = value
    assert value == []
    too_deep = b'{"a":' + b"[" * limit + b"]" * limit + b"}"
    assert "nesting deeper than 32" in refusal(too_deep)
    wide = b'{"a": [' + b"[], " * 1000 + b"[]]}"                   # many brackets, shallow
    assert len(decode_object(wide)["a"]) == 1001


def test_limits_can_be_set() -> None:
    small = JSONLimits(max_int_digits=3, max_depth=2, max_string_chars=5)
    assert decode_object(b'{"a": [999, "12345"]}', small) == {"a": [999, "12345"]}
    assert "integer with 4 digits (at most 3)" in refusal(b'{"a": 1000}', small)
    assert "nesting deeper than 2" in refusal(b'{"a": [[1]]}', small)
    assert "string of 6 characters" in refusal(b'{"a": "123456"}', small)


# -- fuzz ------------------------------------------------------------------------------

def check_one(raw: bytes) -> None:
    """A dict, or a JSONLineError with a short one-line reason; nothing else."""
    try:
        value = decode_object(raw)
    except JSONLineError as exc:
        assert exc.reason and "\n" not in exc.reason and len(exc.reason) < 120, exc.reason
        return
    assert isinstance(value, dict)


def test_fuzz_random_bytes() -> None:
    rng = random.Random(1)
    alphabet = b'{}[]":,0123456789-+.eE \\/tfnrulasNIy\r\n\t\x00\xff\xc3\xa9\xed\xa0\x80\xef\xbb\xbf'
    for i in range(4000):
        size = rng.choice([1, 2, 5, 20, 100, 1000])
        if i % 2:
            raw = bytes(rng.randrange(256) for _ in range(size))
        else:
            raw = bytes(rng.choice(alphabet) for _ in range(size))
        check_one(raw)


def test_fuzz_mutated_replies() -> None:
    """Valid replies with bytes flipped, inserted, deleted, cut, or hostile text spliced in."""
    rng = random.Random(2)
    splices = [b"9" * 5000, b"NaN", b"Infinity", b"-Infinity", b"1e400", b"[" * 5000, b"\xff", b"\x00",
               b"\xef\xbb\xbf", b'"id": 1, ', b"\\ud800", b"1" * 21, b"0." + b"5" * 80]
    for _ in range(4000):
        raw = bytearray(REPLY)
        for _ in range(rng.randrange(1, 4)):
            pos = rng.randrange(len(raw) + 1)
            op = rng.randrange(5)
            if op == 0 and pos < len(raw):
                raw[pos] = rng.randrange(256)
            elif op == 1:
                raw[pos:pos] = bytes([rng.randrange(256)])
            elif op == 2:
                del raw[pos:pos + rng.randrange(1, 5)]
            elif op == 3:
                raw[pos:pos] = rng.choice(splices)
            else:
                raw = raw[:pos]
        check_one(bytes(raw))


def random_value(rng: random.Random, depth: int) -> Any:
    pick = rng.randrange(8 if depth < 30 else 5)
    if pick == 0:
        return rng.choice([None, True, False])
    if pick == 1:
        return rng.randrange(-(10**20) + 1, 10**20)
    if pick == 2:
        return rng.uniform(-1e300, 1e300)
    if pick in (3, 4):
        return "".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(0xA0, 0xD7FF),
                                       rng.randrange(0x10000, 0x10FFFF), ord('"'), ord("\\"), ord("[")]))
                       for _ in range(rng.randrange(20)))
    if pick in (5, 6):
        return [random_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {f"k{i}{random_value(rng, 30) if rng.random() < 0.2 else ''}": random_value(rng, depth + 1)
            for i in range(rng.randrange(4))}


def test_fuzz_valid_objects_within_the_limits_decode_like_json_loads() -> None:
    rng = random.Random(3)
    for _ in range(1500):
        value = {"id": rng.randrange(10**6), "v": random_value(rng, 2)}
        for text in (json.dumps(value), json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\r"):
            raw = text.encode("utf-8")
            assert decode_object(raw) == json.loads(text)
