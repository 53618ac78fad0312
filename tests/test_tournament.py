"""`arena run` end to end through the CLI, with the shipped bots.

Covers: a full run and the result commands; --jobs 1 and --jobs 2 give
identical results; a SIGKILLed run resumes to the same final leaderboard;
bad tournament files fail with one line and start no bot; the greedy bot
finishes above the random bot in the demo tournament.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from filelock import FileLock
from inproc import arena_here

from arena.cli import main
from arena.tournament.results.database import ResultStore

ROOT = Path(__file__).resolve().parent.parent


def small_tournament(tmp: Path, deals: int = 1, extra: str = "") -> Path:
    """Four bots (two programs, two built-ins), three per table, three hands a match.

    The program bots carry ARENA_TEST_TAG (the temporary directory) in their
    environment, so a test can find exactly its own bot processes.
    """
    path = tmp / "t.yaml"
    path.write_text(
        f"""
name: small
bots:
  - name: greedy
    command: [{json.dumps(sys.executable)}, bots/greedy_bot.py]
    dir: {json.dumps(str(ROOT))}
    env: {{ARENA_TEST_TAG: {json.dumps(str(tmp))}}}
  - name: random
    command: [{json.dumps(sys.executable)}, bots/random_bot.py]
    dir: {json.dumps(str(ROOT))}
    env: {{ARENA_TEST_TAG: {json.dumps(str(tmp))}}}
  - name: greedy-builtin
    builtin: greedy
  - name: random-builtin
    builtin: random
players: 3
rules:
  contracts: [2S3, S3+R4, 2R4]
