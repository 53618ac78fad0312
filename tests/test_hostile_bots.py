"""Nothing a bot sends stops the arena: end to end, with real bot processes.

A bot (tests/gamebots/hostile.py) puts a 5000-digit integer, NaN, 1e400,
50,000 brackets, a duplicate key, a BOM or a float id into its replies or its
'ready' line.  Each such reply is a ``malformed`` fault with a one-line
reason and the match finishes; in 'ready' it is a failed start (forfeit).
``arena play`` exits normally and writes its --log; ``arena run`` finishes
with --jobs 1 and --jobs 2.  CR LF line endings are accepted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_match import assert_no_processes

from arena.cli import main
from arena.match import MatchSpec, SeatSpec, run_match
from arena.process import TimeControl

GAMEBOTS = Path(__file__).parent / "gamebots"
RULES = {"contracts": ["2S3", "S3+R4"], "turn_cap_per_player": 15}
FAST = TimeControl(startup_seconds=5.0, per_decision_seconds=1.0)
HOSTILE = f"{sys.executable} {GAMEBOTS / 'hostile.py'}"


def hostile(kind: str, where: str = "reply") -> SeatSpec:
    return SeatSpec.command([sys.executable, str(GAMEBOTS / "hostile.py"), kind, where], name=f"{kind}-{where}")


def play(tmp_path: Path, seat: SeatSpec):
    spec = MatchSpec("hostile", (seat, SeatSpec.builtin("random"), SeatSpec.builtin("greedy")), RULES,
                     seed=3, time=FAST, log_dir=str(tmp_path / "logs"))
    result = run_match(spec)
    assert_no_processes(result.pids)
    assert len(result.hand_scores) == 2                       # the match finished
    return result


REPLIES = [
    ("hugeint", "integer with 5000 digits"),
    ("hugefield", "integer with 5000 digits"),
    ("nan", "NaN is not JSON"),
    ("overflow", "number 1e400 is out of range"),
    ("deep", "nesting deeper than 32"),
    ("dupkey", "duplicate key 'id'"),
    ("bom", "byte-order mark"),
    ("floatid", "must be a whole number"),
]


@pytest.mark.parametrize("kind,reason", REPLIES, ids=[r[0] for r in REPLIES])
def test_hostile_reply_is_a_malformed_fault_and_the_match_finishes(tmp_path: Path, kind: str, reason: str) -> None:
    result = play(tmp_path, hostile(kind))
    faults = result.faults_of(0)
    assert [f.kind for f in faults] == ["malformed"] * 3 and faults[-1].forfeit
    assert all(f.decision is not None for f in faults)
    assert reason in faults[0].detail and "\n" not in faults[0].detail
    assert faults[0].excerpt is not None and len(faults[0].excerpt) <= 203
    assert result.forfeited == (True, False, False) and result.faults_of(1) == [] == result.faults_of(2)


READY = [
    ("hugeint", "integer with 5000 digits"),
    ("nan", "NaN is not JSON"),
    ("deep", "nesting deeper than 32"),
    ("dupkey", "duplicate key 'name'"),
    ("bom", "byte-order mark"),
    ("bidiname", "control characters"),         # U+202E would reverse a line that shows the name
    ("longname", "string of 10240 characters"),  # 10 KB: refused by the line decoder already
]


@pytest.mark.parametrize("kind,reason", READY, ids=[r[0] for r in READY])
def test_hostile_ready_is_a_clean_start_failure(tmp_path: Path, kind: str, reason: str) -> None:
    result = play(tmp_path, hostile(kind, "ready"))
    (fault,) = result.faults
    assert (fault.seat, fault.kind, fault.decision, fault.decision_kind, fault.forfeit) == \
        (0, "malformed", None, "start", True)
    assert reason in fault.detail and fault.detail.isprintable() and len(fault.detail) < 1000   # bounded
    assert result.forfeited == (True, False, False) and result.places[0] == 3


def test_crlf_line_endings_are_accepted(tmp_path: Path) -> None:
    for where in ("ready", "reply"):
        result = play(tmp_path, hostile("crlf", where))
        assert result.faults == () and result.bot_names[0] == "hostile"


# ------------------------------------------------------------------------ CLI

def test_arena_play_with_a_hostile_bot_exits_normally_and_writes_its_log(tmp_path: Path) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps(RULES))
    log = tmp_path / "match.json"
    res = subprocess.run(
        [sys.executable, "-m", "arena", "play", f"{HOSTILE} hugeint", f"{HOSTILE} hugeint ready", "greedy",
         "--seed", "3", "--rules", str(rules), "--time-per-move", "1", "--log-dir", str(tmp_path / "logs"),
         "--log", str(log)],
        capture_output=True, text=True, timeout=300)
    out = res.stdout + res.stderr
    # the match is played to the end and shown, but a seat lost makes the exit status 3
    assert res.returncode == 3, out
    assert "Traceback" not in out
    assert "integer with 5000 digits" in out and "(forfeited)" in out
    assert "error: seat 1 (hostile.py) was forfeited at the start" in res.stderr
    data = json.loads(log.read_text())
    assert data["forfeited"] == [True, True, False]
    assert {(f["seat"], f["kind"]) for f in data["faults"]} == {(0, "malformed"), (1, "malformed")}


def tournament(tmp_path: Path) -> Path:
    path = tmp_path / "t.yaml"
    bot = [sys.executable, str(GAMEBOTS / "hostile.py")]
    path.write_text(f"""
name: hostile
bots:
  - name: huge-reply
    command: {json.dumps([*bot, "hugeint"])}
  - name: huge-ready
    command: {json.dumps([*bot, "hugeint", "ready"])}
  - name: greedy
    builtin: greedy
players: 3
rules:
  contracts: [2S3]
time: {{startup: 10, per_move: 1}}
deals: 1
seed: 5
""")
    return path


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_arena_run_with_hostile_bots_finishes(tmp_path: Path, jobs: str) -> None:
    out = tmp_path / "out"
    res = subprocess.run([sys.executable, "-m", "arena", "run", str(tournament(tmp_path)), "--out", str(out),
                          "--jobs", jobs], capture_output=True, text=True, timeout=300)
    text = res.stdout + res.stderr
    assert res.returncode == 0, text
    assert "Traceback" not in text and "Leaderboard" in text
    board = CliRunner().invoke(main, ["leaderboard", str(out), "--format", "json"])
    assert board.exit_code == 0, board.output
    rows = json.loads(board.output)
    rows = rows["leaderboard"] if isinstance(rows, dict) else rows
    assert {r["bot"] for r in rows} == {"huge-reply", "huge-ready", "greedy"}
    assert {r["matches"] for r in rows} == {3}
