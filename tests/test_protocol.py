"""The bot protocol: messages, replies, JSON Schemas, botkit and docs/PROTOCOL.md.

- real messages of seeded matches validate against the shipped schemas, and
  the schemas refuse wrong ones (and agree with ``parse_reply`` on the shape);
- ``parse_reply`` takes every documented reply form and refuses malformed
  replies with a reason that says what is wrong;
- ``botkit.view_from_json(view.to_json())`` rebuilds the very same View;
- botkit's session plays whole matches in-process (same moves as the
  in-process player it wraps), over StringIO streams too;
- every JSON example in docs/PROTOCOL.md is a valid message, and every view
  field and event type is documented there.
"""

from __future__ import annotations

import importlib.util
import io
import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena import botkit
from arena.players.greedy import GreedyPlayer
from arena.players.random_player import RandomPlayer
from arena.protocol.messages import (
    PROTOCOL_VERSION,
    ProtocolError,
    Ready,
    TimeLimits,
    end_message,
    error_message,
    event_message,
    parse_ready,
    parse_ready_message,
    parse_reply,
    quit_message,
    request_message,
    start_message,
)
from arena.protocol.replies import reply_from_action
from arena.protocol.schemas import load_schema, schema_names
from arena.shanghai import events as ev
from arena.shanghai.actions import DRAW, PLAY, STOCK, Buy, Draw, GoDown, LayOff, MeldCards, Play, Swap
from arena.shanghai.cards import JOKER, parse_card, parse_cards
from arena.shanghai.errors import MalformedInput
from arena.shanghai.game import Game
from arena.shanghai.ruleset import Ruleset

REPO = Path(__file__).parent.parent
DOC = REPO / "docs" / "PROTOCOL.md"
SMALL = Ruleset.from_mapping({"contracts": ["2S3", "S3+R4", "2R4"]})
NAMES = ["alice", "bob", "carol", "dave", "erin", "frank"]

RULESETS = {
    "shanghai": Ruleset.preset("shanghai"),
    "pagat": Ruleset.preset("pagat"),
    "small": SMALL,
    # A hard contract and a low turn cap: reshuffles and hands without a winner.
    "stuck": Ruleset.from_mapping({"contracts": ["3R5", "S8"], "turn_cap_per_player": 40, "wild_deuces": False}),
    "dry": Ruleset.from_mapping({"contracts": ["3R5"], "max_reshuffles": 0, "buy_penalty": 0}),
}


def make_players(n: int, seed: int) -> list[Any]:
    return [(GreedyPlayer if (seed + i) % 2 else RandomPlayer)(random.Random(seed * 10 + i)) for i in range(n)]


def matches() -> Iterator[tuple[str, int, int]]:
    """(ruleset, players, seed) of the matches the message tests run."""
    yield "small", 3, 1
    yield "small", 4, 2
    yield "shanghai", 3, 3
    yield "pagat", 4, 4
    yield "stuck", 3, 5
    yield "stuck", 2, 6
    yield "dry", 3, 7


def real_messages(rules_name: str, n: int, seed: int) -> Iterator[tuple[str, dict[str, Any], Any]]:
    """Every message a match produces, as ("arena"|"reply", message, kind).
    Seat 0 asked for protocol 1, the others speak protocol 2."""
    rules = RULESETS[rules_name]
    game = Game.seeded(rules, n, seed)
    players = make_players(n, seed)
    names = NAMES[:n]
    match = f"{rules_name}-{seed}"
    for seat in range(n):
        yield "arena", start_message(match, seat, names, rules, TimeLimits(10.0, 1.0, 30.0 if seat else None)), None
    sent = 1  # the log starts with match_start, which is never sent to bots
    req_id = 100
    while (d := game.decision()) is not None:
        for e in game.log[sent:]:
            yield "arena", event_message(e), None
        sent = len(game.log)
        view = game.view(d.seat)
        req_id += 1
        yield "arena", request_message(req_id, d, view, 1 if d.seat == 0 else 2), None
        action = getattr(players[d.seat], d.kind)(view)
        yield "reply", reply_from_action(req_id, action), d.kind
        if req_id % 50 == 0:  # an error notice now and then, with the fallback of its kind
            yield "arena", error_message(req_id, "illegal", "a test notice", botkit.fallback_action(d.kind, view)), None
        game.apply(action, d.seat)
    for e in game.log[sent:]:
        yield "arena", event_message(e), None
    yield "arena", end_message(match, list(game.totals), game.places(), [False] * n), None
    yield "arena", error_message(None, "malformed", "the answer to start was not JSON", None), None
    yield "arena", quit_message(), None


