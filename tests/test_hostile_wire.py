"""Bots that misbehave on the wire rather than in what they say, end to end.

- A bot that writes to stdout without end, blank lines instead of its reply,
  junk or the same old reply again between requests, gets its fault (a
  timeout, or a malformed reply) and the match ends: ``arena play``, in the
  sandbox and without, with a hard bound on the run only to fail rather than
  hang.
- Output without end between two requests is thrown away only as far as it
  has come: the next request gets its fault rather than never being sent.
- While the arena writes a request the bot does not read, what the bot writes
  meanwhile is held within a bound, not a list entry per line read (a line
  of two bytes cost a hundred).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

GAMEBOTS = Path(__file__).parent / "gamebots"
BOTS = Path(__file__).parent / "bots"
RULES = {"contracts": ["2S3", "S3+R4"], "turn_cap_per_player": 15}
# Only there to turn a hang into a failure: a match here takes a few seconds.
HANG = 120


def play(tmp_path: Path, mode: str, at: int, sandbox: str, *extra: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps(RULES))
    log = tmp_path / "match.json"
    bot = f"{sys.executable} {GAMEBOTS / 'wire.py'} {mode} {at}"
    res = subprocess.run(
        [sys.executable, "-m", "arena", "play", bot, "random", "--seed", "3", "--rules", str(rules),
         "--time-per-move", "0.6", "--sandbox", sandbox, "--log-dir", str(tmp_path / "logs"), "--log", str(log),
         *extra],
        capture_output=True, text=True, timeout=HANG)
    assert "Traceback" not in res.stdout + res.stderr
    return res, json.loads(log.read_text())


FLOODS = [
    # (mode, sandbox, fault kind, reason, the request it comes at)
    ("blank-flood", "auto", "timeout", "no reply within 0.600 s", 3),
    ("junk-flood", "none", "malformed", "not valid JSON", 4),
    # The real reply comes after the stale ones: late ("reply came after"),
    # or on a loaded machine, behind a flood of 165,000 stale lines, not at all
    # within the time ("no reply within").  Either is the timeout it is.
    ("stale-flood", "auto", "timeout", ("reply came after", "no reply within 0.600 s"), 4),
]


@pytest.mark.parametrize("mode,sandbox,kind,reason,at", FLOODS, ids=[f[0] for f in FLOODS])
def test_a_bot_writing_without_end_gets_its_fault_and_the_match_ends(
        tmp_path: Path, mode: str, sandbox: str, kind: str, reason: str | tuple[str, ...], at: int) -> None:
    res, record = play(tmp_path, mode, 3, sandbox, "--strict")
    assert res.returncode == 3, res.stderr                   # the seat was forfeited
    (fault,) = record["faults"]
    assert (fault["seat"], fault["kind"], fault["forfeit"]) == (0, kind, True), fault
    reasons = (reason,) if isinstance(reason, str) else reason
    assert any(r in fault["detail"] for r in reasons) and "\n" not in fault["detail"], fault
    requests = [d for d in record["trace"][0]["decisions"] if d[1] is not None]
    assert requests[at - 1][0] == fault["decision"]          # at the request it began at, or the next
    assert record["forfeited"] == [True, False]


# In a child arena: a hang fails the test (HANG) instead of holding the suite.
BETWEEN = textwrap.dedent("""
    import sys, time
    from arena.process import BotMalformed, BotProcess, BotSpec, BotTimeout
    bot = BotProcess(BotSpec([sys.executable, sys.argv[1], sys.argv[2], "after-first"])).start()
    assert bot.request({"id": 1}, timeout=30)[0] == {"id": 1}
    time.sleep(0.2)                      # the arena busy elsewhere: the bot's output piles up
    try:
        bot.request({"id": 2}, timeout=0.5)
    except (BotMalformed, BotTimeout) as exc:
        print(exc.kind)
    bot.kill()
""")


@pytest.mark.parametrize("line,kind", [("x", "malformed"), ('{"id": 1}', "timeout"), (" \r", "timeout")])
def test_output_without_end_between_requests_does_not_hold_the_next_request(line: str, kind: str) -> None:
    """Lines that came between requests are thrown away before the next one,
    but only what is there then: a bot that writes on and on gets its fault."""
    res = subprocess.run([sys.executable, "-c", BETWEEN, str(BOTS / "flood.py"), line], capture_output=True,
                         text=True, timeout=HANG)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == [kind]


# A child arena, so that its peak memory is its own.
PEAK = textwrap.dedent("""
    import resource, sys
    from arena.process import BotProcess, BotSpec, BotTimeout
    bot = BotProcess(BotSpec([sys.executable, sys.argv[1], "x"])).start()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        bot.request({"id": 1, "pad": "y" * (1 << 20)}, timeout=1.0)      # more than a pipe holds
    except BotTimeout as exc:
        assert exc.phase == "write", exc
    print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)
    bot.kill()
""")


def test_what_a_bot_writes_while_not_reading_is_held_within_a_bound() -> None:
    res = subprocess.run([sys.executable, "-c", PEAK, str(BOTS / "flood.py")], capture_output=True, text=True,
                         timeout=HANG)
    assert res.returncode == 0, res.stderr
    assert int(res.stdout) < 40         # MB; a list entry per two-byte line read was 300 MB a second


def test_control_characters_a_bot_sends_are_quoted_escaped_not_passed_to_the_terminal(tmp_path: Path) -> None:
    """What the arena quotes of a bot (a refused line, an ignored one, its
    last stderr line) is stored and shown as one line of printable text: an
    escape sequence could hide or rewrite what the console shows."""
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps(RULES))
    log = tmp_path / "match.json"
    res = subprocess.run(
        [sys.executable, "-m", "arena", "play", f"{sys.executable} {GAMEBOTS / 'escapes.py'}", "random",
         "--seed", "3", "--rules", str(rules), "--time-per-move", "2", "--sandbox", "none",
         "--log-dir", str(tmp_path / "logs"), "--log", str(log), "-v"],
        capture_output=True, text=True, timeout=HANG)
    assert res.returncode == 3, res.stderr                   # the crash forfeited the seat
    assert re.search(r"error: seat 0 \(minimal\) was forfeited in hand 1, request id \d+ \(\w+\): crash: exited "
                     r"with code 3", res.stderr), res.stderr
    record = json.loads(log.read_text())
    malformed, crash = record["faults"]
    assert malformed["kind"] == "malformed" and malformed["excerpt"].endswith("\\x1b[8m\\r\\u202e not json")
    assert crash["kind"] == "crash" and crash["detail"].endswith("stderr: last words \\x1b[8m\\u202e")
    (ignored,) = record["warnings"]
    assert ignored["examples"] == ["unsolicited line: stray \\x1b[8m\\r\\u202e"]
    for text in (res.stdout, res.stderr):
        assert "\x1b" not in text and "\r" not in text and "\u202e" not in text
