"""Every shipped bot and starter kit, run as a real subprocess against a
scripted arena side written here (not the match runner): start/ready, then
whole 3-player matches where the other seats are in-process players, with
event notices, requests and an error notice per the protocol.  Every reply
must parse and be legal, and each process plays two matches in a row before
it is told to quit.  No process outlives its test.
"""

from __future__ import annotations

import json
import os
import queue
import random
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.players.greedy import GreedyPlayer
from arena.players.random_player import RandomPlayer
from arena.protocol.messages import (
    TimeLimits,
    end_message,
    error_message,
    event_message,
    parse_ready_message,
    parse_reply,
    quit_message,
    request_message,
    start_message,
)
from arena.shanghai.actions import STOCK, Draw
from arena.shanghai.errors import IllegalAction, MalformedInput
from arena.shanghai.game import Game
from arena.shanghai.ruleset import Ruleset

REPO = Path(__file__).parent.parent
SMALL = Ruleset.from_mapping({"contracts": ["2S3", "S3+R4", "2R4"]})
SETS = Ruleset.from_mapping({"contracts": ["2S3", "3S3", "S4+S3"], "deal_size": 9})
REPLY_TIMEOUT = 20.0  # generous: a loaded CI machine; real matches use ~1 s

try:
    import jsonschema

    from arena.protocol.schemas import load_schema

    VALIDATORS: dict[str, Any] | None = {
        name: jsonschema.Draft202012Validator(load_schema(name))
        for name in ("ready", "reply_draw", "reply_buy", "reply_play")
    }
except ImportError:  # the schemas are tested in test_protocol; here they are a bonus
    VALIDATORS = None


class ScriptedArena:
    """The arena side of one bot process: JSON lines over pipes, with timeouts."""

    def __init__(self, argv: list[str], tmp: Path, cwd: Path = REPO) -> None:
        self.stderr_path = tmp / "stderr.log"
        self._stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self._stderr, start_new_session=True)
        self.lines: queue.Queue[bytes] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.sent = 0

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(b"")  # EOF

    def send(self, obj: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(obj, separators=(",", ":")) + "\n").encode())
        self.proc.stdin.flush()
        self.sent += 1

    def recv(self) -> Any:
        try:
            line = self.lines.get(timeout=REPLY_TIMEOUT)
        except queue.Empty:
            raise AssertionError(f"no reply within {REPLY_TIMEOUT} s{self.stderr_tail()}") from None
        assert line, f"the bot closed its stdout (exit code {self.proc.poll()}){self.stderr_tail()}"
        assert line.endswith(b"\n")
        return json.loads(line)

    def stderr_tail(self) -> str:
        self._stderr.flush()
        text = self.stderr_path.read_text(errors="replace")
        return f"\n--- bot stderr ---\n{text[-3000:]}" if text.strip() else ""

    def quit(self) -> int:
        self.send(quit_message())
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(timeout=REPLY_TIMEOUT)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        for f in (self.proc.stdin, self.proc.stdout):
            if f is not None:
                try:
                    f.close()
                except OSError:
                    pass
        self._stderr.close()


def check_shape(name: str, obj: Any) -> None:
    if VALIDATORS is not None:
        problems = [e.message for e in VALIDATORS[name].iter_errors(obj)]
        assert not problems, f"{name} {obj}: {problems}"


def play_one_match(arena: ScriptedArena, rules: Ruleset, seed: int, seat: int, match: str) -> tuple[Game, int]:
    """One 3-player match with the bot in ``seat``; returns the game and the bot's request count."""
    names = ["bot", "greedy", "random"]
    others = [GreedyPlayer(random.Random(seed)), RandomPlayer(random.Random(seed + 1)),
              GreedyPlayer(random.Random(seed + 2))]
    arena.send(start_message(match, seat, names, rules, TimeLimits(10.0, 1.0, None)))
    ready = arena.recv()
    check_shape("ready", ready)
    protocol = parse_ready_message(ready).protocol
    assert protocol == 2, "every shipped bot and starter kit speaks protocol 2"
    game = Game.seeded(rules, 3, seed)
    sent_events, req_id, asked = 1, 1000 * seed, 0  # log[0] is match_start: never sent to bots
    while (d := game.decision()) is not None:
        for e in game.log[sent_events:]:
            arena.send(event_message(e))
        sent_events = len(game.log)
        view = game.view(d.seat)
        if d.seat != seat:
            game.apply(getattr(others[d.seat], d.kind)(view), d.seat)
            continue
        req_id += 7  # ids are not consecutive: a bot must echo, not count
        asked += 1
        request = request_message(req_id, d, view, protocol)
        arena.send(request)
        reply = arena.recv()
        check_shape(f"reply_{d.kind}", reply)
        try:
            action = parse_reply(reply, req_id, d.kind)
            game.apply(action, seat)
        except (MalformedInput, IllegalAction) as err:
            raise AssertionError(
                f"{match}: reply {json.dumps(reply)} to a {d.kind} request refused: {err}\n"
                f"view: {json.dumps(view.to_json()['cards'])} melds "
                f"{json.dumps([m['cards'] for m in view.to_json()['melds']])}{arena.stderr_tail()}"
            ) from None
        if asked == 3:  # an error notice, as after a refused reply: the bot must carry on
            arena.send(error_message(req_id, "timeout", "no reply within 1.000 s (a test notice)", Draw(STOCK)))
    for e in game.log[sent_events:]:
        arena.send(event_message(e))
    arena.send(end_message(match, list(game.totals), game.places(), [False, False, False]))
    assert game.over
    return game, asked


