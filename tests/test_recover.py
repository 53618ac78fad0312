"""An arena-side error in a match never hangs or stops a run (like cutechess-cli's -recover).

Through the real CLI, in a subprocess with a timeout (a hang fails the test),
at --jobs 1 and --jobs 2: the failing match is stored as failed, its
traceback goes to RESULTS/logs/errors.log and one line to the screen, the
other matches are stored, the exit code is non-zero, no worker or bot is left
behind, and the same command run again retries exactly that match and ends
as an uninterrupted run. Errors are injected with the test-only
ARENA_TEST_FAIL_MATCH hook of run_match, by a bot that kills its worker, and
by a store that fails in the parent.
"""

from __future__ import annotations

import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from test_tournament import ROOT, board, cli, describe, match_rows, small_tournament, wait_gone

FAILING = "t001-r1-d0"


def arena(tmp: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 180,
          code: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run arena in a subprocess tagged with ARENA_TEST_TAG=tmp (its workers inherit the tag,
    and the bots carry it too), killing its whole session if it hangs."""
    argv = [sys.executable, "-c", code, *args] if code else [sys.executable, "-m", "arena", *args]
    full_env = {**os.environ, "ARENA_TEST_TAG": str(tmp), **(env or {})}
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=full_env, cwd=ROOT, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"arena {' '.join(args)} hung (killed after {timeout} s)")
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def failed_rows(out: Path) -> list[tuple]:
    with sqlite3.connect(out / "results.sqlite") as db:
        return db.execute("select match_id, reason, attempts from failed_matches order by match_id").fetchall()


@pytest.fixture(scope="module")
def straight(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uninterrupted run of the small tournament, to compare with."""
    tmp = tmp_path_factory.mktemp("straight")
    out = tmp / "out"
    assert cli("run", str(small_tournament(tmp)), "--out", str(out), "--jobs", "2").exit_code == 0
    return out


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_arena_error_fails_one_match_and_the_same_command_retries_it(
        tmp_path: Path, straight: Path, jobs: str) -> None:
    path, out = small_tournament(tmp_path), tmp_path / "out"
    run = arena(tmp_path, "run", str(path), "--out", str(out), "--jobs", jobs,
                env={"ARENA_TEST_FAIL_MATCH": FAILING})
    screen = run.stdout + run.stderr
    assert run.returncode == 1, screen
    assert "Traceback" not in screen
    about = [line for line in screen.splitlines() if FAILING in line]
    assert len(about) == 1, screen
    assert "arena error: InjectedFailure" in about[0] and "logs/errors.log" in about[0]
    assert "1 match failed with an arena error" in run.stdout
    assert "Leaderboard" in run.stdout  # the rest of the tournament is still shown
    log = (out / "logs" / "errors.log").read_text()
    assert "Traceback (most recent call last)" in log and FAILING in log and "InjectedFailure" in log
    stored = {r[0] for r in match_rows(out)}
    assert len(stored) == 11 and FAILING not in stored
    assert [r[0] for r in failed_rows(out)] == [FAILING]
    left = wait_gone(tmp_path)
    assert left == [], f"a worker or a bot outlived the run:\n{describe(left)}"

    listing = cli("matches", str(out))
    row = next(line for line in listing.output.splitlines() if FAILING in line)
    assert " error " in row and "InjectedFailure" in row
    plain = cli("leaderboard", str(out))
    assert plain.exit_code == 0 and "1 match failed with an arena error" in plain.output
    # finished matches only: the three bots of the failed match have one less
    assert {r["bot"]: r["matches"] for r in board_json(out)} == {
        "greedy": 8, "random": 8, "random-builtin": 8, "greedy-builtin": 9}

    again = arena(tmp_path, "run", str(path), "--out", str(out), "--jobs", jobs)
    assert again.returncode == 0, again.stdout + again.stderr
    # status lines go to stderr, so stdout holds only the tables
    assert "11 of 12 matches already stored" in again.stderr and "retrying 1 that failed" in again.stderr
    assert "played 1 match" in again.stderr and "played" not in again.stdout
    assert failed_rows(out) == []
    assert match_rows(out) == match_rows(straight)
    assert board(out) == board(straight)
    assert wait_gone(tmp_path) == []


def board_json(out: Path) -> list[dict]:
    """The JSON leaderboard stays parseable when matches failed (the note goes to stderr)."""
    result = cli("leaderboard", str(out), "--format", "json")
    assert result.exit_code == 0
    assert "failed with an arena error" in result.stderr
    return json.loads(result.stdout)["leaderboard"]


@pytest.mark.parametrize("how, signal_name", [((), "SIGKILL"), (("--term",), "SIGTERM")])
def test_a_worker_killed_in_a_match_fails_that_match_only(tmp_path: Path, how: tuple[str, ...],
                                                          signal_name: str) -> None:
    """Killed by a signal, its match's failure names it: a worker stopped by
    SIGTERM (a user's kill, a process manager) stopped its bots and exited
    0, and the failure said "worker process died (exit code 0)"."""
    killer = json.dumps([sys.executable, str(ROOT / "tests" / "gamebots" / "kill_parent.py"), *how])
    path = tmp_path / "k.yaml"
    path.write_text(f"""
name: killer
sandbox: none   # the killer must see its worker; in the sandbox it cannot
bots:
  - {{name: killer, command: {killer}, env: {{ARENA_TEST_TAG: {json.dumps(str(tmp_path))}}}}}
  - {{name: g1, builtin: greedy}}
  - {{name: g2, builtin: greedy}}
  - {{name: r1, builtin: random}}
players: 3
rules:
  contracts: [2S3]
time: {{startup: 20, per_move: 5}}
seed: 3
""")
    out = tmp_path / "out"
    run = arena(tmp_path, "run", str(path), "--out", str(out), "--jobs", "2")
    screen = run.stdout + run.stderr
    assert run.returncode == 1, screen
    assert "Traceback" not in screen
    failed = failed_rows(out)
    assert len(failed) == 9 and all(f"worker process died (killed by {signal_name})" in r[1] for r in failed), failed
    assert sum("worker process died" in line for line in screen.splitlines()) == 9
    stored = match_rows(out)
    assert len({r[0] for r in stored}) == 3 and "killer" not in {r[2] for r in stored}
    assert wait_gone(tmp_path) == []


STORE_BREAKS = """
import sys
from arena.tournament.results import database as store
from arena.cli import main

calls = []
def add_match(self, m):
    calls.append(m)
    if len(calls) == 2:
        raise store.StoreError(f"{self.path}: disk full (test)")
    return original(self, m)

original = store.ResultStore.add_match
store.ResultStore.add_match = add_match
main(sys.argv[1:])
"""


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_error_in_the_parent_while_storing_stops_every_worker_and_bot(tmp_path: Path, jobs: str) -> None:
    out = tmp_path / "out"
    run = arena(tmp_path, "run", str(small_tournament(tmp_path)), "--out", str(out), "--jobs", jobs,
                code=STORE_BREAKS)
    assert run.returncode == 1
    # the status line saying what is played (stderr, like all status), then the one-line error
    said = [line for line in run.stderr.strip().splitlines()[1:]
            if not line.startswith(("warning: seed 11 is small", "timed each bot's start"))]
    assert said == [f"Error: {out / 'results.sqlite'}: disk full (test)"]
    assert run.stderr.startswith("small: 12 matches") and run.stdout == ""
    left = wait_gone(tmp_path)
    assert left == [], f"a worker or a bot outlived the run:\n{describe(left)}"
    assert len(match_rows(out)) == 3  # the first match, stored before the failure
    again = arena(tmp_path, "run", str(small_tournament(tmp_path)), "--out", str(out), "--jobs", jobs)
    assert again.returncode == 0 and "1 of 12 matches already stored" in again.stderr


def test_progress_prints_a_failure_above_the_progress_line() -> None:
    from arena.tournament.progress import Progress

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    quiet = io.StringIO()
    Progress(total=4, stream=quiet).fail("t1: arena error: X")
    assert quiet.getvalue() == "t1: arena error: X\n"
    tty = Tty()
    progress = Progress(total=4, stream=tty)
    progress.fail("t1: arena error: X")
    assert tty.getvalue().startswith("\r\x1b[Kt1: arena error: X\n[1/4]")
    assert "failed 1" in progress.line()


def test_an_arena_errors_reason_is_one_printable_line_even_when_it_quotes_a_bot() -> None:
    """An arena error's message may quote what a bot sent (a key, a value): the
    one line shown, stored and listed by `arena matches` is escaped and bounded."""
    from arena.tournament.executors.outcome import MatchFailure

    failure = MatchFailure.of("m", ValueError("card \x1b[2J\u202e\r" + "x" * 5000))
    assert failure.reason.startswith("ValueError: card \\x1b[2J\\u202e x")      # (the CR: a blank)
    assert failure.reason.isprintable() and len(failure.reason) < 600
