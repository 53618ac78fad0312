"""``arena league run --serve PORT``: the live page served by the run itself
(a child process it owns), over HTTP on loopback while matches are played,
and nothing left listening once the run ends: by ``--max-matches``, by a
SIGTERM, or killed outright."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
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
        ended(proc, league)


def ended(proc: subprocess.Popen[str], league: Path) -> None:
    """The run killed if it still runs, and its page (only on failure: never leave this test's page behind)."""
    if proc.poll() is None:
        proc.kill()
        proc.communicate()
    for pid in pages_of(league):
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


# -- a page that stops while the run plays -------------------------------------------------


@contextmanager
def running_logged(league: Path, log: Path, *options: str, page: str = "") -> Iterator[subprocess.Popen[str]]:
    """``arena league run`` with its output in ``log`` (a long run's lines would fill a pipe);
    ``page``: Python run first in the run's process (to shorten the page's back-off)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = f"import arena.league.page as page; {page}\nfrom arena.__main__ import run; run()"
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-c", code, "league", "run", str(league), "--jobs", "1", *options],
                                env=env, stdout=out, stderr=out, text=True)
    try:
        yield proc
    finally:
        ended(proc, league)


def next_page(league: Path, port: int, old: int | None) -> int:
    """The pid of the page serving ``league`` on ``port`` once it answers, other than ``old``."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        pids = [p for p in pages_of(league) if p != old]
        if len(pids) == 1:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/board.json", timeout=10).status_code == 200:
                    return pids[0]
            except httpx.HTTPError:
                pass
        time.sleep(0.1)
    logs = [league / "results" / "logs" / "page.log", league.parent / "run.log"]
    tails = {log.name: log.read_text(errors="replace").splitlines()[-8:] for log in logs if log.exists()}
    raise AssertionError(f"no page on {port} other than {old}: pages {pages_of(league)}; {tails}")


def announced(log: Path) -> None:
    """Wait for the run to say its page is up: killed before the run saw it
    listen, the page did not start (a busy machine let the test's kill in first)."""
    deadline = time.monotonic() + WAIT
    while "the live page: http://" not in log.read_text():
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.1)


def stored(league: Path) -> int:
    with sqlite3.connect(f"file:{league / 'results' / 'results.sqlite'}?mode=ro", uri=True) as conn:
        return int(conn.execute("SELECT count(*) FROM matches").fetchone()[0])


def test_a_page_killed_mid_run_is_said_once_and_started_again(tmp_path: Path) -> None:
    league, port, log = make_league(tmp_path / "lg"), free_port(), tmp_path / "run.log"
    with running_logged(league, log, "--serve", str(port), "--max-matches", "100000") as proc:
        announced(log)
        first = next_page(league, port, None)
        os.kill(first, signal.SIGKILL)
        second = next_page(league, port, first)         # the run's, after its back-off
        assert proc.poll() is None
        proc.send_signal(signal.SIGTERM)
        proc.wait(WAIT)
    lines = log.read_text().splitlines()
    said = [line for line in lines if "the live page stopped" in line]
    assert said == [f"the live page stopped (killed by SIGKILL); starting it again in 1 s "
                    f"(its log: {league / 'results' / 'logs' / 'page.log'})"], lines
    assert proc.returncode == 143 and second != first and gone(port, league)


def test_a_page_that_keeps_stopping_is_said_once_and_the_league_plays_on(tmp_path: Path) -> None:
    league, port, log = make_league(tmp_path / "lg"), free_port(), tmp_path / "run.log"
    with running_logged(league, log, "--serve", str(port), "--max-matches", "100000",
                        page="page.BACKOFF_FIRST = 0.1; page.RESTARTS = 2") as proc:
        announced(log)
        pid = None
        for _ in range(3):                   # 2 restarts, then the third stop is one too many
            pid = next_page(league, port, pid)
            os.kill(pid, signal.SIGKILL)
        assert gone(port, league)
        before = stored(league)
        deadline = time.monotonic() + WAIT
        while stored(league) < before + 3 and time.monotonic() < deadline:
            time.sleep(0.2)
            assert not pages_of(league)      # not started again
        assert stored(league) >= before + 3 and proc.poll() is None       # it plays on
        proc.send_signal(signal.SIGTERM)
        proc.wait(WAIT)
    said = [line for line in log.read_text().splitlines() if "the live page" in line]
    assert said[1:3] == [f"the live page stopped (killed by SIGKILL); starting it again in {s} s "
                         f"(its log: {league / 'results' / 'logs' / 'page.log'})" for s in ("0.1", "0.2")], said
    assert said[3] == (f"the live page stopped (killed by SIGKILL), 3 times in a row; the league plays on "
                       f"without it (arena league serve {league} --port {port} serves it; its log: "
                       f"{league / 'results' / 'logs' / 'page.log'})"), said
    assert len(said) == 4
