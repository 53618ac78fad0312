"""``arena league run --serve PORT``: the live page served by the run itself
(a child process it owns), over HTTP on loopback while matches are played,
and nothing left listening once the run ends: by ``--max-matches``, by a
SIGTERM, or killed outright."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
from test_league import ROOT, make_league

WAIT = 120.0        # bounds every wait below; times nothing


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0):
            return True
    except OSError:
        return False


def pages_of(league: Path) -> list[int]:
    """The pids of every process serving ``league``'s page (its command line names the folder)."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"serve" in argv and str(league).encode() in argv:
            found.append(int(pid))
    return found


@contextmanager
def running(league: Path, *options: str) -> Iterator[subprocess.Popen[str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "arena", "league", "run", str(league), "--jobs", "1", *options],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        for pid in pages_of(league):         # only on failure: never leave this test's page behind
            os.kill(pid, signal.SIGKILL)


def board_while_playing(port: int, proc: subprocess.Popen[str], matches: int) -> dict:
    """/board.json once it shows at least ``matches`` stored, the run still playing."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            answer = httpx.get(f"http://127.0.0.1:{port}/board.json", timeout=10)
            board = answer.json()["board"]
            if answer.status_code == 200 and board and board["health"]["matches"] >= matches:
                return dict(board)
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"no page showing {matches} matches; the run: {proc.poll()}")


def gone(port: int, league: Path) -> bool:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (listening(port) or pages_of(league)):
        time.sleep(0.1)
    return not listening(port) and not pages_of(league)


def test_the_run_serves_its_page_while_it_plays_and_a_sigterm_stops_both(tmp_path: Path) -> None:
    league, port = make_league(tmp_path / "lg"), free_port()
    with running(league, "--serve", str(port), "--max-matches", "100000") as proc:
        board = board_while_playing(port, proc, 3)
        assert {r["version"] for r in board["leaderboard"]} == {"house-greedy.v1", "house-random.v1",
                                                              "house-passive.v1"}
        assert httpx.post(f"http://127.0.0.1:{port}/", timeout=10).status_code == 405       # read-only
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=WAIT)
    assert proc.returncode == 143, err
    assert err.strip().splitlines()[-1].endswith("goes on; the page is no longer served"), err
    assert gone(port, league)


def test_a_run_that_ends_by_its_max_matches_stops_its_page(tmp_path: Path) -> None:
    league, port = make_league(tmp_path / "lg"), free_port()
    with running(league, "--serve", str(port), "--max-matches", "6", "--idle-exit") as proc:
        out, err = proc.communicate(timeout=WAIT)
        assert proc.returncode == 0, err
        assert f"the live page: http://127.0.0.1:{port}/" in err and "played 6 match(es)" in err
        assert not listening(port) and not pages_of(league)     # stopped before the run returned


def test_a_run_killed_outright_takes_its_page_with_it(tmp_path: Path) -> None:
    league, port = make_league(tmp_path / "lg"), free_port()
    with running(league, "--serve", str(port)) as proc:
        board_while_playing(port, proc, 1)
        proc.kill()
        proc.communicate(timeout=WAIT)
        assert gone(port, league)            # PR_SET_PDEATHSIG: the page's SIGTERM


def test_a_port_taken_stops_the_run_before_it_plays_in_one_line(tmp_path: Path) -> None:
    league = make_league(tmp_path / "lg")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with running(league, "--serve", str(port), "--max-matches", "3") as proc:
            _, err = proc.communicate(timeout=WAIT)
    assert proc.returncode == 1
    assert err.strip().splitlines() == [f"Error: --serve {port}: another program listens on 127.0.0.1:{port} "
                                        f"already; choose another port"], err
    assert not (league / "results" / "results.sqlite").exists() and not pages_of(league)     # nothing played


def test_a_page_that_cannot_start_stops_the_run_before_it_plays_quoting_its_log(tmp_path: Path) -> None:
    league, port = make_league(tmp_path / "lg"), free_port()
    with running(league, "--serve", str(port), "--host", "192.0.2.1", "--max-matches", "3") as proc:   # not ours
        _, err = proc.communicate(timeout=WAIT)
    assert proc.returncode == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: --serve {port}: the page did not start: "), err
    assert "cannot assign requested address" in lines[0].lower(), err
    assert "cannot assign" in (league / "results" / "logs" / "page.log").read_text().lower()
    assert not (league / "results" / "results.sqlite").exists() and not pages_of(league)
