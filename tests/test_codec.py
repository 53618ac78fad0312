"""Protocol 2 on the wire, the msgspec codec, and the protocol 1 option.

- through real matches with a recording subprocess bot: a protocol 2 request
  has no history (nor hand_scores, nor decision) and validates against
  request.json; every public event reaches the bot once, as a notice, in
  order; a bot that answers 'ready' without "protocol" (written for protocol
  1) gets protocol 1 requests whose history is exactly the hand's notices;
- botkit's history, rebuilt from the notices, equals the engine's public
  history and hand scores at every decision of seeded matches: in-process
  in test_protocol (``drive_session``), and here through a real subprocess
  bot whose view at every request must hold exactly the notices it got;
- the encoder's bytes are the JSON objects of ``request_message`` /
  ``event_message`` in both protocols, and the start, error and end lines too;
- the typed fast path for replies agrees with the reference decoder
  (``decode_object`` + ``parse_reply``) on every reply of the strict-reply
  fuzz and on hostile lines: same action, or the same refusal (type,
  reason, fault kind); duplicate keys never get through it;
- in a strict match a reply with an unknown field is a ``malformed`` fault
  that forfeits, and an oversize line is refused.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest
from test_strict_replies import FULL, HOSTILE_VALUES, KIND_OF, _line_with, paths, random_json, replaced

from arena.jsonline import JSONLineError, decode_object
from arena.match import FaultPolicy, MatchSpec, SeatSpec, fallback_action, run_match
from arena.players.registry import make_player
from arena.process import SandboxPolicy, TimeControl
from arena.protocol.encoder import MatchEncoder, encode_end, encode_error, encode_start
from arena.protocol.messages import (
    ProtocolError,
    TimeLimits,
    decode_reply_line,
    end_message,
    error_message,
    event_message,
    parse_ready_message,
    parse_reply,
    reply_action,
    request_message,
    start_message,
)
from arena.protocol.schemas import load_schema
from arena.protocol.wire import decode_reply_fast
from arena.shanghai.actions import Draw
from arena.shanghai.errors import MalformedInput
from arena.shanghai.game import Game
from arena.shanghai.ruleset import Ruleset

GAMEBOTS = Path(__file__).parent / "gamebots"
RULES = {"contracts": ["2S3", "S3+R4"], "turn_cap_per_player": 15}
FAST = TimeControl(startup_seconds=5.0, per_decision_seconds=2.0)


def recorded_match(tmp_path: Path, *flags: str, seed: int = 5) -> tuple[list[dict[str, Any]], Any]:
    log = tmp_path / f"seen{''.join(flags)}.jsonl"
    tmp_path.chmod(0o777)     # a write: folder the bot's user can write (nobody, when arena runs as root)
    recorder = SeatSpec.command([sys.executable, str(GAMEBOTS / "recorder.py"), str(log), *flags],
                                name="recorder", sandbox=SandboxPolicy(write=(str(tmp_path),)))
    spec = MatchSpec(f"c{seed}", (recorder, SeatSpec.builtin("greedy"), SeatSpec.builtin("random")), RULES,
                     seed=seed, time=FAST, log_dir=str(tmp_path / "logs"))
    result = run_match(spec)
    assert result.faults == ()
    return [json.loads(line) for line in log.read_text().splitlines()], result


def test_a_v2_request_has_no_history_and_notices_carry_each_event_once(tmp_path: Path) -> None:
    msgs, result = recorded_match(tmp_path)
    assert result.protocols == (2, None, None)
    requests = [m for m in msgs if m["type"] == "request"]
    assert len(requests) > 20
    js = pytest.importorskip("jsonschema")
    schema = js.Draft202012Validator(load_schema("request"))
    for req in requests:
        assert not {"history", "hand_scores", "decision"} & set(req["view"]), req
        assert not list(schema.iter_errors(req))
    # Every public event of the match, each exactly once, in order.
    public = [e for e in result.record["events"] if e["type"] not in ("match_start", "match_end")]
    game = Game.from_record(result.record)
    expected = [e.public().to_json() for e in game.log if e.kind not in ("match_start", "match_end")]
    got = [m["event"] for m in msgs if m["type"] == "event"]
    assert got == expected and len(got) == len(public)


def test_protocol_1_is_negotiated_and_gets_the_v1_shape(tmp_path: Path) -> None:
    msgs, result = recorded_match(tmp_path, "--protocol-1")
    assert result.protocols == (1, None, None)
    js = pytest.importorskip("jsonschema")
    schema = js.Draft202012Validator(load_schema("request_v1"))
    hand: list[dict[str, Any]] = []
    scores: list[list[int]] = []
    requests = 0
    for m in msgs:
        if m["type"] == "event":
            if m["event"]["type"] == "deal":
                hand = []
            hand.append(m["event"])
            if m["event"]["type"] == "hand_end":
                scores.append(m["event"]["scores"])
        elif m["type"] == "request":
            requests += 1
            view = m["view"]
            assert view["history"] == hand                 # the hand's notices, again
            assert view["hand_scores"] == scores
            assert view["decision"] == {"kind": m["kind"], "options": m["options"]}
            if requests % 10 == 1:
                assert not list(schema.iter_errors(m))
    assert requests > 20


def test_botkit_history_equals_the_engines_at_every_decision(tmp_path: Path) -> None:
    """A greedy player through botkit in a subprocess, with a check on each
    request: the view's history and hand scores are exactly the notices the
    bot got this hand (collected apart from botkit); a mismatch ends the bot,
    a crash the test.  The notices themselves are the engine's public events
    (test_a_v2_request_has_no_history_and_notices_carry_each_event_once)."""
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE.format(repo=str(Path(__file__).parent.parent)))
    seat = SeatSpec.command([sys.executable, str(probe)], name="probe")
    spec = MatchSpec("probe", (seat, SeatSpec.builtin("greedy"), SeatSpec.builtin("random"),
                               SeatSpec.builtin("greedy")), {"contracts": ["2S3", "S3+R4", "2R4"]},
                     seed=11, time=TimeControl(startup_seconds=10.0, per_decision_seconds=5.0),
                     faults=FaultPolicy(strict=True), log_dir=str(tmp_path / "logs"))
    result = run_match(spec)
    log = Path(result.stderr_logs[0]).read_text()
    assert result.faults == (), log
    assert "checked" in log and "MISMATCH" not in log
    checked = int(log.rsplit("checked ", 1)[1].split()[0])
    assert checked == sum(1 for a in result.record["actions"] if a["seat"] == 0)


# The probe keeps the match record itself (from the start message's seed it
# cannot deal, so it replays the events it saw): at each request, botkit's
# history must equal the public events of this hand seen as notices so far,
# collected independently from the raw lines.
PROBE = '''
import sys
sys.path.insert(0, {repo!r})
from arena import botkit
from arena.players.greedy import GreedyPlayer
from arena.shanghai.events import event_from_json

raw_hand, raw_scores, count = [], [], [0]

class Probe(GreedyPlayer):
    def _check(self, view):
        if view.history != tuple(raw_hand) or view.hand_scores != tuple(raw_scores):
            print("MISMATCH", view.history, raw_hand, file=sys.stderr)
            sys.exit(3)
        count[0] += 1
    def draw(self, view):
        self._check(view); return super().draw(view)
    def buy(self, view):
        self._check(view); return super().buy(view)
    def play(self, view):
        self._check(view); return super().play(view)

def on_event(e):
    ev = event_from_json(e).public()
    if ev.kind == "deal":
        raw_hand.clear()
    raw_hand.append(ev)
    if ev.kind == "hand_end":
        raw_scores.append(tuple(ev.to_json()["scores"]))

def on_end(msg):
    print("checked", count[0], "requests", file=sys.stderr, flush=True)

botkit.run(make_player=lambda info: Probe(info.rng()), name="probe", on_event=on_event, on_end=on_end)
'''


# -- the encoder's bytes --------------------------------------------------------------


def test_encoded_lines_are_the_documented_objects() -> None:
    rules = Ruleset.from_mapping({"contracts": ["2S3", "S3+R4", "2R4"]})
    game = Game.seeded(rules, 4, 3)
    enc = MatchEncoder(game)
    sent = [1] * 4
    i = 0
    while (d := game.decision()) is not None:
        i += 1
        for protocol in (1, 2):
            got = json.loads(enc.request(i, d, protocol))
            assert got == json.loads(json.dumps(request_message(i, d, game.view(d.seat), protocol)))
        notices = [json.loads(n) for n in enc.notices(sent[d.seat])]
        expected = [event_message(e) for e in game.log[sent[d.seat]:] if e.kind not in ("match_start", "match_end")]
        assert notices == json.loads(json.dumps(expected))
        sent[d.seat] = len(game.log)
        game.apply(fallback_action(d), d.seat)
    limits = TimeLimits(10.0, 1.0, None)
    assert json.loads(encode_start("m", 1, ["a", "b", "c", "d"], rules.to_mapping(), limits, 2)) == \
        json.loads(json.dumps(start_message("m", 1, ["a", "b", "c", "d"], rules, limits)))
    assert json.loads(encode_error(3, "illegal", "no", {"type": "draw", "source": "stock"})) == \
        error_message(3, "illegal", "no", Draw("stock"))
    assert json.loads(encode_end("m", [1, 2], [1, 2], [False, True])) == end_message("m", [1, 2], [1, 2], [False, True])


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_the_match_path_writes_the_documented_bytes_in_played_matches(seats: int) -> None:
    """``MatchEncoder.request_data`` reads the game as ``Game.view`` does
    without making the view: over matches of the built-in players (melds laid,
    cards bought, hands ended), every write is byte for byte the notices'
    ``event_message`` and the request's ``request_message``, compactly dumped."""
    rules = Ruleset.from_mapping({"contracts": ["2S3", "S3+R4", "2R4"]})
    names = ["greedy", "random", "passive", "greedy"]
    for seed in range(1, 7):
        game = Game.seeded(rules, seats, seed)
        enc = MatchEncoder(game)
        players = [make_player(names[(seat + seed) % 4], random.Random(f"{seed}/{seat}")) for seat in range(seats)]
        sent = [1] * seats
        req_id = 0
        while (d := game.decision()) is not None:
            req_id += 1
            data, end = enc.request_data(sent[d.seat], req_id, d, 2)
            view = game.view(d.seat)
            expected = [event_message(e) for e in game.log[sent[d.seat]:]
                        if e.kind not in ("match_start", "match_end")]
            expected.append(request_message(req_id, d, view, 2))
            assert data == b"".join(json.dumps(m, separators=(",", ":")).encode() + b"\n" for m in expected)
            sent[d.seat] = end
            player = players[d.seat]
            game.apply(player.draw(view) if d.kind == "draw" else player.buy(view) if d.kind == "buy"
                       else player.play(view), d.seat)