# -- JSON Schemas ------------------------------------------------------------------

@pytest.fixture(scope="module")
def validators() -> dict[str, Any]:
    js = pytest.importorskip("jsonschema")
    out = {}
    for name in schema_names():
        schema = load_schema(name)
        js.Draft202012Validator.check_schema(schema)
        out[name] = js.Draft202012Validator(schema)
    return out


def errors_of(validator: Any, obj: Any) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message[:200]}" for e in validator.iter_errors(obj)]


def test_schema_names_and_loading() -> None:
    assert schema_names() == sorted([
        "start", "ready", "event", "request", "request_v1", "error", "end", "quit",
        "reply", "reply_draw", "reply_buy", "reply_play",
    ])
    for name in schema_names():
        schema = load_schema(name)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert schema["$id"].endswith(name)
    with pytest.raises(KeyError, match="no schema named"):
        load_schema("nope")


def test_schema_files_share_identical_definitions() -> None:
    """Each file is self-contained; a definition repeated in several files must not drift."""
    seen: dict[str, tuple[str, Any]] = {}
    for name in schema_names():
        for key, value in load_schema(name).get("$defs", {}).items():
            if key in seen:
                assert value == seen[key][1], f"$defs/{key} differs between {seen[key][0]}.json and {name}.json"
            else:
                seen[key] = (name, value)
        refs = re.findall(r'"\$ref": "#/\$defs/([a-z_]+)"', json.dumps(load_schema(name)))
        assert set(refs) <= set(load_schema(name).get("$defs", {})), name


@pytest.mark.parametrize("rules_name,n,seed", list(matches()))
def test_real_messages_validate(validators: dict[str, Any], rules_name: str, n: int, seed: int) -> None:
    """Every message but requests; requests sampled (the validator needs ~5-20 ms each).

    A request's history repeats the hand's events, which are all validated as
    event messages, so most sampled requests are checked with the history cut
    to its last events; every 50th in full.
    """
    seen: set[str] = set()
    requests = 0
    for side, msg, kind in real_messages(rules_name, n, seed):
        if side == "arena":
            name = msg["type"]
            if name == "event":
                seen.add(msg["event"]["type"])
            if name == "request" and "history" in msg["view"]:
                name = "request_v1"
                requests += 1
                if requests > 40 and requests % 7:
                    continue
                if requests % 50:
                    msg = {**msg, "view": {**msg["view"], "history": msg["view"]["history"][-3:]}}
        else:
            name = f"reply_{kind}"
            assert not errors_of(validators["reply"], msg), msg
        problems = errors_of(validators[name], msg)
        assert not problems, f"{name}: {problems[:3]}\n{json.dumps(msg)[:2000]}"
    assert {"deal", "draw", "discard", "hand_end", "match_end"} <= seen


def test_all_event_kinds_are_covered(validators: dict[str, Any]) -> None:
    """Across the matches every event kind bots can get occurs and validates."""
    seen: set[str] = set()
    for args in matches():
        for side, msg, _ in real_messages(*args):
            if side == "arena" and msg["type"] == "event":
                seen.add(msg["event"]["type"])
    assert seen == {
        ev.DEAL, ev.DRAW, ev.DECLINE, ev.BUY, ev.GO_DOWN, ev.LAY_OFF, ev.SWAP, ev.DISCARD,
        ev.GO_OUT, ev.RESHUFFLE, ev.HAND_END, ev.MATCH_END,
    }


def _request(kind: str = "draw", protocol: int = 2) -> dict[str, Any]:
    game = Game.seeded(SMALL, 3, 7)
    d = game.decision()
    assert d is not None and d.kind == DRAW
    return request_message(1, d, game.view(d.seat), protocol)


