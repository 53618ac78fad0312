"""A Python bot's start: what it loads, and that loading less changed no reply.

Every tournament starts bot processes (``--jobs 2`` more than ``--jobs 1``;
``arena check`` and ``arena play`` each time), so what a shipped bot imports
before it answers ``start`` is CPU paid again and again
(benchmarks/botstart.py measures it).  botkit reads and writes with the
standard json module and takes msgspec only once a bot has lived long
enough to pay its import back; these tests hold the bot path to that, and
check that both codecs, and the switch between them, give the same bytes.
Each import check runs in a fresh interpreter; no test measures time.
"""

from __future__ import annotations

import hashlib
import io
import json
import random
from pathlib import Path
from typing import Any

import msgspec
import pytest
from test_lean_imports import modules_after

from arena import botkit
from arena.players.greedy import GreedyPlayer
from arena.players.random_player import RandomPlayer
from arena.protocol.messages import (
    TimeLimits,
    end_message,
    error_message,
    event_message,
    parse_reply,
    quit_message,
    request_message,
    start_message,
)
from arena.shanghai import events as ev
from arena.shanghai.actions import MeldCards
from arena.shanghai.cards import parse_card
from arena.shanghai.game import Game
from arena.shanghai.ruleset import Ruleset

ROOT = Path(__file__).resolve().parent.parent
SMALL = Ruleset.from_mapping({"contracts": ["2S3", "S3+R4"]})
NAMES = ["ann", "bea", "cy"]

# Never loaded by a bot's start: the engine's game (a bot plays no Game), the
# arena's side of the protocol, OpenSSL's hashlib (botkit's seed takes
# CPython's own sha256), msgspec (until a bot has read
# BotSession.faster_after lines).
NEVER_AT_START = ("msgspec", "hashlib", "_hashlib", "uuid", "datetime", "decimal", "platform", "dataclasses", "inspect",
                  "arena.shanghai.game", "arena.shanghai.plays", "arena.shanghai.chance",
                  "arena.protocol.messages", "arena.protocol.wire", "arena.protocol.encoder",
                  "arena.protocol.schemas", "arena.match", "arena.process", "arena.tournament", "arena.cli")
# All of arena a shipped bot may load: botkit, its player, and the engine's
# values, meld rules and finder.
ARENA_AT_START = {
    "arena", "arena.botkit", "arena.players", "arena.players.greedy", "arena.players.random_player",
    "arena.players.tabletop", "arena.protocol", "arena.protocol.replies",
    "arena.shanghai", "arena.shanghai.actions", "arena.shanghai.cards", "arena.shanghai.draws",
    "arena.shanghai.errors", "arena.shanghai.events", "arena.shanghai.melds", "arena.shanghai.record",
    "arena.shanghai.ruleset", "arena.shanghai.view", "arena.shanghai.vocab",
    "arena.shanghai.finder", "arena.shanghai.finder.best", "arena.shanghai.finder.counts",
    "arena.shanghai.finder.find", "arena.shanghai.finder.layout", "arena.shanghai.finder.plan",
    "arena.shanghai.finder.search", "arena.shanghai.finder.sets",
}


def start_line(match: str = "m1", seat: int = 1) -> str:
    return json.dumps(start_message(match, seat, NAMES, SMALL, TimeLimits(5, 1)))


@pytest.mark.parametrize("bot", ["bots/greedy_bot.py", "bots/random_bot.py"])
def test_a_shipped_bots_start_loads_only_what_it_plays_with(bot: str) -> None:
    """The bot runs as ``python3 BOT`` does, answers ``start`` and quits;
    then the interpreter's modules are listed."""
    loaded = modules_after(f"""
import contextlib, io, runpy, sys
sys.argv = [{bot!r}]
sys.stdin = io.StringIO({start_line() + chr(10) + json.dumps(quit_message()) + chr(10)!r})
with contextlib.redirect_stdout(io.StringIO()) as out:
    try:
        runpy.run_path({bot!r}, run_name="__main__")
    except SystemExit as done:
        assert done.code == 0, done.code
assert '"ready"' in out.getvalue(), out.getvalue()
""")
    assert "arena.botkit" in loaded
    assert not loaded & set(NEVER_AT_START), sorted(loaded & set(NEVER_AT_START))
    arena = {m for m in loaded if m == "arena" or m.startswith("arena.")}
    assert arena <= ARENA_AT_START, sorted(arena - ARENA_AT_START)