def test_ready_chooses_the_protocol() -> None:
    assert parse_ready_message({"type": "ready", "name": "a"}).protocol == 1
    assert parse_ready_message({"type": "ready", "name": "a", "protocol": 2}).protocol == 2
    assert parse_ready_message({"type": "ready", "name": "a", "protocol": 1}).protocol == 1
    for bad in (3, 0, "2", 2.0, True, None):
        with pytest.raises(ProtocolError, match="protocol"):
            parse_ready_message({"type": "ready", "name": "a", "protocol": bad})


# -- replies: the fast path agrees with the reference ---------------------------------


def outcome(fn: Any) -> tuple[str, Any]:
    try:
        return "ok", fn()
    except ProtocolError as exc:
        return "protocol", (str(exc), exc.fault)
    except MalformedInput as exc:
        return "malformed", str(exc)
    except JSONLineError as exc:
        return "line", exc.reason


def both_paths(raw: bytes, req_id: int, kind: str) -> None:
    reference = outcome(lambda: parse_reply(decode_object(raw), req_id, kind))
    line = outcome(lambda: decode_reply_line(raw)[0])
    if line[0] != "ok":
        assert line == reference, raw[:200]
        return
    assert outcome(lambda: reply_action(line[1], req_id, kind)) == reference, raw[:200]