BAD_MESSAGES = [
    ("start", lambda: {**start_message("m", 0, ["a", "b"], SMALL, TimeLimits(1, 1)), "protocol": 3}),
    ("start", lambda: {k: v for k, v in start_message("m", 0, ["a", "b"], SMALL, TimeLimits(1, 1)).items()
                       if k != "rules"}),
    ("ready", lambda: {"type": "ready"}),
    ("ready", lambda: {"type": "ready", "name": ""}),
    ("ready", lambda: {"type": "ready", "name": "x" * 65}),
    ("request", lambda: {**_request(), "kind": "pass"}),
    ("request", lambda: {**_request(), "view": {**_request()["view"], "cards": ["7X"]}}),
    ("request", lambda: {**_request(), "view": {**_request()["view"], "secret": 1}}),
    ("request", lambda: _request(protocol=1)),                  # a v2 request has no history
    ("request", lambda: {**_request(), "view": {**_request()["view"], "history": []}}),
    ("request_v1", lambda: _request(protocol=2)),
    ("ready", lambda: {"type": "ready", "name": "x", "protocol": 3}),
    ("event", lambda: {"type": "event", "event": {"type": "draw", "hand": 1, "seat": 0, "source": "stock",
                                                  "card": "7H"}}),  # a stock draw never shows its card
    ("event", lambda: {"type": "event", "event": {"type": "deal", "hand": 1, "dealer": 0, "contract": "2S3",
                                                  "deal_size": 11, "upcard": "7H", "shoe": ["7H"]}}),
    ("event", lambda: {"type": "event", "event": {"type": "match_start", "hand": 0, "players": 3}}),
    ("error", lambda: {"type": "error", "id": 1, "fault": "slow", "reason": "x", "fallback": None}),
    ("end", lambda: {"type": "end", "match": "m", "totals": [1, 2], "places": [0, 1], "forfeited": [False, False]}),
    ("quit", lambda: {"type": "quit", "now": True}),
    ("reply_draw", lambda: {"id": 1, "draw": "pile"}),
    ("reply_draw", lambda: {"id": 1, "source": "stock"}),
    ("reply_draw", lambda: {"draw": "stock"}),
    ("reply_buy", lambda: {"id": 1, "buy": "yes"}),
    ("reply_play", lambda: {"id": 1, "discard": "11H"}),
    ("reply_play", lambda: {"id": 1, "discard": "QH", "pass": True}),
    ("reply_play", lambda: {"id": 1, "steps": [{"go_down": [["7H", "7S", "7D"]], "discard": "QH"}]}),
    ("reply_play", lambda: {"id": 1, "steps": [{"lay_off": {"card": "7H"}}], "discard": "QH"}),
    ("reply_play", lambda: {"id": 1, "steps": [], "lay_off": [{"meld": 0, "card": "7H"}], "discard": "QH"}),
    ("reply_play", lambda: {"id": 1, "go_down": [{"cards": ["7H", "7S", "JK"], "kind": "pair"}], "discard": "QH"}),
    ("reply_play", lambda: {"id": 1, "lay_off": [{"meld": -1, "card": "7H"}], "discard": "QH"}),
    ("reply_play", lambda: {"id": 1, "lay_off": [{"meld": 0, "card": "7H", "end": "top"}], "discard": "QH"}),
    ("reply", lambda: {"id": "1", "draw": "stock"}),
]


@pytest.mark.parametrize("name,build", BAD_MESSAGES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(BAD_MESSAGES)])
def test_schemas_refuse_wrong_messages(validators: dict[str, Any], name: str, build: Any) -> None:
    assert errors_of(validators[name], build())


# -- replies: the documented forms, and readable refusals --------------------------

