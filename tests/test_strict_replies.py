"""Replies and the 'ready' answer are checked the same way in every kind.

- the id: a JSON integer; anything else (3.0, "3", true, null, [3]) is
  ``malformed``, another integer is ``wrong_id``, in draw, buy and play alike;
- unknown fields are ``malformed`` at the top of every reply and of 'ready',
  and inside lay-offs, swaps and meld objects; ``type`` must be a string;
- fuzz: every field of every reply kind (nested ones too) replaced by values
  of every JSON type, seeded: ``parse_reply`` never raises anything but
  ``MalformedInput``, its reason is one bounded line, and the shipped JSON
  Schemas accept exactly the replies ``parse_reply`` accepts;
- the same through the strict line decoder: huge integers, NaN, 1e400 and
  duplicate keys in any field of any reply end as a one-line refusal.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from typing import Any

import pytest

from arena.jsonline import JSONLineError, decode_object
from arena.protocol.messages import ProtocolError, parse_ready, parse_reply
from arena.protocol.schemas import load_schema
from arena.shanghai.errors import MalformedInput

# A valid reply of each kind with every field the kind has, nested ones too.
FULL = {
    "draw": {"id": 5, "type": "draw", "draw": "stock"},
    "buy": {"id": 5, "type": "buy", "buy": True},
    "play": {"id": 5, "type": "play",
             "swap": [{"meld": 1, "card": "6C", "take": "JK"}],
             "go_down": [["7H", "7S", "JK"], "8C 8D 8S", {"cards": ["4D", "5D", "6D", "7D"], "kind": "run"},
                         {"cards": "9H 9S 9C"}],
             "lay_off": [{"meld": 0, "card": "8D", "end": "high"}],
             "discard": "9D"},
    "steps": {"id": 5, "steps": [{"swap": {"meld": 1, "card": "6C", "take": "JK"}},
                                 {"go_down": [["7H", "7S", "JK"], {"cards": ["4D", "5D", "6D"], "kind": "run"}]},
                                 {"lay_off": {"meld": 3, "card": "JK", "end": "low"}}],
              "discard": None},
}
READY = {"type": "ready", "name": "bot"}
KIND_OF = {"draw": "draw", "buy": "buy", "play": "play", "steps": "play"}


# -- the id and unknown fields, the same in every kind -------------------------------

NOT_INTEGER_IDS = [5.0, "5", True, False, None, [5], {"id": 5}, 5.5]


@pytest.mark.parametrize("name", list(FULL))
@pytest.mark.parametrize("bad_id", NOT_INTEGER_IDS, ids=repr)
def test_a_non_integer_id_is_malformed_in_every_kind(name: str, bad_id: Any) -> None:
    reply = {**FULL[name], "id": bad_id}
    for req_id in (5, 1, 0):                 # True == 1 and False == 0 in Python
        with pytest.raises(ProtocolError) as info:
            parse_reply(reply, req_id, KIND_OF[name])
        assert info.value.fault == "malformed", (reply, req_id)
        assert "must be a whole number" in str(info.value)


@pytest.mark.parametrize("name", list(FULL))
def test_another_integer_id_is_wrong_id_in_every_kind(name: str) -> None:
    for other in (4, 6, -5, 0, 10**19):
        with pytest.raises(ProtocolError) as info:
            parse_reply({**FULL[name], "id": other}, 5, KIND_OF[name])
        assert info.value.fault == "wrong_id"


@pytest.mark.parametrize("name", list(FULL))
def test_unknown_fields_are_malformed_in_every_kind(name: str) -> None:
    assert parse_reply(FULL[name], 5, KIND_OF[name]) is not None
    for extra in ("extra", "Draw", "ID", "source", "comment"):
        with pytest.raises(ProtocolError) as info:
            parse_reply({**FULL[name], extra: 1}, 5, KIND_OF[name])
        assert info.value.fault == "malformed" and f"unknown field(s) ['{extra}']" in str(info.value)


@pytest.mark.parametrize("name", list(FULL))
def test_the_type_field_is_optional_but_a_string(name: str) -> None:
    without = {k: v for k, v in FULL[name].items() if k != "type"}
    assert parse_reply(without, 5, KIND_OF[name]) == parse_reply({**without, "type": "anything"}, 5, KIND_OF[name])
    for bad in (1, None, ["play"]):
        with pytest.raises(ProtocolError, match="must be a string"):
            parse_reply({**without, "type": bad}, 5, KIND_OF[name])


@pytest.mark.parametrize("where,bad", [
    ("swap", [{"meld": 1, "card": "6C", "takes": "JK"}]),
    ("lay_off", [{"meld": 0, "card": "8D", "ende": "high"}]),
    ("go_down", [{"cards": ["7H", "7S", "JK"], "kinds": "set"}]),
    ("go_down", False), ("swap", 0), ("lay_off", ""), ("go_down", {}),
])
def test_nested_unknown_fields_and_falsy_non_lists_are_malformed(where: str, bad: Any) -> None:
    with pytest.raises(MalformedInput):
        parse_reply({"id": 5, where: bad, "discard": "9D"}, 5, "play")
    with pytest.raises(MalformedInput):
        parse_reply({"id": 5, "steps": [{where: bad[0] if isinstance(bad, list) else bad}], "discard": "9D"},
                    5, "play")


def test_ready_is_as_strict_as_replies() -> None:
    assert parse_ready(READY) == "bot"
    for bad, why in [({**READY, "version": 2}, "unknown field(s) ['version']"),
                     ({**READY, "name": 5}, "\"name\""),
                     ({**READY, "name": "a\x1b[2Jb"}, "control characters"),
                     ({**READY, "name": "two\nlines"}, "control characters"),
                     ({**READY, "name": "evil\u202egnp"}, "control characters"),
                     ({**READY, "name": "zero\u200bwidth"}, "control characters"),
                     ({**READY, "type": 1}, "\"type\": \"ready\"")]:
        with pytest.raises(ProtocolError) as info:
            parse_ready(bad)
        assert why in str(info.value) and info.value.fault == "malformed"


# -- fuzz: wrong types everywhere, parser and schemas agree ---------------------------

def paths(value: Any, prefix: tuple = ()) -> Iterator[tuple]:
    """Every place in a reply that holds a value (keys of objects, list items)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield (*prefix, k)
            yield from paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield (*prefix, i)
            yield from paths(v, (*prefix, i))