def test_the_seed_is_sha256_of_match_and_seat_as_before() -> None:
    """botkit's seed, now from CPython's own sha256 module, is the one
    hashlib gives: same match, same seat, same moves as ever."""
    info = botkit.MatchInfo.from_message(json.loads(start_line("sample-9", 2)))
    assert info.seed == int.from_bytes(hashlib.sha256(b"sample-9/2").digest()[:8], "big")
    assert botkit._sha256(b"abc") == hashlib.sha256(b"abc").digest()


# -- the codec ----------------------------------------------------------------------


def transcript(seed: int, matches: int = 2, seat: int = 1) -> str:
    """Every line the arena sends one botkit greedy bot over ``matches``
    matches (with an error notice now and then), ending with ``quit``;
    recorded by playing the bot in-process."""
    session = botkit.BotSession(make_player=lambda info: GreedyPlayer(info.rng()), name="kit")
    lines: list[str] = []

    def send(msg: dict[str, Any]) -> dict[str, Any] | None:
        lines.append(json.dumps(msg, separators=(",", ":"), ensure_ascii=False))
        return session.handle(json.loads(lines[-1]))

    for m in range(matches):
        match = f"codec-{seed}-{m}"
        send(start_message(match, seat, NAMES, SMALL, TimeLimits(5, 1)))
        game = Game.seeded(SMALL, len(NAMES), seed + m)
        others = [RandomPlayer(random.Random(seed * 10 + i)) for i in range(len(NAMES))]
        sent, req_id = 1, 0
        while (d := game.decision()) is not None:
            for e in game.log[sent:]:
                if e.kind != ev.MATCH_END:
                    send(event_message(e))
            sent = len(game.log)
            view = game.view(d.seat)
            if d.seat != seat:
                game.apply(getattr(others[d.seat], d.kind)(view), d.seat)
                continue
            req_id += 1
            reply = send(request_message(req_id, d, view))
            assert reply is not None
            if req_id % 40 == 0:
                send(error_message(req_id, "illegal", "a test notice: naïve ✓ \u2028",
                                   botkit.fallback_action(d.kind, view)))
            game.apply(parse_reply(reply, req_id, d.kind), seat)
        send(end_message(match, list(game.totals), game.places(), [False] * len(NAMES)))
    send(quit_message())
    return "\n".join(lines) + "\n"


def replay(text: str, faster_after: int) -> tuple[str, str, botkit.BotSession]:
    """The bot's stdout and stderr for ``text``, switching codecs at that line."""
    session = botkit.BotSession(make_player=lambda info: GreedyPlayer(info.rng()), name="kit",
                                stderr=io.StringIO())
    session.faster_after = faster_after
    out = io.StringIO()
    assert session.run(io.StringIO(text), out) == 0
    assert isinstance(session._stderr, io.StringIO)
    return out.getvalue(), session._stderr.getvalue(), session