def run_bot(argv: list[str], tmp: Path, matches: list[tuple[Ruleset, int, int]], cwd: Path = REPO) -> list[Game]:
    arena = ScriptedArena(argv, tmp, cwd)
    games = []
    try:
        for i, (rules, seed, seat) in enumerate(matches):
            game, asked = play_one_match(arena, rules, seed, seat, f"kit-{i}-{seed}")
            assert asked > 10
            games.append(game)
        assert arena.quit() == 0, arena.stderr_tail()
    finally:
        arena.kill()
    return games


TWO_MATCHES = [(SMALL, 3, 0), (SETS, 4, 2)]


def python_argv(path: str) -> list[str]:
    return [sys.executable, str(REPO / path)]


def perl_argv(path: str) -> list[str]:
    perl = shutil.which("perl")
    if perl is None:
        pytest.skip("perl is not installed")
    return [perl, str(REPO / path)]


def node_argv(path: str) -> list[str]:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    return [node, str(REPO / path)]


@pytest.mark.parametrize("path", ["bots/random_bot.py", "bots/greedy_bot.py", "examples/python/bot.py"])
def test_python_bots(path: str, tmp_path: Path) -> None:
    run_bot(python_argv(path), tmp_path, TWO_MATCHES)


def test_python_botkit_bots_are_deterministic(tmp_path: Path) -> None:
    """Seeded from match id + seat: the same match twice gives the same record."""
    a = run_bot(python_argv("bots/random_bot.py"), tmp_path, [(SMALL, 5, 1)])
    b = run_bot(python_argv("bots/random_bot.py"), tmp_path, [(SMALL, 5, 1)])
    assert a[0].to_record() == b[0].to_record()


def test_python_bots_run_from_anywhere(tmp_path: Path) -> None:
    """The shipped bots find the arena package from a checkout whatever the cwd."""
    run_bot(python_argv("bots/greedy_bot.py"), tmp_path, [(SMALL, 6, 0)], cwd=tmp_path)


def test_perl_starter_kit(tmp_path: Path) -> None:
    run_bot(perl_argv("examples/perl/bot.pl"), tmp_path, TWO_MATCHES)


def test_js_starter_kit(tmp_path: Path) -> None:
    run_bot(node_argv("examples/javascript/bot.js"), tmp_path, TWO_MATCHES)


def js_bot_matches() -> list[tuple[Ruleset, int, int]]:
    return [
        (SMALL, 7, 0),
        (SETS, 8, 1),
        (Ruleset.from_mapping({"contracts": ["S3+R4", "3R4", "2S3+2R4"], "wild_deuces": False}), 9, 2),
        (Ruleset.from_mapping({"preset": "pagat", "contracts": ["S3+R7", "2S3+R5", "3R5"], "deal_size": 13}), 10, 0),
        (Ruleset.from_mapping({"contracts": ["R3+S3", "2R3"], "distinct_set_ranks": False}), 11, 1),
        (Ruleset.preset("shanghai"), 12, 2),
        (Ruleset.preset("pagat"), 13, 0),
    ]


def test_js_bot_plays_legally_over_many_matches(tmp_path: Path) -> None:
    matches = js_bot_matches()
    games = run_bot(node_argv("bots/js/bot.js"), tmp_path, matches)
    # Not too stupid: it goes down now and then, with sets and with runs.
    downs = [e for g, (_, _, seat) in zip(games, matches) for e in g.log if e.kind == "go_down" and e.seat == seat]
    assert len(downs) >= 3
    assert {m["kind"] for e in downs for m in e.to_json()["melds"]} == {"set", "run"}


def c_compiler() -> str:
    for cc in ("gcc", "cc"):
        if shutil.which(cc):
            return cc
    pytest.skip("no C compiler")