GOOD_REPLIES = [
    ("draw", {"id": 5, "draw": "stock"}, Draw("stock")),
    ("draw", {"id": 5, "draw": "upcard"}, Draw("upcard")),
    ("draw", {"id": 5, "type": "draw", "draw": "stock"}, Draw("stock")),
    ("buy", {"id": 5, "buy": True}, Buy(True)),
    ("buy", {"id": 5, "buy": False}, Buy(False)),
    ("play", {"id": 5, "discard": "QH"}, Play((), parse_card("QH"))),
    ("play", {"id": 5, "discard": "qh"}, Play((), parse_card("QH"))),
    ("play", {"id": 5, "discard": "TS"}, Play((), parse_card("10S"))),
    ("play", {"id": 5, "discard": "joker"}, Play((), JOKER)),
    ("play", {"id": 5, "go_down": [["8C", "8D", "8S"], "KH KS JK"], "discard": "QH"},
     Play((GoDown((MeldCards(tuple(parse_cards("8C 8D 8S"))), MeldCards(tuple(parse_cards("KH KS JK"))))),),
          parse_card("QH"))),
    ("play", {"id": 5, "go_down": [{"cards": ["4D", "5D", "6D", "7D"], "kind": "run"}, {"cards": "7H 7S 7C"}],
              "lay_off": [{"meld": 0, "card": "8D", "end": "high"}], "discard": None},
     Play((GoDown((MeldCards(tuple(parse_cards("4D 5D 6D 7D")), "run"), MeldCards(tuple(parse_cards("7H 7S 7C"))))),
           LayOff(0, parse_card("8D"), "high")), None)),
    ("play", {"id": 5, "swap": [{"meld": 1, "card": "6C", "take": "JK"}], "go_down": [["7H", "7S", "JK"]],
              "discard": "9D"},
     Play((Swap(1, parse_card("6C"), JOKER), GoDown((MeldCards(tuple(parse_cards("7H 7S JK"))),))),
          parse_card("9D"))),
    ("play", {"id": 5, "lay_off": [{"meld": 0, "card": "3C"}, {"meld": 2, "card": "JK", "end": "low"}]},
     Play((LayOff(0, parse_card("3C")), LayOff(2, JOKER, "low")), None)),
    ("play", {"id": 5, "steps": [
        {"swap": {"meld": 1, "card": "6C"}},
        {"go_down": [["7H", "7S", "7C"], {"cards": ["4D", "5D", "6D", "7D"], "kind": "run"}]},
        {"lay_off": {"meld": 3, "card": "JK", "end": "high"}}], "discard": "9D"},
     Play((Swap(1, parse_card("6C")),
           GoDown((MeldCards(tuple(parse_cards("7H 7S 7C"))), MeldCards(tuple(parse_cards("4D 5D 6D 7D")), "run"))),
           LayOff(3, JOKER, "high")), parse_card("9D"))),
    ("play", {"id": 5, "go_down": [], "lay_off": None, "swap": [], "discard": "2C"}, Play((), parse_card("2C"))),
]


@pytest.mark.parametrize("kind,reply,action", GOOD_REPLIES, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(GOOD_REPLIES)])
def test_parse_reply_accepts_documented_forms(kind: str, reply: dict[str, Any], action: Any) -> None:
    assert parse_reply(reply, 5, kind) == action


BAD_REPLIES = [
    ("draw", [1, 2], "must be a JSON object", "malformed"),
    ("draw", {"draw": "stock"}, "has no \"id\"", "malformed"),
    # an answer to a notice, read as the reply to the waiting request: say so
    ("draw", {"ok": True}, "only 'start' and 'request' are answered", "malformed"),
    ("play", {"type": "ack"}, "holds no play choice either", "malformed"),
    ("draw", {"id": 4, "draw": "stock"}, "request's id is 5", "wrong_id"),
    ("draw", {"id": 5}, "needs \"draw\"", "malformed"),
    ("draw", {"id": 5, "source": "stock"}, "needs \"draw\"", "malformed"),
    # named by the wire's field, not the engine's 'source' the bot never wrote
    ("draw", {"id": 5, "draw": "pile"}, "draw: 'draw' must be 'stock' or 'upcard', got \"pile\"", "malformed"),
    ("buy", {"id": 5, "buy": "yes"}, "true or false", None),
    ("buy", {"id": 5, "draw": "stock"}, "needs \"buy\"", "malformed"),
    ("play", {"id": 5, "discard": "QH", "pass": 1}, "unknown field(s) ['pass']", "malformed"),
    ("play", {"id": 5, "discard": "11H"}, "is not a card", None),
    ("play", {"id": 5, "discard": 12}, "a card must be a string", None),
    ("play", {"id": 5, "go_down": [[]], "discard": "QH"}, "non-empty list of cards", None),
    ("play", {"id": 5, "go_down": "8C 8D 8S", "discard": "QH"}, "'go_down' must be a non-empty list", None),
    ("play", {"id": 5, "go_down": [{"cards": ["8C", "8D", "8S"], "kind": "pair"}]}, "'set' or 'run'", None),
    ("play", {"id": 5, "lay_off": {"meld": 0, "card": "8C"}}, "'lay_off' must be a list", None),
    ("play", {"id": 5, "lay_off": [{"card": "8C"}]}, "missing field 'meld'", None),
    ("play", {"id": 5, "lay_off": [{"meld": "0", "card": "8C"}]}, "meld id", None),
    ("play", {"id": 5, "lay_off": [{"meld": True, "card": "8C"}]}, "meld id", None),
    ("play", {"id": 5, "lay_off": [{"meld": 0, "card": "8C", "end": "top"}]}, "'low' or 'high'", None),
    ("play", {"id": 5, "steps": {"swap": {}}}, "'steps' must be a list", None),
    ("play", {"id": 5, "steps": [{"swap": {"meld": 0, "card": "8C"}, "lay_off": {}}]}, "one key", None),
    ("play", {"id": 5, "steps": [{"discard": "8C"}]}, "play.steps[0]", None),
    ("play", {"id": 5, "steps": [{"go_down": []}]}, "non-empty list of melds", None),
    ("play", {"id": 5, "steps": [], "go_down": [["8C", "8D", "8S"]], "discard": "QH"}, "not both", "malformed"),
]


