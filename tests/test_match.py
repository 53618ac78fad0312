"""Tests of the match runner (arena.match), ``arena play`` with bot programs and
``arena check``, with tiny misbehaving game bots from tests/gamebots/.

Every match must finish, each misbehaviour must end as its fault kind at the
right decision, and no bot process may outlive the match (or the pool).
"""

from __future__ import annotations

import json
import logging
import pickle
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakebot import check_faults_at_decisions

from arena.cli import main
from arena.match import (
    BotPool,
    FaultPolicy,
    MatchResult,
    MatchSpec,
    SeatSpec,
    fallback_action,
    forfeit_places,
    run_match,
)
from arena.process import BotSpec, BotStartupError, TimeControl, group_members
from arena.protocol import request_message
from arena.protocol.encoder import MatchEncoder
from arena.shanghai.game import Game
from arena.shanghai.ruleset import Ruleset

GAMEBOTS = Path(__file__).parent / "gamebots"
RULES = {"contracts": ["2S3", "S3+R4"], "turn_cap_per_player": 15}
FAST = TimeControl(startup_seconds=5.0, per_decision_seconds=0.6)  # late.py takes 1.0 s; a loaded 2-core CI needs slack
# Filling 200 MB can take longer than 0.3 s on a loaded machine; the memory
# limit, not the clock, must stop the memory hog.
HOG_TIME = TimeControl(startup_seconds=5.0, per_decision_seconds=5.0)


def bot(name: str, *args: str, **limits) -> SeatSpec:
    return SeatSpec.command([sys.executable, str(GAMEBOTS / f"{name}.py"), *args], name=name, **limits)