def test_c_starter_kit(tmp_path: Path) -> None:
    cc = c_compiler()
    build = tmp_path / "c"
    shutil.copytree(REPO / "examples" / "c", build, ignore=shutil.ignore_patterns("bot", "*.o"))
    if shutil.which("make"):
        cmd = ["make", "-C", str(build), f"CC={cc}"]
    else:
        cmd = [cc, "-std=c99", "-O2", "-Wall", "-Wextra", "-pedantic", "-o", str(build / "bot"), str(build / "bot.c")]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "warning" not in done.stderr, done.stderr
    run_bot([str(build / "bot")], tmp_path, TWO_MATCHES)


def test_botkit_example_in_the_python_readme(tmp_path: Path) -> None:
    text = (REPO / "examples" / "python" / "README.md").read_text()
    code = text.split("```python\n", 1)[1].split("```", 1)[0]
    bot = tmp_path / "readme_bot.py"
    bot.write_text(code)
    games = run_bot([sys.executable, str(bot)], tmp_path, [(SMALL, 14, 2), (SETS, 15, 0)])
    assert any(e.kind == "go_down" and e.seat == 2 for e in games[0].log)


def session_lines() -> list[bytes]:
    return (REPO / "examples" / "session.jsonl").read_bytes().splitlines(keepends=True)


def test_recorded_session_is_valid() -> None:
    lines = session_lines()
    msgs = [json.loads(x) for x in lines]
    assert [m["type"] for m in msgs][0] == "start" and msgs[-2]["type"] == "end" and msgs[-1]["type"] == "quit"
    assert {m["kind"] for m in msgs if m["type"] == "request"} == {"draw", "buy", "play"}
    if VALIDATORS is not None:
        for m in msgs:
            check = jsonschema.Draft202012Validator(load_schema(m["type"]))
            assert not list(check.iter_errors(m)), m


@pytest.mark.parametrize("argv", [["python3", "examples/python/bot.py"], ["node", "examples/javascript/bot.js"],
                                  ["node", "bots/js/bot.js"], ["python3", "bots/greedy_bot.py"],
                                  ["perl", "examples/perl/bot.pl"]])
def test_kits_answer_the_recorded_session(argv: list[str]) -> None:
    """``bot < examples/session.jsonl`` as the READMEs suggest: one line per start and request."""
    if argv[0] == "node":
        argv = node_argv(argv[1])
    elif argv[0] == "perl":
        argv = perl_argv(argv[1])
    else:
        argv = python_argv(argv[1])
    msgs = [json.loads(x) for x in session_lines()]
    requests = [m for m in msgs if m["type"] == "request"]
    done = subprocess.run(argv, cwd=REPO, input=b"".join(session_lines()), capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    out = [json.loads(x) for x in done.stdout.splitlines()]
    assert out[0] == {"type": "ready", "name": out[0]["name"], "protocol": 2}
    assert [r["id"] for r in out[1:]] == [m["id"] for m in requests]
    for reply, req in zip(out[1:], requests):
        parse_reply(reply, req["id"], req["kind"])


def test_bots_readme_lists_every_bot() -> None:
    text = (REPO / "bots" / "README.md").read_text()
    for command in ("python3 bots/random_bot.py", "python3 bots/greedy_bot.py", "node bots/js/bot.js"):
        assert command in text
    for kit in ("python", "javascript", "c"):
        readme = (REPO / "examples" / kit / "README.md").read_text()
        assert "arena play" in readme


def iter_kit_files() -> Iterator[Path]:
    yield from (REPO / "bots").rglob("*")
    yield from (REPO / "examples").rglob("*")


def test_examples_python_kit_does_not_import_arena() -> None:
    text = (REPO / "examples" / "python" / "bot.py").read_text()
    assert "import arena" not in text and "from arena" not in text
    assert not [p for p in iter_kit_files() if p.name in ("package.json", "node_modules")]
    assert os.access(REPO / "bots" / "greedy_bot.py", os.R_OK)


def test_python_botkit_bots_need_no_dependency(tmp_path: Path) -> None:
    """A student's plain python3 has no msgspec: botkit bots still play (with
    the standard json module), here with msgspec made unimportable."""
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    (blocker / "msgspec.py").write_text("raise ImportError('msgspec is not installed here')\n")
    (blocker / "run.py").write_text(
        "import runpy, sys\nsys.argv = sys.argv[1:]\nrunpy.run_path(sys.argv[0], run_name='__main__')\n")
    argv = [sys.executable, str(blocker / "run.py"), str(REPO / "bots/greedy_bot.py")]
    env_path = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(blocker) + (os.pathsep + env_path if env_path else "")
    try:
        games = run_bot(argv, tmp_path, [(SMALL, 6, 0)])
    finally:
        if env_path is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = env_path
    assert games and games[0].decision() is None      # the match was played to its end