def test_a_line_without_id_or_choice_after_notices_is_named_their_answer() -> None:
    """Notices came with the request: the bug leads, not the missing id; a
    reply that lacks only its id is still told to echo it."""
    with pytest.raises(ProtocolError) as info:
        parse_reply({"ok": True}, 5, "draw", after_notices=True)
    assert str(info.value).startswith("it replied to an event notice, which bots must never answer: "
                                      "the line read as the reply to request 5, {\"ok\": true}, has neither")
    assert info.value.fault == "malformed"
    with pytest.raises(ProtocolError, match="^the reply has no \"id\"; it must echo the request's id 5$"):
        parse_reply({"draw": "stock"}, 5, "draw", after_notices=True)


@pytest.mark.parametrize("kind,reply,reason,fault", BAD_REPLIES, ids=[f"{k}-{i}" for i, (k, _, _, _) in enumerate(BAD_REPLIES)])
def test_parse_reply_refuses_malformed_replies(kind: str, reply: Any, reason: str | None, fault: str | None) -> None:
    with pytest.raises(MalformedInput) as info:
        parse_reply(reply, 5, kind)
    text = str(info.value)
    if reason is not None:
        assert reason in text, text
    assert len(text) < 400
    if fault is not None:
        assert isinstance(info.value, ProtocolError) and info.value.fault == fault


@pytest.mark.parametrize("kind,reply,action", GOOD_REPLIES)
def test_schemas_accept_documented_replies(validators: dict[str, Any], kind: str, reply: Any, action: Any) -> None:
    assert not errors_of(validators[f"reply_{kind}"], reply)
    assert not errors_of(validators["reply"], reply)


@pytest.mark.parametrize("kind,reply,reason,fault", [r for r in BAD_REPLIES if r[3] != "wrong_id"])
def test_schemas_refuse_malformed_replies(validators: dict[str, Any], kind: str, reply: Any, reason: Any, fault: Any) -> None:
    """The reply schemas refuse what parse_reply refuses (ids aside: schemas cannot know the request)."""
    assert errors_of(validators[f"reply_{kind}"], reply)


def test_parse_ready() -> None:
    assert parse_ready({"type": "ready", "name": " bob "}) == "bob"
    for bad, why in [([], "JSON object"), ({"type": "ok", "name": "x"}, "\"type\": \"ready\""),
                     ({"type": "ready"}, "\"name\""), ({"type": "ready", "name": "x" * 65}, "at most 64")]:
        with pytest.raises(ProtocolError, match=re.escape(why)):
            parse_ready(bad)


def test_reply_from_action_round_trips() -> None:
    for kind, _reply, action in GOOD_REPLIES:
        again = reply_from_action(9, action)
        assert parse_reply(json.loads(json.dumps(again)), 9, kind) == action


# -- botkit: views -------------------------------------------------------------------


@pytest.mark.parametrize("rules_name,n,seed", [("small", 3, 11), ("shanghai", 4, 12), ("pagat", 3, 13),
                                               ("stuck", 3, 14)])