time: {{startup: 20, per_move: 5}}
deals: {deals}
seed: 11
{extra}
"""
    )
    return path


def cli(*args: str) -> object:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def board(out: Path) -> list[dict]:
    result = cli("leaderboard", str(out), "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["leaderboard"] if result.output.lstrip().startswith("{") else json.loads(result.output)


def match_rows(out: Path) -> list[tuple]:
    with sqlite3.connect(out / "results.sqlite") as db:
        return db.execute(
            "select m.match_id, s.seat, s.bot, s.total, s.place, s.forfeited "
            "from seats s join matches m on m.match_id = s.match_id order by m.match_id, s.seat"
        ).fetchall()


def test_run_and_result_commands(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = cli("run", str(small_tournament(tmp_path)), "--out", str(out), "--jobs", "1")
    assert result.exit_code == 0, result.output
    assert "12 matches" in result.output and "Leaderboard" in result.output
    rows = board(out)
    assert {r["bot"] for r in rows} == {"greedy", "random", "greedy-builtin", "random-builtin"}
    assert all(r["matches"] == 9 for r in rows)

    csv = cli("leaderboard", str(out), "--format", "csv")
    assert csv.exit_code == 0 and csv.output.splitlines()[0].lower().startswith("rank")
    md = cli("leaderboard", str(out), "--format", "markdown")
    assert "|" in md.output

    listing = cli("matches", str(out), "--bot", "greedy")
    assert listing.exit_code == 0 and listing.output.count("t0") == 9

    first = match_rows(out)[0][0]
    shown = cli("show", str(out), first)
    assert shown.exit_code == 0, shown.output
    assert "Hand 1 of 3" in shown.output and "stderr logs" in shown.output

    again = cli("run", str(small_tournament(tmp_path)), "--out", str(out))
    assert "already played" in again.output


def test_dry_run_prints_the_schedule_and_starts_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = cli("run", str(small_tournament(tmp_path, deals=2)), "--out", str(out), "--dry-run")
    assert result.exit_code == 0, result.output
    assert "24 matches" in result.output and "t000-r0-d0" in result.output
    assert not out.exists()


@pytest.fixture
def straight(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """The results of ``small_tournament(deals=2)`` played straight through
    with ``--jobs 2``, once for the session (its xdist workers share it):
    what the tests that stop and resume that tournament, and the one of
    ``--jobs 1``, compare with.  Played once instead of by each, it saved
    24 matches of bot processes a test (issue 31).  Read it, never write."""
    base = tmp_path_factory.getbasetemp()
    shared = base if worker_id == "master" else base.parent     # the session's, shared by its workers
    where, played = shared / "straight", shared / "straight.played"
    with FileLock(str(shared / "straight.lock")):
        if not played.exists():
            shutil.rmtree(where, ignore_errors=True)    # a run that failed part-way
            where.mkdir()
            done = cli("run", str(small_tournament(where, deals=2)), "--out", str(where / "out"), "--jobs", "2")
            assert done.exit_code == 0, done.output
            played.touch()
    return where / "out"


def test_jobs_one_and_two_give_identical_results(tmp_path: Path, straight: Path) -> None:
    one = tmp_path / "one"
    assert cli("run", str(small_tournament(tmp_path, deals=2)), "--out", str(one), "--jobs", "1").exit_code == 0
    assert len({row[0] for row in match_rows(one)}) == 24
    assert match_rows(one) == match_rows(straight)
    assert board(one) == board(straight)


def tagged_processes(tag: Path) -> list[int]:
    """Live processes whose environment carries ARENA_TEST_TAG=tag."""
    return processes_with("ARENA_TEST_TAG", str(tag))


def processes_with(variable: str, value: str, but: tuple[int, ...] = ()) -> list[int]:
    """Live processes (but ``but``) whose environment sets ``variable`` to
    ``value``, wherever they were reparented to."""
    needle = f"{variable}={value}".encode()
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) in but:
            continue
        try:
            env = (Path("/proc") / pid / "environ").read_bytes()
            state = (Path("/proc") / pid / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in env.split(b"\0") and state != "Z":
            found.append(int(pid))
    return found


def wait_for_stored(db: Path, proc: subprocess.Popen, at_least: int) -> int:
    deadline = time.monotonic() + 240     # a bound for a hung run, not a speed test: Ray starts slowly on a busy machine
    stored = 0
    while time.monotonic() < deadline and proc.poll() is None:
        if db.exists():
            try:
                with sqlite3.connect(db) as conn:
                    stored = conn.execute("select count(*) from matches").fetchone()[0]
            except sqlite3.Error:
                stored = 0
            if stored >= at_least:
                break
        time.sleep(0.05)
    return stored


def describe(pids: list[int]) -> str:
    """What the processes a test found left over are, for its failure message."""
    lines = []
    for pid in pids:
        try:
            cmd = (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ")[:160]
            status = (Path("/proc") / str(pid) / "status").read_text().splitlines()
        except OSError:
            continue
        keep = [line for line in status if line.startswith(("State", "PPid", "NSpid"))]
        lines.append(f"{pid}: {cmd.decode(errors='replace')} | {'; '.join(keep)}")
    return "\n".join(lines)


def wait_gone(tag: Path, seconds: float = 15) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := tagged_processes(tag)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def run_in_background(path: Path, out: Path, **popen: Any) -> subprocess.Popen[Any]:
    """``arena run FILE --out OUT --jobs 2`` started, not waited for."""
    return subprocess.Popen([sys.executable, "-m", "arena", "run", str(path), "--out", str(out), "--jobs", "2"],
                            **popen)


def test_sigkill_then_resume_equals_uninterrupted(tmp_path: Path, straight: Path) -> None:
    path = small_tournament(tmp_path, deals=2)
    out = tmp_path / "killed"
    proc = run_in_background(path, out, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stored = wait_for_stored(out / "results.sqlite", proc, 3)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert 0 < stored < 24, "the run should be killed part-way"
    left = wait_gone(tmp_path)
    assert left == [], f"bots outlived a killed arena:\n{describe(left)}"
    resumed = cli("run", str(path), "--out", str(out), "--jobs", "2")
    assert resumed.exit_code == 0, resumed.output
    assert "resuming" in resumed.output
    assert match_rows(out) == match_rows(straight)
    assert board(out) == board(straight)


def test_ctrl_c_stops_cleanly_and_says_how_to_resume(tmp_path: Path) -> None:
    path = small_tournament(tmp_path, deals=2)
    out = tmp_path / "out"
    proc = run_in_background(path, out, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             start_new_session=True)
    stored = wait_for_stored(out / "results.sqlite", proc, 2)
    assert stored < 24
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    output, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130       # interrupted, as every command: not "failed" (1)
    assert "interrupted" in output and "run the same command again to resume" in output
    assert "Traceback" not in output
    left = wait_gone(tmp_path)
    assert left == [], f"bots outlived an interrupted arena:\n{describe(left)}"
    with sqlite3.connect(out / "results.sqlite") as db:
        assert db.execute("pragma integrity_check").fetchone()[0] == "ok"
    resumed = cli("run", str(path), "--out", str(out), "--jobs", "1")
    assert resumed.exit_code == 0 and "resuming" in resumed.output


def stop_line(out: Path) -> str:
    return (f"Error: terminated (SIGTERM): the matches already finished are stored in {out / 'results.sqlite'}; "
            f"run the same command again to resume")


def test_sigterm_stops_like_ctrl_c_and_resume_gives_the_same_results(tmp_path: Path, straight: Path) -> None:
    """`kill`, systemd or a CI timeout: exit 143, one line, every stored match
    kept, no bot left, and running again completes the same tournament."""
    path = small_tournament(tmp_path, deals=2)
    out = tmp_path / "out"
    proc = run_in_background(path, out, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
    stored = wait_for_stored(out / "results.sqlite", proc, 2)
    assert 2 <= stored < 24
    os.kill(proc.pid, signal.SIGTERM)       # the arena's process only, as `kill PID` does
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err      # 128 + SIGTERM, as a shell reports it
    assert "Traceback" not in err and [line for line in err.splitlines() if "rror" in line] == [stop_line(out)], err
    left = wait_gone(tmp_path)
    assert left == [], f"bots outlived a terminated arena:\n{describe(left)}"
    with sqlite3.connect(out / "results.sqlite") as db:
        assert db.execute("pragma integrity_check").fetchone()[0] == "ok"
        assert db.execute("select count(*) from matches").fetchone()[0] >= stored
    resumed = cli("run", str(path), "--out", str(out), "--jobs", "2")
    assert resumed.exit_code == 0 and "resuming" in resumed.output, resumed.output
    assert match_rows(out) == match_rows(straight)
    assert board(out) == board(straight)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_second_signal_while_stopping_leaves_no_traceback_and_no_bot(tmp_path: Path, jobs: str) -> None:
    """SIGTERM, then a Ctrl-C and another SIGTERM while the arena stops its
    workers and bots: ignored, the clean-up completes."""
    path = small_tournament(tmp_path, deals=2)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "run", str(path), "--out", str(out), "--jobs", jobs],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    assert wait_for_stored(out / "results.sqlite", proc, 1) >= 1
    os.kill(proc.pid, signal.SIGTERM)
    for again in (signal.SIGINT, signal.SIGTERM):
        time.sleep(0.02)
        try:
            os.killpg(proc.pid, again)      # the whole group: the workers get it too
        except ProcessLookupError:
            break                           # stopped already
    _, err = proc.communicate(timeout=60)
    # On a busy machine the SIGINT can reach the arena before its main thread
    # has run the SIGTERM's handler: Python then runs the handlers of both in
    # signal-number order, SIGINT's first, and the run stops as for a Ctrl-C.
    said = stop_line(out) if proc.returncode == 143 else stop_line(out).replace("terminated (SIGTERM)", "interrupted")
    assert proc.returncode in (143, 130), err
    assert "Traceback" not in err and [line for line in err.splitlines() if "rror" in line] == [said], err
    left = wait_gone(tmp_path)
    assert left == [], f"bots outlived a terminated arena:\n{describe(left)}"
    resumed = cli("run", str(path), "--out", str(out), "--jobs", "2")
    assert resumed.exit_code == 0 and "resuming" in resumed.output, resumed.output


@pytest.mark.parametrize(
    "text, expected",
    [
        ("players: 3\nbots: []\n", "bots"),
        ("nmae: x\n", "nmae"),
        ("bots:\n  - name: a\n    builtin: greedy\n  - name: b\n    comand: x\n", "bots[1].comand"),
        ("rules:\n  wild_deuce: false\n", "wild_deuce"),
        ("players: 12\n", "players"),
        ("bots: [\n", "not valid YAML"),
    ],
)
def test_bad_files_give_one_line_and_start_no_bot(tmp_path: Path, text: str, expected: str) -> None:
    marker = tmp_path / "started"
    starter = tmp_path / "starter.py"
    starter.write_text(f"open({str(marker)!r}, 'w').close()\n")
    base = (
        "name: bad\n"
        "bots:\n"
        f"  - name: s\n    command: [{json.dumps(sys.executable)}, {json.dumps(str(starter))}]\n"
        "  - name: g\n    builtin: greedy\n"
        "  - name: r\n    builtin: random\n"
    )
    path = tmp_path / "bad.yaml"
    # The mistake replaces or extends the good base file.
    path.write_text(text if text.startswith("bots") else base + text)
    result = CliRunner().invoke(main, ["run", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code != 0
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert expected in lines[0] and "bad.yaml" in lines[0]
    assert not marker.exists()


def test_missing_program_is_named_before_any_match(tmp_path: Path) -> None:
    path = small_tournament(tmp_path).read_text().replace("bots/random_bot.py", "bots/no_such_bot.py")
    (tmp_path / "m.yaml").write_text(path)
    result = CliRunner().invoke(main, ["run", str(tmp_path / "m.yaml"), "--out", str(tmp_path / "out")])
    assert result.exit_code != 0
    assert "random" in result.output


def test_greedy_finishes_above_random_in_the_demo(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    result = cli("run", str(ROOT / "tournaments" / "demo.yaml"), "--out", str(out))
    assert result.exit_code == 0, result.output
    rank = {r["bot"]: r["rank"] for r in board(out)}
    assert rank["greedy"] < rank["random"]


def test_progress_line_on_a_terminal_and_plain_lines_now_and_then_off_it() -> None:
    import dataclasses
    import io

    from arena import logsetup
    from arena.match import MatchResult
    from arena.tournament.pairing.schedule import ScheduleEntry
    from arena.tournament.progress import Progress

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    entry = ScheduleEntry(0, "t000-r0-d0", 0, 0, 0, ("a", "b", "c"), 1)
    result = MatchResult(
        match_id="t000-r0-d0", names=("a", "b", "c"), totals=(10, 20, 30), places=(1, 2, 3),
        hand_scores=((10, 20, 30),), winners=(None,), forfeited=(False, False, False),
        faults=(), stats=(), stderr_logs=(None, None, None), record={}, wall_seconds=1.0,
        startup_seconds=0.0,
    )
    # Off a terminal (nohup, cron, CI): a plain line once a tenth of the
    # matches and 30 s have both passed since the last one.
    now = [100.0]
    log = io.StringIO()
    plain = Progress(total=40, stream=log, started=100.0, clock=lambda: now[0])
    for i, second in enumerate((5, 10, 20, 35, 40, 45, 50, 55, 60, 65, 70, 75, 80, 85, 500)):
        now[0] = 100.0 + second
        plain.add(dataclasses.replace(entry, match_id=f"t000-r{i}-d0"), result)
    lines = log.getvalue().splitlines()
    # A tenth (4 matches) at 35 s; 4 more by 55 s, but 30 s after the last is 65 s; then
    # 4 more by 85 s, too soon again, so at 500 s.
    assert [line.split()[0] for line in lines] == ["[4/40]", "[10/40]", "[15/40]"], lines
    assert lines[0].startswith("[4/40] 0:35 elapsed, ETA ") and "leader a (rating " in lines[0]
    assert "\r" not in log.getvalue() and "\x1b" not in log.getvalue()
    logsetup.set_quiet(True)        # -q: nothing but the failed matches' lines
    try:
        quiet = io.StringIO()
        hushed = Progress(total=4, stream=quiet, started=0.0, clock=lambda: now[0])
        hushed.add(entry, result)
        hushed.fail("t000-r1-d0: arena error: X")
        assert quiet.getvalue() == "t000-r1-d0: arena error: X\n"
    finally:
        logsetup.set_quiet(False)
    tty = Tty()
    progress = Progress(total=4, stream=tty)
    progress.add(entry, result)
    line = tty.getvalue()
    assert "[1/4]" in line and "elapsed" in line and "ETA" in line and "faults 0" in line
    assert "leader a (rating " in line


def test_without_a_seed_a_random_one_is_drawn_kept_and_resumed(tmp_path: Path) -> None:
    """Bots see their match names: with a known seed they could compute every
    deal, so a file without 'seed' gets a random 63-bit one, kept for resume."""
    path = tmp_path / "t.yaml"
    path.write_text("name: unseeded\nbots:\n  - {name: a, builtin: random}\n"
                    "  - {name: b, builtin: greedy}\nplayers: 2\nrules: {contracts: [2S3]}\n")
    out = tmp_path / "out"
    first = cli("run", str(path), "--out", str(out), "--jobs", "1")
    assert first.exit_code == 0, first.output
    with ResultStore(out / "results.sqlite", create=False) as store:
        seed = store.tournament()["seed"]
    assert isinstance(seed, int) and seed.bit_length() > 32
    again = cli("run", str(path), "--out", str(out), "--jobs", "1")
    assert again.exit_code == 0 and "already played" in again.output
    other = tmp_path / "other"
    assert cli("run", str(path), "--out", str(other), "--jobs", "1").exit_code == 0
    with ResultStore(other / "results.sqlite", create=False) as store:
        assert store.tournament()["seed"] != seed


def _run_one_program(tmp_path: Path, name: str, mode: int, command: str,
                     text: bytes = b"#!/usr/bin/env python3\n") -> tuple[Path, subprocess.CompletedProcess[str]]:
    """``arena run`` of a file whose bot ``mine`` runs ``command`` from
    ``tmp_path``, which holds a script ``name`` with ``mode`` (and ``text``)."""
    bot = tmp_path / name
    bot.write_bytes(text)
    bot.chmod(mode)
    path = tmp_path / "t.yaml"
    path.write_text(f"name: x\nbots:\n  - {{name: mine, command: {command}, dir: {json.dumps(str(tmp_path))}}}\n"
                    "  - {name: b, builtin: greedy}\nplayers: 2\nseed: 3\n")
    # in this process (tests/inproc.py): the refusal comes before any bot
    # starts, and a new interpreter for it cost 0.4 CPU-s a test
    done = arena_here("run", str(path), "--out", str(tmp_path / "out"), cwd=ROOT)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    return path, done


def test_a_bot_program_that_cannot_be_run_is_one_line_before_any_match(tmp_path: Path) -> None:
    path, done = _run_one_program(tmp_path, "bot.py", 0o644, "./bot.py")
    assert done.stdout == ""
    # the one-line error alone: no estimate of a run that will not start, and no results folder
    assert done.stderr.strip().splitlines() == [
        f"Error: {path}:3: bots.mine.command: './bot.py' is not executable "
        "(chmod +x ./bot.py, or name its interpreter: python3 ./bot.py)"]
    assert not (tmp_path / "out").exists()


def test_a_bare_program_name_in_the_bots_dir_is_told_to_start_with_dot_slash(tmp_path: Path) -> None:
    path, done = _run_one_program(tmp_path, "mybot", 0o755, "mybot")
    assert done.stderr.strip().splitlines()[-1] == (
        f"Error: {path}:3: bots.mine.command: program 'mybot' not on PATH; "
        f"to run the file 'mybot' in {tmp_path}, write ./mybot")


def test_a_script_without_a_hash_bang_line_is_told_how_to_run(tmp_path: Path) -> None:
    path, done = _run_one_program(tmp_path, "bot.py", 0o755, "./bot.py", b"import sys\n")
    assert done.stderr.strip().splitlines()[-1] == (
        f"Error: {path}:3: bots.mine.command: './bot.py' cannot be run: not a binary, and no #! line "
        "(make '#!/usr/bin/env python3' its first line, or name its interpreter: python3 ./bot.py)")


@pytest.mark.parametrize("first, why", [
    ("#!/usr/bin/env python3\r\n", "its #! line ends in a carriage return: the file has Windows (CRLF) line "
                                    "endings; convert it to LF (dos2unix bot.py, or the editor's line-ending setting)"),
    ("#!/no/such/python3\n", "its interpreter (#! line) was not found"),
])
def test_a_script_whose_hash_bang_line_cannot_work_is_one_line_before_any_match(tmp_path: Path, first: str,
                                                                                 why: str) -> None:
    path, done = _run_one_program(tmp_path, "bot.py", 0o755, "./bot.py", first.encode() + b"import sys\n")
    assert done.stderr.strip().splitlines()[-1] == f"Error: {path}:3: bots.mine.command: './bot.py' cannot be run: {why}"


def test_a_bare_script_name_that_cannot_run_alone_is_told_its_interpreter(tmp_path: Path) -> None:
    path, done = _run_one_program(tmp_path, "bot.py", 0o644, "bot.py")
    assert done.stderr.strip().splitlines()[-1] == (
        f"Error: {path}:3: bots.mine.command: program 'bot.py' not on PATH; "
        f"to run the script 'bot.py' in {tmp_path}, write python3 bot.py")


def test_every_rotation_of_a_duplicate_deal_gets_the_same_cards_in_every_hand(tmp_path: Path) -> None:
    """Each hand's shoe comes from (match seed, hand), each reshuffle from
    (match seed, hand, reshuffle): a reshuffle in one rotation cannot change
    the later hands of that rotation."""
    path = tmp_path / "t.yaml"
    path.write_text("name: dup\nbots:\n" + "".join(
        f"  - {{name: {n}, builtin: {k}}}\n" for n, k in
        (("g", "greedy"), ("r1", "random"), ("r2", "random"), ("p", "passive"))) +
        "players: 3\ndeals: 1\nseed: 5\n")    # 12 matches, 18 reshuffles: a second deal showed nothing more
    out = tmp_path / "out"
    assert cli("run", str(path), "--out", str(out), "--jobs", "1").exit_code == 0
    groups: dict[tuple[int, int], list[list[list[str]]]] = {}
    reshuffled = 0
    with ResultStore(out / "results.sqlite", create=False) as store:
        for m in store.matches():
            events = store.record(m.match_id)["events"]
            reshuffled += sum(e["type"] == "reshuffle" for e in events)
            groups.setdefault((m.table, m.deal), []).append(
                [e["shoe"] for e in events if e["type"] == "deal"])
    assert len(groups) == 4 and all(len(rotations) == 3 for rotations in groups.values())
    for rotations in groups.values():
        assert len(rotations[0]) == 10 and all(shoes == rotations[0] for shoes in rotations)
    assert reshuffled > 0, "no reshuffle happened: the test would not show anything"


def test_a_run_that_ignores_ctrl_c_keeps_its_workers_ignoring_it(tmp_path: Path) -> None:
    """A background job of a script (no job control) or nohup starts with
    SIGINT ignored, and the arena leaves it so; a Ctrl-C at the script's
    terminal reaches the whole process group all the same.  The workers
    ignored it too late: each died mid-match, stored as an arena error
    ("worker process died (exit code 0)") and the run exited 1."""
    path = small_tournament(tmp_path, deals=2)
    out = tmp_path / "out"
    proc = run_in_background(path, out, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert wait_for_stored(out / "results.sqlite", proc, 2) < 24
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert "arena error" not in err, err
    with sqlite3.connect(out / "results.sqlite") as db:
        assert db.execute("select count(*) from failed_matches").fetchone()[0] == 0
        assert db.execute("select count(*) from matches").fetchone()[0] == 24