def fuzz_cases(name: str) -> list[Any]:
    rng = random.Random(f"codec-{name}")
    base = FULL[name]
    cases = [base, {**base, "extra": 1}, {**base, "id": 4}, {**base, "id": 5.0}, {**base, "id": True}]
    cases += [replaced(base, p, random_json(rng)) for p in paths(base) if p != ("id",) for _ in range(25)]
    return cases


@pytest.mark.parametrize("name", list(FULL))
def test_fast_path_agrees_with_the_reference_on_fuzzed_replies(name: str) -> None:
    kind = KIND_OF[name]
    fast = 0
    for reply in fuzz_cases(name):
        for raw in (json.dumps(reply).encode(), json.dumps(reply, separators=(",", ":")).encode() + b"\r"):
            both_paths(raw, 5, kind)
            fast += decode_reply_fast(raw) is not None
    assert fast > 10          # the fast path is really taken


@pytest.mark.parametrize("name", list(FULL))
def test_fast_path_refuses_hostile_lines_like_the_reference(name: str) -> None:
    base = FULL[name]
    for path in paths(base):
        for raw in HOSTILE_VALUES:
            both_paths(_line_with(base, path, raw), 5, KIND_OF[name])


@pytest.mark.parametrize("raw", [
    b'{"id": 5, "draw": "stock", "draw": "upcard"}',
    b'{"id": 5, "draw" : "stock", "draw": "upcard"}',
    b'{"id": 5, "id": 5, "draw": "stock"}',
    b'{"id": 5, "lay_off": [{"meld": 0, "card": "8C", "meld": 1}], "discard": "9D"}',
    b'{"id": 5, "steps": [{"swap": {"meld": 1, "card": "6C", "card": "7C"}}], "discard": "9D"}',
    b'{"id": 5, "go_down": [{"cards": ["7H", "7S", "JK"], "cards": "8C 8D 8S"}], "discard": "9D"}',
])
def test_duplicate_keys_never_take_the_fast_path(raw: bytes) -> None:
    assert decode_reply_fast(raw) is None
    with pytest.raises(JSONLineError, match="duplicate key"):
        decode_reply_line(raw)