def test_view_from_json_round_trip(rules_name: str, n: int, seed: int) -> None:
    rules = RULESETS[rules_name]
    game = Game.seeded(rules, n, seed)
    players = make_players(n, seed)
    rebuilt_rules = Ruleset.from_mapping(json.loads(json.dumps(rules.to_mapping())))
    assert rebuilt_rules == rules
    steps = 0
    while (d := game.decision()) is not None:
        steps += 1
        if steps > 60 and steps % 3:  # long histories make every view costly: sample after a while
            game.apply(getattr(players[d.seat], d.kind)(game.view(d.seat)), d.seat)
            continue
        for seat in {d.seat, (d.seat + 1) % n}:  # the deciding seat (with a decision) and another one
            view = game.view(seat)
            data = json.loads(json.dumps(view.to_json()))
            again = botkit.view_from_json(data, rebuilt_rules)
            assert again.to_json() == view.to_json()
            assert again == view
        kind, options, rv = botkit.parse_request(json.loads(json.dumps(request_message(1, d, game.view(d.seat)))),
                                                 rebuilt_rules)
        assert (kind, options) == (d.kind, d.options) and rv.decision == d
        game.apply(getattr(players[d.seat], d.kind)(game.view(d.seat)), d.seat)
    assert steps > 100


# -- botkit: the session ---------------------------------------------------------------


def drive_session(session: botkit.BotSession, rules: Ruleset, n: int, seed: int, seat: int,
                  others: list[Any], match: str) -> Game:
    """The arena side, in-process: every message goes through session.handle()."""
    ready = session.handle(json.loads(json.dumps(start_message(match, seat, NAMES[:n], rules, TimeLimits(5, 1)))))
    assert parse_ready_message(ready) == Ready(session.name, 2)
    game = Game.seeded(rules, n, seed)
    sent, req_id = 1, 0
    while (d := game.decision()) is not None:
        for e in game.log[sent:]:
            if e.kind != ev.MATCH_END:
                assert session.handle(json.loads(json.dumps(event_message(e)))) is None
        sent = len(game.log)
        view = game.view(d.seat)
        if d.seat == seat:
            req_id += 1
            request = json.loads(json.dumps(request_message(req_id, d, view)))
            assert "history" not in request["view"]
            # botkit's history, rebuilt from the notices, is the engine's own
            assert session.history.history() == view.history == tuple(game.public)
            assert tuple(session.history.hand_scores) == view.hand_scores
            reply = session.handle(request)
            game.apply(parse_reply(json.loads(json.dumps(reply)), req_id, d.kind), seat)
        else:
            game.apply(getattr(others[d.seat], d.kind)(view), d.seat)
    assert session.handle(end_message(match, list(game.totals), game.places(), [False] * n)) is None
    return game


@pytest.mark.parametrize("cls,seed", [(GreedyPlayer, 21), (GreedyPlayer, 22), (RandomPlayer, 23)])
def test_botkit_session_plays_like_the_in_process_player(cls: Any, seed: int) -> None:
    """A player through botkit (JSON views) makes exactly its moves on real views."""
    n, seat, match = 3, 1, f"m-{seed}"
    info = botkit.MatchInfo.from_message(start_message(match, seat, NAMES[:n], SMALL, TimeLimits(5, 1)))
    session = botkit.BotSession(make_player=lambda i: cls(i.rng()), name="kit")
    via_kit = drive_session(session, SMALL, n, seed, seat, make_players(n, seed), match)
    direct = Game.seeded(SMALL, n, seed)
    players = make_players(n, seed)
    players[seat] = cls(random.Random(info.seed))
    while (d := direct.decision()) is not None:
        direct.apply(getattr(players[d.seat], d.kind)(direct.view(d.seat)), d.seat)
    assert via_kit.to_record() == direct.to_record()
    assert session.matches == 1


def test_match_info_seed_is_stable() -> None:
    a = botkit.MatchInfo.from_message(start_message("m1", 2, NAMES[:3], SMALL, TimeLimits(5, 1)))
    b = botkit.MatchInfo.from_message(start_message("m1", 2, NAMES[:3], SMALL, TimeLimits(5, 1)))
    c = botkit.MatchInfo.from_message(start_message("m1", 1, NAMES[:3], SMALL, TimeLimits(5, 1)))
    assert a.seed == b.seed != c.seed
    assert a.rng().random() == b.rng().random()
    assert a.seed == 0x_ffffffffffffffff & a.seed  # 64-bit, independent of PYTHONHASHSEED
    assert a.rules == SMALL and a.names == tuple(NAMES[:3]) and a.players == 3