def replaced(value: Any, path: tuple, new: Any) -> Any:
    out = copy.deepcopy(value)
    target = out
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = new
    return out


def random_json(rng: random.Random, depth: int = 0) -> Any:
    pick = rng.randrange(12 if depth < 3 else 8)
    if pick == 0:
        return None
    if pick == 1:
        return rng.random() < 0.5
    if pick == 2:
        return rng.choice([0, -1, 1, 2, 5, 7, 2**31, -(10**19), 10**19])
    if pick == 3:
        return rng.choice([0.0, 1.5, -2.25, 5.0, 1e300])
    if pick == 4:
        return rng.choice(["", "x", "7H", "qc", "JK", "stock", "upcard", "low", "high", "set", "run",
                           "8C 8D 8S", " 10s ", "11H", "\u00e9", "\x00", "7H" * 100])
    if pick == 5:
        return "".join(rng.choice("7HSJKQ 10*") for _ in range(rng.randrange(6)))
    if pick in (6, 7):
        return rng.choice([[], {}, ["7H"], {"meld": 0}])
    if pick < 10:
        return [random_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {rng.choice(["meld", "card", "end", "take", "cards", "kind", "go_down", "x"]): random_json(rng, depth + 1)
            for _ in range(rng.randrange(4))}


@pytest.fixture(scope="module")
def validators() -> dict[str, Any]:
    js = pytest.importorskip("jsonschema")
    return {k: js.Draft202012Validator(load_schema(f"reply_{k}")) for k in ("draw", "buy", "play")}


@pytest.mark.parametrize("name", list(FULL))
def test_fuzz_every_field_with_every_type(validators: dict[str, Any], name: str) -> None:
    """Seeded: each field of the reply, nested ones too, and each missing field."""
    rng = random.Random(f"fields-{name}")
    kind = KIND_OF[name]
    base = FULL[name]
    cases = [replaced(base, p, random_json(rng)) for p in paths(base) if p != ("id",) for _ in range(25)]
    cases += [replaced(base, p[:-1], {k: v for k, v in _at(base, p[:-1]).items() if k != p[-1]})
              if len(p) > 1 else {k: v for k, v in base.items() if k != p[0]}
              for p in paths(base) if isinstance(_at(base, p[:-1]), dict)]
    accepted = 0
    for reply in cases:
        reply = json.loads(json.dumps(reply))
        try:
            parse_reply(reply, 5, kind)
            ok = True
        except MalformedInput as exc:
            ok = False
            text = str(exc)
            assert "\n" not in text and len(text) < 400, text
        accepted += ok
        if _integral_floats(reply):
            continue      # JSON Schema's "integer" takes 5.0; the arena wants 5 (see PROTOCOL.md)
        schema_ok = not list(validators[kind].iter_errors(reply))
        assert ok == schema_ok, f"parse_reply {'accepts' if ok else 'refuses'} but the schema " \
                                f"{'accepts' if schema_ok else 'refuses'}: {json.dumps(reply)[:300]}"
    assert 0 < accepted < len(cases)


def _integral_floats(value: Any) -> bool:
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, dict):
        value = list(value.values())
    return isinstance(value, list) and any(_integral_floats(v) for v in value)