def wait_group_gone(pgid: int, timeout: float = 3.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while (left := group_members(pgid)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return left


def assert_no_processes(pids) -> None:
    for pid in pids:
        if pid is not None:
            assert wait_group_gone(pid) == [], f"processes of bot group {pid} survived"


def play(tmp_path, *seats: SeatSpec, seed: int = 5, time_control: TimeControl = FAST,
         policy: FaultPolicy = FaultPolicy(), pool: BotPool | None = None, **kw) -> MatchResult:
    spec = MatchSpec(f"t{seed}", seats, kw.pop("rules", RULES), seed=seed, time=time_control,
                     faults=policy, log_dir=str(tmp_path / "logs"), **kw)
    result = run_match(spec, pool)
    if pool is None:
        assert_no_processes(result.pids)
    return result


# ------------------------------------------------------------------ pure parts

def test_forfeit_places():
    assert forfeit_places([10, 20, 5, 30], [False] * 4) == [2, 3, 1, 4]
    assert forfeit_places([10, 20, 5, 30], [False, False, True, False]) == [1, 2, 4, 3]
    assert forfeit_places([10, 10, 5, 5], [False, False, True, True]) == [1, 1, 4, 4]
    assert forfeit_places([0, 50], [True, False]) == [2, 1]
    # Forfeited seats tie whatever their totals (the arena's stand-in play) ...
    assert forfeit_places([10, 20, 5, 30], [False, True, True, False]) == [1, 4, 4, 2]
    assert forfeit_places([40, 5, 20], [False, True, True]) == [1, 3, 3]
    # ... and a match every seat forfeited is a draw
    assert forfeit_places([300, 120, 5], [True, True, True]) == [3, 3, 3]


def test_fallback_actions_are_legal():
    game = Game.seeded(Ruleset.from_mapping(RULES), 3, 11)
    while (d := game.decision()) is not None:
        game.apply(fallback_action(d), d.seat)      # would raise if ever illegal
    assert len(game.hand_scores) == 2


def test_encoder_matches_request_message():
    """The encoded request is exactly request_message's object in either
    protocol (seats of both in one match), notices are public."""
    game = Game.seeded(Ruleset.from_mapping(RULES), 3, 4)
    enc = MatchEncoder(game)
    seen = 0
    for i in range(200):
        d = game.decision()
        assert d is not None
        protocol = 1 + (d.seat + i) % 2
        got = json.loads(enc.request(i + 1, d, protocol))
        assert got == json.loads(json.dumps(request_message(i + 1, d, game.view(d.seat), protocol)))
        notices = [json.loads(n) for n in enc.notices(seen)]
        seen = len(game.log)
        for n in notices:
            assert n["type"] == "event"
            assert not {"shoe", "order", "penalty_cards", "seed"} & set(n["event"])
        game.apply(fallback_action(d), d.seat)


def test_spec_and_result_pickle_and_json(tmp_path):
    spec = MatchSpec("m", (bot("minimal"), SeatSpec.builtin("random")), RULES, seed=3,
                     deal={"hands": [None]}, time=FAST, faults=FaultPolicy(strict=True),
                     log_dir=str(tmp_path))
    assert pickle.loads(pickle.dumps(spec)) == spec
    assert MatchSpec.from_json(json.loads(json.dumps(spec.to_json()))) == spec
    result = run_match(spec)
    assert pickle.loads(pickle.dumps(result)) == result
    assert MatchResult.from_json(json.loads(json.dumps(result.to_json()))) == result


# --------------------------------------------------------------- good matches

def test_stderr_flood_is_capped_and_harmless(tmp_path):
    result = play(tmp_path, bot("stderr_flood", stderr_max_bytes=64 * 1024), SeatSpec.builtin("random"))
    assert result.faults == ()
    log = Path(result.stderr_logs[0])
    assert 64 * 1024 <= log.stat().st_size < 64 * 1024 + 500
    assert "[arena] stderr truncated" in log.read_text()


def test_forked_child_dies_with_the_bot(tmp_path):
    result = play(tmp_path, bot("forker"), SeatSpec.builtin("random"))   # play() checks the group
    assert result.faults == ()


def test_one_late_reply_is_not_taken_for_the_next_request(tmp_path):
    # The reply to request 1 comes 0.2 s after its time ran out, while request
    # 2 is already waiting: it must be dropped, and request 2 answered in time.
    tc = TimeControl(startup_seconds=5.0, per_decision_seconds=0.5)
    result = play(tmp_path, bot("late", "0.7", "--once"), SeatSpec.builtin("random"), time_control=tc)
    assert [f.kind for f in result.faults] == ["timeout"]
    assert result.forfeited == (False, False)
    assert result.stats[0].count > 5 and result.stats[0].timeouts == 1


# ---------------------------------------------------------- misbehaving bots

# What only a process shows: its line and memory limits.  The protocol-level
# misbehaviours (silence, late or malformed replies, wrong ids, illegal
# plays, a crash, a bad handshake) are in test_match_fake.py.
MISBEHAVING = [
    # (bot, args, limits, fault kind, faults before the forfeit)
    ("hugeline", (), {"memory_mb": 400}, "malformed", 3),
    ("memhog", (), {"memory_mb": 200}, "crash", 1),
]


@pytest.mark.parametrize("name,args,limits,kind,strikes", MISBEHAVING, ids=[m[0] for m in MISBEHAVING])
def test_misbehaving_bot_forfeits(tmp_path, name, args, limits, kind, strikes):
    result = play(tmp_path, bot(name, *args, **limits), bot("minimal"), SeatSpec.builtin("random"),
                  time_control=HOG_TIME if name == "memhog" else FAST)
    assert len(result.hand_scores) == 2                       # the match finished
    faults = result.faults_of(0)
    if name == "hugeline":
        # The rest of its 100 MB line is written between its turns, so it is
        # caught computing there (arena/process/confine/turns.py) and stopped between
        # turns: it may then not finish that line and the next within a turn.
        assert faults[0].kind == kind and {f.kind for f in faults} <= {kind, "timeout"}, faults
        assert len(faults) == strikes
    else:
        assert [f.kind for f in faults] == [kind] * strikes, faults
    assert [f.strike for f in faults] == list(range(1, strikes + 1))
    assert [f.forfeit for f in faults] == [False] * (strikes - 1) + [True]
    assert result.faults_of(1) == [] and result.faults_of(2) == []
    assert result.forfeited == (True, False, False)
    assert result.places[0] == 3 and sorted(result.places[1:]) == sorted(forfeit_places(result.totals[1:], [False, False]))
    check_faults_at_decisions(result, 0)
    assert all(f.decision is not None for f in faults)


def test_fault_details(tmp_path):
    hog = play(tmp_path, bot("memhog", memory_mb=200), SeatSpec.builtin("random"), time_control=HOG_TIME).faults[0]
    assert "memory limit 200 MB" in hog.detail or "MemoryError" in hog.detail
    huge = play(tmp_path, bot("hugeline", memory_mb=400), SeatSpec.builtin("random")).faults[0]
    assert "too long" in huge.detail and huge.excerpt.startswith('{"id": ')


# ------------------------------------------------------------ errors and exits

def test_missing_program_raises_and_leaves_nothing(tmp_path, monkeypatch):
    started = _spy_starts(monkeypatch)
    missing = SeatSpec.command([str(tmp_path / "no-such-bot")])
    with pytest.raises(BotStartupError, match="no-such-bot"):
        play(tmp_path, bot("minimal"), missing)
    assert started and all(not p.alive for p in started)
    assert_no_processes(p.pid for p in started)


def test_interrupt_kills_every_bot(tmp_path, monkeypatch):
    started = _spy_starts(monkeypatch)
    from arena.match import seats as seats_module
    real = seats_module.RemoteSeat.decide
    calls = []

    def interrupted(self, game, d):
        calls.append(d)
        if len(calls) == 20:
            raise KeyboardInterrupt
        return real(self, game, d)

    monkeypatch.setattr(seats_module.RemoteSeat, "decide", interrupted)
    with pytest.raises(KeyboardInterrupt), BotPool() as pool:
        play(tmp_path, bot("minimal"), bot("forker"), pool=pool)
    assert len(started) == 2
    assert_no_processes(p.pid for p in started)


def _spy_starts(monkeypatch) -> list:
    started = []
    real = BotPool.start

    def start(self, *args, **kwargs):
        handle = real(self, *args, **kwargs)
        started.append(handle.proc)
        return handle

    monkeypatch.setattr(BotPool, "start", start)
    return started


# ------------------------------------------------------------------- the pool

def test_pool_reuses_processes_and_restarts_exited_ones(tmp_path):
    with BotPool() as pool:
        seats = (bot("minimal"), bot("minimal", "--exit-after-end"), SeatSpec.builtin("random"))
        first = play(tmp_path, *seats, seed=1, pool=pool)
        second = play(tmp_path, *seats, seed=2, pool=pool)
        assert first.faults == () and second.faults == ()
        assert first.reused == (False, False, False)
        assert second.pids[0] == first.pids[0] and second.reused[0]          # kept alive
        assert second.pids[1] != first.pids[1] and not second.reused[1]      # exited after end
        assert group_members(first.pids[0]) != []                            # still alive in the pool
        assert not Path(second.stderr_logs[0]).exists()     # minimal writes nothing on stderr
        assert second.stats[0].count == sum(1 for a in second.record["actions"] if a["seat"] == 0)
        # 2 + 1: the bot that exits after 'end' is either seen dead when the
        # match begins, or handed out and replaced when 'start' finds it gone.
        assert pool.started == 3
    assert_no_processes([*first.pids, *second.pids])


def test_a_kept_process_gone_at_the_handshake_is_replaced_without_a_fault(tmp_path):
    """The kept process is alive when the pool hands it out and exits on
    reading 'start': the seat gets a new process, once, and no fault."""
    with BotPool() as pool:
        seats = (bot("minimal"), bot("gone_at_second_start"), SeatSpec.builtin("random"))
        first = play(tmp_path, *seats, seed=1, pool=pool)
        second = play(tmp_path, *seats, seed=2, pool=pool)
        assert first.faults == () and second.faults == ()
        assert second.pids[0] == first.pids[0] and second.reused[0]
        assert second.pids[1] != first.pids[1] and not second.reused[1]      # the new one
        assert pool.started == 3
        assert second.stats[1].count == sum(1 for a in second.record["actions"] if a["seat"] == 1)
    assert_no_processes([*first.pids, *second.pids])


def test_pool_gives_each_seat_its_own_process_and_drops_forfeited_ones(tmp_path):
    with BotPool() as pool:
        same = bot("minimal")
        first = play(tmp_path, same, same, bot("garbage"), seed=1, pool=pool)
        assert first.pids[0] != first.pids[1] and first.forfeited == (False, False, True)
        assert_no_processes([first.pids[2]])                                 # killed at the forfeit
        second = play(tmp_path, same, same, bot("garbage"), seed=2, pool=pool)
        assert set(second.pids[:2]) == set(first.pids[:2])
        assert second.pids[2] != first.pids[2] and not second.reused[2]
    assert_no_processes([*first.pids, *second.pids])


# ------------------------------------------------------------------------ CLI

def _rules_file(tmp_path) -> str:
    path = tmp_path / "short.yaml"
    path.write_text(json.dumps(RULES))
    return str(path)


def test_cli_play_with_a_bot_program(tmp_path):
    runner = CliRunner()
    cmd = f"{sys.executable} {GAMEBOTS / 'minimal.py'}"
    garbage = f"{sys.executable} {GAMEBOTS / 'garbage.py'}"
    log = tmp_path / "match.json"
    res = runner.invoke(main, ["play", cmd, garbage, "greedy", "--seed", "3", "--rules", _rules_file(tmp_path),
                               "--time-per-move", "0.5", "--log-dir", str(tmp_path / "logs"),
                               "--log", str(log)])
    assert res.exit_code == 3, res.output          # garbage.py's seat was forfeited
    out = res.output
    # both bots call themselves 'minimal': their commands tell them apart
    assert "place" in out and "minimal (minimal.py)" in out and "minimal (garbage.py) (forfeited)" in out
    assert "Faults:" in out and "seat 1 (minimal (garbage.py)): malformed at hand 1" in out
    assert "line: I think I will discard" in out
    assert "stderr log: none (nothing written)" in out       # minimal.py and garbage.py are silent
    data = json.loads(log.read_text())
    assert data["forfeited"] == [False, True, False] and data["faults"][0]["kind"] == "malformed"
    # The fault names the request id the bot saw, not the arena's decision index.
    fault = data["faults"][0]
    rid = next(d[1] for d in data["trace"][1]["decisions"] if d[0] == fault["decision"])
    assert fault["request_id"] == rid
    assert f"seat 1 (minimal (garbage.py)): malformed at hand 1, request id {rid} ({fault['decision_kind']})" in out


def test_two_plays_in_one_second_keep_their_own_stderr_logs(tmp_path, monkeypatch):
    """The match name (and so the logs' names) had only the second: a script
    playing seeds one after another got both matches' stderr in one file."""
    monkeypatch.setattr(time, "strftime", lambda fmt, *args: "20260101-000000")
    chatty = f"{sys.executable} {GAMEBOTS / 'chatty.py'}"
    logs = []
    for seed in (1, 2):
        log = tmp_path / f"m{seed}.json"
        res = CliRunner().invoke(main, ["play", chatty, "random", "--seed", str(seed), "--rules",
                                        _rules_file(tmp_path), "--log-dir", str(tmp_path / "logs"), "--log", str(log)])
        assert res.exit_code == 0, res.output
        logs.append(json.loads(log.read_text())["stderr_logs"][0])
    assert logs[0] != logs[1]
    texts = [Path(p).read_text() for p in logs]
    assert all(texts) and texts[0] != texts[1]


def test_cli_play_missing_program(tmp_path):
    res = CliRunner().invoke(main, ["play", "./no-such-bot", "random", "--log-dir", str(tmp_path)])
    assert res.exit_code != 0
    assert res.output.strip().splitlines() == ["Error: bot 'no-such-bot': cannot start './no-such-bot': "
                                               "no such file or command"]


@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_cli_play_a_bare_name_of_a_program_in_the_directory_says_dot_slash(tmp_path, monkeypatch, mode):
    """Like a shell, a name without '/' is looked up on PATH only: a compiled bot
    next to the user is ./mybot, and the error says so (not that a #! line is wrong)."""
    program = tmp_path / "mybot"
    program.write_text(f"#!{sys.executable}\n")
    program.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(main, ["play", "mybot", "random", "--sandbox", mode, "--log-dir", str(tmp_path)])
    assert res.exit_code == 1
    assert res.output.strip().splitlines() == [
        f"Error: bot 'mybot': cannot start 'mybot': not on PATH; to run the file 'mybot' in {tmp_path}, "
        "write ./mybot"]


@pytest.mark.parametrize("mode", ["bwrap", "none"])
@pytest.mark.parametrize("command, text, perm, says", [
    ("./bot.py", "#!/usr/bin/env python3\n", 0o644,
     "not executable (chmod +x ./bot.py, or name its interpreter: python3 ./bot.py)"),
    ("./bot.py", "import sys\n", 0o755,
     "not a binary, and no #! line (make '#!/usr/bin/env python3' its first line, "
     "or name its interpreter: python3 ./bot.py)"),
    ("bot.py", "import sys\n", 0o644, "not on PATH; to run the script 'bot.py' in {dir}, write python3 bot.py"),
    ("./bot.py", "#!/usr/bin/env python3\r\nimport sys\r\n", 0o755,
     "its #! line ends in a carriage return: the file has Windows (CRLF) line endings; convert it to LF "
     "(dos2unix bot.py, or the editor's line-ending setting)"),
])
def test_cli_play_a_script_that_cannot_run_alone_says_what_to_write(tmp_path, monkeypatch, mode, command,
                                                                      text, perm, says):
    """A student's bot.py without chmod +x or a #! line: the error says both ways to run it."""
    program = tmp_path / "bot.py"
    program.write_text(text)
    program.chmod(perm)
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(main, ["play", command, "random", "--sandbox", mode, "--log-dir", str(tmp_path)])
    assert res.exit_code == 1
    assert res.output.strip().splitlines() == [
        f"Error: bot '{command.removeprefix('./')}': cannot start {command!r}: {says.format(dir=tmp_path)}"]


@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_a_bot_that_misses_a_file_is_told_where_relative_paths_start(tmp_path, monkeypatch, mode):
    """A student's bot opens 'weights.txt', next to it, but runs from elsewhere."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "weights.txt").write_text("1 2 3\n")
    (tmp_path / "sub" / "bot.py").write_text("open('weights.txt').read()\n")
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(main, ["play", f"{sys.executable} sub/bot.py", "random", "--sandbox", mode,
                                    "--log-dir", str(tmp_path / "logs")])
    assert res.exit_code == 3
    assert ("No such file or directory: 'weights.txt'; relative paths start from its working directory, "
            f"{tmp_path}") in res.stderr
    # an absolute path missing (hidden by the sandbox, say): the working directory is no clue
    (tmp_path / "sub" / "bot.py").write_text("open('/no/such/weights.txt').read()\n")
    res = CliRunner().invoke(main, ["play", f"{sys.executable} sub/bot.py", "random", "--sandbox", mode,
                                    "--log-dir", str(tmp_path / "logs")])
    assert "No such file or directory: '/no/such/weights.txt'" in res.stderr
    assert "relative paths" not in res.stderr


@pytest.mark.parametrize("value", ["1", ""])
def test_cli_check_notes_an_inherited_pythonunbuffered(tmp_path, monkeypatch, value):
    """Set in the student's shell, it hides the most common mistake (no flush)
    from the check; a bot's own env: cannot be told from it, so it is noted too."""
    monkeypatch.setenv("PYTHONUNBUFFERED", value)
    res = CliRunner().invoke(main, ["check", f"{sys.executable} -c 'raise SystemExit(1)'", "--sandbox", "none",
                                    "--json"])
    report = json.loads(res.stdout)
    assert report["ok"] is False
    if value:
        assert [n.split(",")[0] for n in report["notes"]] == [
            "PYTHONUNBUFFERED is set here and passed to the bot"]
        text = CliRunner().invoke(main, ["check", f"{sys.executable} -c 'raise SystemExit(1)'", "--sandbox",
                                         "none"]).stdout
        assert text.splitlines()[2].startswith("note: PYTHONUNBUFFERED is set here and passed to the bot, so a "
                                               "Python bot that never flushes its output passes")
    else:
        assert report["notes"] == []


def test_cli_check_passes_a_good_bot(tmp_path):
    res = CliRunner().invoke(main, ["check", f"{sys.executable} {GAMEBOTS / 'minimal.py'}",
                                    "--log-dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    for step in ("start", "draw: upcard or stock", "buy: offered", "go down: 2S3", "match", "quit"):
        assert f"PASS  {step}" in res.output
    # It never goes down: what needs a bot that is down is not reached, and says so.
    assert "SKIP  one card left" in res.output and "did not go down" in res.output
    assert "result: PASS" in res.output and "protocol 2" in res.output


def test_cli_check_warns_about_protocol_1_and_checks_it(tmp_path):
    """A bot written for protocol 1 (no "protocol" in 'ready') is checked in
    protocol 1: every step passes, and the start step says to move on."""
    res = CliRunner().invoke(main, ["check", f"{sys.executable} {GAMEBOTS / 'minimal.py'} --protocol-1",
                                    "--log-dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "WARN  start" in res.output and "protocol 1" in res.output and '"protocol": 2' in res.output
    for step in ("draw: upcard or stock", "buy: offered", "go down: 2S3", "match", "quit"):
        assert f"PASS  {step}" in res.output
    assert "result: PASS" in res.output


@pytest.mark.parametrize("name,failing", [("illegal", "FAIL  draw: upcard or stock"),
                                          ("bad_handshake", "FAIL  start"),
                                          ("exit_midway", "FAIL  draw: upcard or stock")])
def test_cli_check_fails_a_bad_bot(tmp_path, name, failing):
    args = ["1"] if name == "exit_midway" else []
    res = CliRunner().invoke(main, ["check", " ".join([sys.executable, str(GAMEBOTS / f"{name}.py"), *args]),
                                    "--time-per-move", "0.5", "--log-dir", str(tmp_path)])
    assert res.exit_code == 1, res.output
    assert failing in res.output and "result: FAIL" in res.output
    if name == "illegal":
        assert 'reply: {"id":' in res.output
    if name == "exit_midway":
        assert "| exit_midway: giving up now" in res.output       # the stderr excerpt


# ------------------------------------------------------ stderr and decisions

def test_stderr_offsets_tie_each_decision_to_what_the_bot_wrote_during_it(tmp_path):
    result = play(tmp_path, bot("chatty", "--illegal-at", "2"), bot("minimal"), SeatSpec.builtin("random"))
    trace = result.record["trace"][0]
    log = Path(result.stderr_logs[0]).read_bytes()
    ends = [d[3] for d in trace["decisions"][1:]] + [trace["stderr_end"]]
    assert len(trace["decisions"]) > 10
    for (_index, req_id, _ms, start), end in zip(trace["decisions"], ends):
        assert log[start:end].decode() == f"thinking about request {req_id}\ndecided request {req_id}\n"
    # the fault keeps the reply that caused it, in the record
    fault = result.record["faults"][0]
    assert fault["kind"] == "illegal" and fault["excerpt"].startswith('{"id"')
    assert fault["decision"] in [d[0] for d in trace["decisions"]]
    assert not Path(result.stderr_logs[1]).exists()      # minimal wrote nothing: no empty file


# ------------------------------------------------------- seats in log lines

def test_a_kept_process_is_logged_as_the_seat_it_plays_now_its_name_unchanged(caplog):
    """Two seats running one program have one name (`arena play bot bot`):
    the log lines say which seat, even for a process a pool kept from a
    match where it sat elsewhere; its name (errors, pool key) stays."""
    caplog.set_level(logging.DEBUG, logger="arena.process")
    spec = BotSpec(argv=(sys.executable, str(Path(__file__).parent / "bots" / "echo.py")))
    tc = TimeControl(startup_seconds=5, per_decision_seconds=5)
    with BotPool() as pool:
        first, _ = pool.acquire(spec, name="echo.py", stderr_log=None, time_control=tc, label="seat 0 (echo.py)")
        first.proc.request({"id": 1})
        pool.release(first, keep=True)
        again, reused = pool.acquire(spec, name="echo.py", stderr_log=None, time_control=tc, label="seat 1 (echo.py)")
        assert reused and again.proc is first.proc and again.proc.name == "echo.py"
        again.proc.request({"id": 2})
        pool.release(again, keep=False)
    wire = [r.getMessage() for r in caplog.records if " >> " in r.getMessage() or " << " in r.getMessage()]
    assert wire == ['seat 0 (echo.py) >> {"id":1}', 'seat 0 (echo.py) << {"id": 1, "echo": {"id": 1}}',
                    'seat 1 (echo.py) >> {"id":2}', 'seat 1 (echo.py) << {"id": 2, "echo": {"id": 2}}',
                    'seat 1 (echo.py) >> {"type":"quit"}'], wire


def test_play_vv_says_which_seat_each_protocol_line_is_when_seats_run_one_program(tmp_path):
    cmd = f"{sys.executable} {GAMEBOTS / 'minimal.py'}"
    done = subprocess.run([sys.executable, "-m", "arena", "play", cmd, cmd, "--seed", "1", "--rules",
                           _rules_file(tmp_path), "-vv"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    starts = {}
    for line in done.stderr.splitlines():
        label, sep, text = line.partition(" >> ")
        if sep and '"type":"start"' in text:
            starts[label] = json.loads(text)
    assert set(starts) == {"seat 0 (minimal.py)", "seat 1 (minimal.py)"}, done.stderr[:3000]
    for seat in (0, 1):
        told = starts[f"seat {seat} (minimal.py)"]
        assert told["seat"] == seat and told["names"] == ["minimal.py", "minimal.py"]  # what bots are told: unchanged
    replies = {line.partition(" << ")[0] for line in done.stderr.splitlines() if " << " in line}
    assert replies == {"seat 0 (minimal.py)", "seat 1 (minimal.py)"}