def test_botkit_run_over_streams_two_matches_then_quit() -> None:
    """Messages in, replies out (one line each), errors on stderr, stop at quit."""
    game = Game.seeded(SMALL, 3, 5)
    d = game.decision()
    assert d is not None
    req = request_message(41, d, game.view(d.seat))
    lines = [
        start_message("m1", d.seat, NAMES[:3], SMALL, TimeLimits(5, 1)),
        event_message(game.log[1]),
        req,
        error_message(41, "illegal", "you do not hold QH", Play((), parse_card("7C"))),
        end_message("m1", [1, 2, 3], [1, 2, 3], [False, False, False]),
        start_message("m2", d.seat, NAMES[:3], SMALL, TimeLimits(5, 1)),
        {**req, "id": 42},
        {"type": "shiny_new_message"},
        quit_message(),
        {**req, "id": 43},  # after quit: never read
    ]
    stdin = io.StringIO("".join(json.dumps(m) + "\n" for m in lines[:3]) + "\n  \nnot json\n"
                        + "".join(json.dumps(m) + "\n" for m in lines[3:]))
    stdout, stderr = io.StringIO(), io.StringIO()
    events: list[Any] = []
    session = botkit.BotSession(name="streams", draw=lambda v: Draw(STOCK), on_event=events.append, stderr=stderr)
    assert session.run(stdin, stdout) == 0
    out = [json.loads(x) for x in stdout.getvalue().splitlines()]
    ready = {"type": "ready", "name": "streams", "protocol": 2}
    assert out == [ready, {"id": 41, "draw": "stock"}, ready, {"id": 42, "draw": "stock"}]
    assert stdout.getvalue().count("\n") == 4
    err = stderr.getvalue()
    assert "request 41 refused (illegal): you do not hold QH" in err and "7C" in err
    assert "not JSON" in err
    assert events == [game.log[1].public().to_json()]
    assert session.done and session.matches == 2 and len(session.errors) == 1


def test_botkit_callback_forms_and_safe_fallback() -> None:
    game = Game.seeded(SMALL, 3, 9)
    while (d := game.decision()) is not None and d.kind != PLAY:
        game.apply(Draw(STOCK) if d.kind == DRAW else Buy(False), d.seat)
    assert d is not None
    req = json.loads(json.dumps(request_message(3, d, game.view(d.seat))))
    view = game.view(d.seat)
    dearest = max((c for c in view.hand if c.rank not in (0, 2)), key=lambda c: (c.penalty(), c.rank))
    start = start_message("m", d.seat, NAMES[:3], SMALL, TimeLimits(5, 1))

    def boom(view: Any) -> Any:
        raise RuntimeError("bug in my bot")

    forms = [
        (lambda v: Play((), v.hand[0]), {"id": 3, "steps": [], "discard": view.hand[0].text}),
        (lambda v: {"discard": v.hand[1].text}, {"id": 3, "discard": view.hand[1].text}),
        (lambda v: {"type": "play", "discard": v.hand[2].text}, {"id": 3, "steps": [], "discard": view.hand[2].text}),
        (boom, {"id": 3, "steps": [], "discard": dearest.text}),
    ]
    for fn, expected in forms:
        stderr = io.StringIO()
        session = botkit.BotSession(name="forms", play=fn, stderr=stderr)
        session.handle(start)
        assert session.handle(req) == expected
        assert ("bug in my bot" in stderr.getvalue()) == (fn is boom)
        game_copy = Game.from_record(game.to_record())
        game_copy.apply(parse_reply(expected, 3, PLAY), d.seat)  # every one of them is legal


def test_botkit_defaults_are_safe_and_legal() -> None:
    """A FunctionPlayer without callbacks plays a whole match legally."""
    session = botkit.BotSession(name="idle", print_errors=False)
    game = drive_session(session, SMALL, 3, 31, 0, make_players(3, 31), "idle")
    assert game.over


# -- docs/PROTOCOL.md -----------------------------------------------------------------


def doc_json_blocks() -> list[Any]:
    """Every ```json block of the doc: one JSON value, or one value per line."""
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(r"```json\n(.*?)```", text, flags=re.S)
    values: list[Any] = []
    for block in blocks:
        try:
            values.append(json.loads(block))
        except json.JSONDecodeError:
            values.extend(json.loads(line) for line in block.splitlines() if line.strip())
    return values