@pytest.mark.parametrize("raw", [
    b'{"id":5,"discard":"9D"}',
    b'{"id" : 5, "draw": "stock"}',                  # a space before a colon
    b'{"id": 5, "type": "a:b", "draw": "stock"}',    # a colon in a string
    b'{"id": 5, "type": "a\\":", "draw": "stock"}',  # an escaped quote and a colon: refused, never let through
])
def test_the_key_count_takes_any_spacing_and_colons_in_strings(raw: bytes) -> None:
    typed = decode_reply_fast(raw)
    line, rid = decode_reply_line(raw)
    assert rid == 5
    if b'\\"' in raw:
        assert typed is None and line.obj is not None       # judged by the reference path
    else:
        assert typed is not None and typed.id == 5


def test_unknown_fields_and_big_numbers_go_to_the_reference() -> None:
    line, rid = decode_reply_line(b'{"id": 5, "draw": "stock", "ende": 1}')
    assert rid == 5 and line.typed is None
    with pytest.raises(ProtocolError, match=r"unknown field\(s\) \['ende'\]") as info:
        reply_action(line, 5, "draw")
    assert info.value.fault == "malformed"
    line, rid = decode_reply_line(b'{"id": 99999999999999999999, "draw": "stock"}')   # 20 digits
    assert rid == 10**20 - 1 and line.typed is None
    with pytest.raises(ProtocolError) as info:
        reply_action(line, 5, "draw")
    assert info.value.fault == "wrong_id"


# -- strict matches ---------------------------------------------------------------------


def test_an_unknown_field_in_a_strict_match_is_malformed_and_forfeits(tmp_path: Path) -> None:
    spec = MatchSpec("strict", (SeatSpec.command([sys.executable, str(GAMEBOTS / "hostile.py"), "extra"],
                                                 name="hostile"), SeatSpec.builtin("random")),
                     RULES, seed=3, time=FAST, faults=FaultPolicy(strict=True), log_dir=str(tmp_path))
    result = run_match(spec)
    (fault,) = result.faults
    assert fault.kind == "malformed" and fault.forfeit and "unknown field(s)" in fault.detail
    assert result.forfeited == (True, False)


def test_an_oversize_line_is_refused(tmp_path: Path) -> None:
    spec = MatchSpec("huge", (SeatSpec.command([sys.executable, str(GAMEBOTS / "hugeline.py")], name="huge",
                                               memory_mb=400), SeatSpec.builtin("random")),
                     RULES, seed=3, time=FAST, faults=FaultPolicy(strict=True), log_dir=str(tmp_path))
    result = run_match(spec)
    (fault,) = result.faults
    assert fault.kind == "malformed" and "line too long" in fault.detail and fault.forfeit


def test_a_reply_without_id_is_judged_not_skipped() -> None:
    """The process layer skips late answers by their id; a reply with no id
    must reach the protocol, which calls it malformed."""
    from arena.jsonline import NO_ID
    line, rid = decode_reply_line(b'{"draw": "stock"}')
    assert rid is NO_ID
    with pytest.raises(ProtocolError, match="has no \"id\"") as info:
        reply_action(line, 5, "draw")
    assert info.value.fault == "malformed"