def _at(value: Any, path: tuple) -> Any:
    for step in path:
        value = value[step]
    return value


# -- the same through the line decoder ------------------------------------------------

HOSTILE_VALUES = {
    "9" * 5000: "integer with 5000 digits",
    "-" + "1" * 21: "integer with 21 digits",
    "1" * 70 + ".5": "number of 72 characters",
    "NaN": "NaN is not JSON",
    "Infinity": "Infinity is not JSON",
    "-Infinity": "-Infinity is not JSON",
    "1e400": "number 1e400 is out of range",
    "-1e400": "number -1e400 is out of range",
    "[" * 50000 + "]" * 50000: "nesting deeper than 32",
    '"' + "x" * 5000 + '"': "string of 5000 characters",
    '"\\ud800"': "lone surrogate",
}


def _line_with(value: dict[str, Any], path: tuple, raw: str) -> bytes:
    marker = "@@HOSTILE@@"
    return json.dumps(replaced(value, path, marker)).replace(f'"{marker}"', raw).encode()


@pytest.mark.parametrize("name", [*FULL, "ready"])
def test_hostile_numbers_in_every_field_are_refused_by_the_decoder(name: str) -> None:
    base = READY if name == "ready" else FULL[name]
    for path in paths(base):
        for raw, reason in HOSTILE_VALUES.items():
            with pytest.raises(JSONLineError) as info:
                decode_object(_line_with(base, path, raw))
            assert reason in info.value.reason, (path, raw[:20], info.value.reason)
        line = json.dumps(base).encode()
        with pytest.raises(JSONLineError, match="duplicate key"):
            decode_object(line[:-1] + b', "' + str(path[0]).encode() + b'": 1}')


@pytest.mark.parametrize("name", list(FULL))
def test_decoded_replies_of_every_kind_parse(name: str) -> None:
    """The decoder does not refuse what the protocol needs (CRLF endings included)."""
    for line in (json.dumps(FULL[name]), json.dumps(FULL[name], separators=(",", ":")) + "\r",
                 " " + json.dumps(FULL[name]) + " \t\r"):
        parse_reply(decode_object(line.encode()), 5, KIND_OF[name])
    assert parse_ready(decode_object(json.dumps(READY).encode() + b"\r")) == "bot"


def test_protocol_doc_states_the_limits_and_reasons() -> None:
    from pathlib import Path

    from arena.jsonline import DEFAULT_LIMITS
    doc = (Path(__file__).parent.parent / "docs" / "PROTOCOL.md").read_text(encoding="utf-8")
    section = doc.split("## How replies are checked", 1)[1].split("\n## ", 1)[0]
    limits = DEFAULT_LIMITS
    for phrase in (f"more than {limits.max_int_digits} digits", f"more than {limits.max_depth} deep",
                   f"longer than {limits.max_string_chars} characters",
                   f"more than {limits.max_number_chars} characters"):
        assert phrase in section, phrase
    # Each reason the table quotes is what the decoder says for such a line.
    samples = {
        "invalid UTF-8 at byte 12": b'{"id": 1, "x\xff": 1}',
        "NUL byte at byte 9": b'{"id": 1}\x00',
        "starts with a byte-order mark (BOM); send plain UTF-8": b'\xef\xbb\xbf{}',
        "not valid JSON (Expecting value at column 1)": b"hello",
        "expected a JSON object, got array": b"[1]",
        "NaN is not JSON": b'{"id": NaN}',
        f"integer with 5000 digits (at most {limits.max_int_digits})": b'{"id": ' + b"7" * 5000 + b"}",
        "number 1e400 is out of range": b'{"id": 1e400}',
        "duplicate key 'id'": b'{"id": 1, "id": 1}',
        f"nesting deeper than {limits.max_depth}": b'{"a": ' + b"[" * 50000 + b"}",
        f"string of 5000 characters (at most {limits.max_string_chars})": b'{"a": "' + b"x" * 5000 + b'"}',
        "string with a lone surrogate \\ud800": b'{"a": "\\ud800"}',
    }
    for reason, line in samples.items():
        assert f"`{reason}`" in section, reason
        with pytest.raises(JSONLineError) as info:
            decode_object(line)
        assert info.value.reason == reason