def test_doc_examples_are_valid_messages(validators: dict[str, Any]) -> None:
    values = doc_json_blocks()
    assert len(values) >= 20
    kinds: set[str] = set()
    for value in values:
        assert isinstance(value, dict), value
        if "type" in value and value["type"] in ("start", "ready", "event", "request", "error", "end", "quit"):
            name = value["type"]
            if name == "request" and "history" in value["view"]:
                name = "request_v1"
        else:
            name = "reply_draw" if "draw" in value else "reply_buy" if "buy" in value else "reply_play"
            kind = name[len("reply_"):]
            parse_reply(value, value["id"], kind)  # the arena reads it
        kinds.add(name)
        problems = errors_of(validators[name], value)
        assert not problems, f"{name}: {problems[:3]}\n{json.dumps(value)[:500]}"
    assert kinds == set(schema_names()) - {"reply"}


def test_doc_names_every_view_field_and_event() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert f"Protocol version {PROTOCOL_VERSION}" in text
    game = Game.seeded(SMALL, 3, 1)
    for key in game.view(0).to_json():
        assert f"| `{key}` |" in text, f"view field {key!r} is not in the view table"
    for kind in (ev.DEAL, ev.DRAW, ev.DECLINE, ev.BUY, ev.GO_DOWN, ev.LAY_OFF, ev.SWAP, ev.DISCARD,
                 ev.GO_OUT, ev.RESHUFFLE, ev.HAND_END, ev.MATCH_END):
        assert f"| `{kind}` |" in text, f"event {kind!r} is not in the event table"
    for fault in ("timeout", "crash", "malformed", "wrong_id", "illegal"):
        assert f"`{fault}`" in text
    for name in schema_names():
        assert f"{name}.json" in text
    for path in ("bots/README.md", "examples/python/", "examples/javascript/", "examples/c/", "arena/botkit.py"):
        assert path in text
        assert (REPO / path).exists()


def test_botkit_answers_even_an_unreadable_request() -> None:
    """A view botkit cannot read still gets a legal-shaped reply, and the bot lives on."""
    stderr = io.StringIO()
    session = botkit.BotSession(name="x", stderr=stderr)
    assert session.handle({"type": "request", "id": 3, "kind": "play", "view": {"cards": ["7H", "8C"]}}) == \
        {"id": 3, "discard": "7H"}
    assert session.handle({"type": "request", "id": 4, "kind": "draw", "view": {}}) == {"id": 4, "draw": "stock"}
    assert session.handle({"type": "request", "id": 5, "kind": "buy"}) == {"id": 5, "buy": False}
    assert session.handle([1, 2]) is None
    assert stderr.getvalue().count("sending a safe move") == 3


def protocol_examples() -> Any:
    spec = importlib.util.spec_from_file_location("protocol_examples", REPO / "docs" / "examples.py")
    assert spec is not None and spec.loader is not None
    examples = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(examples)
    return examples


def test_doc_examples_and_recorded_session_are_generated_by_the_engine() -> None:
    """docs/PROTOCOL.md's examples of what the arena sends (start, the play
    request with its reply and events, the error notices of a real match,
    end, a protocol 1 request) and examples/session.jsonl are what
    ``python docs/examples.py`` makes through the arena's codec: regenerated
    and compared."""
    examples = protocol_examples()
    doc = DOC.read_text(encoding="utf-8")
    assert examples.regenerated(doc) == doc, "run python docs/examples.py"
    assert examples.session() == (REPO / "examples" / "session.jsonl").read_bytes(), \
        "run python docs/examples.py"


def test_doc_error_example_shows_each_fault_as_a_match_sends_it() -> None:
    """The error notices come from a real match: one of each fault a reply can
    earn, each with the fallback the arena played; and a stale hand-written
    block between the markers is found and replaced."""
    examples = protocol_examples()
    block = examples.error_example()
    notices = [json.loads(line) for line in block.splitlines()[1:-1]]
    assert sorted(n["fault"] for n in notices) == ["illegal", "malformed", "timeout"]
    by_fault = {n["fault"]: n for n in notices}
    assert by_fault["timeout"]["reason"] == "no reply within 1.000 s"
    assert by_fault["timeout"]["fallback"] == {"type": "draw", "source": "stock"}
    assert by_fault["malformed"]["fallback"] == {"type": "buy", "buy": False}
    assert by_fault["illegal"]["fallback"]["steps"] == []
    stale = examples.marker("the error notices") + '```json\n{"type": "error"}\n```\n' + examples.END
    assert examples.doc_with("before\n" + stale + "after\n", "the error notices", block) == \
        "before\n" + examples.marker("the error notices") + block + examples.END + "after\n"
    with pytest.raises(ValueError, match="no marker"):
        examples.doc_with("no markers here", "the error notices", block)