def test_json_msgspec_and_the_switch_between_them_write_the_same_bytes() -> None:
    text = transcript(seed=31)
    n_lines = text.count("\n")
    assert n_lines > 400
    json_only, json_err, kept = replay(text, faster_after=10 ** 9)
    assert kept._decode is json.loads                       # never switched: msgspec not needed
    for at in (1, 2, n_lines // 2):
        out, err, switched = replay(text, faster_after=at)
        assert switched._decode is msgspec.json.decode, at   # switched at that line
        assert out == json_only and err == json_err, at
    replies = [json.loads(line) for line in json_only.splitlines()]
    assert replies[0] == {"type": "ready", "name": "kit", "protocol": 2}
    assert sum(r.get("type") == "ready" for r in replies) == 2 and len(replies) > 100
    assert "refused (illegal): a test notice: naïve ✓ \u2028" in json_err


@pytest.mark.parametrize("value", [
    {"id": 3, "draw": "stock"},
    {"id": 4, "name": "ünï\u2028\x00\x1f\x7f\"\\/ 😀", "n": -12, "big": 2 ** 63, "ok": True, "no": None},
    {"id": 5, "discard": parse_card("7H")},                  # a Card where its text belongs
    {"id": 6, "cards": {"7H"}, "nested": [(1, 2), {"k": frozenset({"x"})}]},
    {"id": 7, "go_down": [MeldCards((parse_card("7H"), parse_card("7S"), parse_card("7C")))]},
])
def test_both_codecs_write_what_a_callback_returns_alike(value: dict[str, Any]) -> None:
    json_decode, json_encode = botkit._json_codec()
    fast = botkit._msgspec_codec()
    assert fast is not None
    msgspec_decode, msgspec_encode = fast
    assert json_encode(value) == msgspec_encode(value)
    assert json_decode(json_encode(value)) == msgspec_decode(msgspec_encode(value))
    if value["id"] == 5:
        assert json_decode(json_encode(value))["discard"] == "7H"


def test_without_msgspec_the_session_keeps_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(botkit, "_msgspec_codec", lambda: None)
    out, _err, session = replay(start_line() + "\n" + json.dumps(quit_message()) + "\n", faster_after=1)
    assert session._decode is json.loads and json.loads(out)["type"] == "ready"


# -- what a bot never loads, start to quit ------------------------------------------

# Loaded by no bot process in its whole life, so never paid for: ``typing``
# (about 3 ms of CPU per process; arena's modules take its names only for
# the type checker).  A bot that imports typing itself still may.
NEVER_IN_A_BOTS_LIFE = ("typing",)


@pytest.mark.parametrize("bot", ["bots/greedy_bot.py", "bots/random_bot.py"])
def test_a_shipped_bot_plays_whole_matches_without_typing(bot: str, tmp_path: Path) -> None:
    """Two matches, events, requests and an error notice: typing stays out."""
    lines = tmp_path / "lines.jsonl"
    lines.write_text(transcript(seed=7), encoding="utf-8")
    loaded = modules_after(f"""
import contextlib, io, sys
sys.argv = [{bot!r}]
sys.stdin = open({str(lines)!r}, encoding="utf-8")
with contextlib.redirect_stdout(io.StringIO()) as out, contextlib.redirect_stderr(io.StringIO()):
    try:  # as python3 BOT runs it: runpy would bring typing itself (through pkgutil)
        exec(compile(open({bot!r}).read(), {bot!r}, "exec"), {{"__name__": "__main__", "__file__": {bot!r}}})
    except SystemExit as done:
        assert done.code == 0, done.code
assert out.getvalue().count('"ready"') == 2 and out.getvalue().count('"id"') > 50, out.getvalue()[:500]
""")
    assert "arena.shanghai.finder" in loaded                  # it did search for melds
    assert not loaded & set(NEVER_IN_A_BOTS_LIFE), sorted(loaded & set(NEVER_IN_A_BOTS_LIFE))


def test_a_botkit_bot_loads_the_meld_search_on_first_use() -> None:
    """botkit gives find_contract & co. on first use (PEP 562): a bot of
    functions answers ``start`` without the finder, and still gets it by name."""
    loaded = modules_after(f"""
import io, sys
from arena import botkit
out = io.StringIO()
botkit.run(name="fn", stdin=io.StringIO({start_line() + chr(10) + json.dumps(quit_message()) + chr(10)!r}), stdout=out)
assert '"ready"' in out.getvalue(), out.getvalue()
assert "arena.shanghai.finder" not in sys.modules
from arena.botkit import could_go_down, find_best_contract, find_contract
from arena.shanghai import finder
assert (find_contract, find_best_contract, could_go_down) == (
    finder.find_contract, finder.find_best_contract, finder.could_go_down)
assert set(botkit.__all__) <= set(dir(botkit)) | {{"find_contract", "find_best_contract", "could_go_down"}}
""")
    assert "arena.shanghai.finder" in loaded
    assert not loaded & set(NEVER_IN_A_BOTS_LIFE), sorted(loaded & set(NEVER_IN_A_BOTS_LIFE))
