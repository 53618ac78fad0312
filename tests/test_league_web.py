"""``arena league serve``'s page: its routes (over HTTP, httpx), that
what a version brings is escaped, and in a real headless Chromium (the
system's, driven by Playwright, as tests/test_report_browser.py) that the
table updates without a reload when a match is stored.

One league of built-in players for the module; the server binds 127.0.0.1.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
import uvicorn

from arena.league.config import LeagueConfig, load_league
from arena.league.register import Register
from arena.league.run import run_league
from arena.league.web.app import SECTIONS, make_app
from arena.tournament.results.database import ResultStore

LEAGUE = """\
name: web-league
players: 3
rules: {contracts: [2S3]}
sandbox: none
seed: 5
authors:
  - {name: house-greedy, builtin: greedy}
  - {name: house-random, builtin: random}
  - {name: house-passive, builtin: passive}
  - {name: alice, command: python3 bot.py}
"""
HOSTILE = "<script>alert(1)</script> \u202eevil"


def quiet(line: str) -> None:
    pass


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> LeagueConfig:
    where = tmp_path_factory.mktemp("league")
    (where / "league.yaml").write_text(LEAGUE)
    config = load_league(where)
    run_league(config, jobs=1, max_matches=3, echo=quiet, idle_exit=True)
    with Register(where) as register:       # a refused version whose reasons quote what its bot wrote
        version = register.add_version("alice", "0" * 64, ("python3", "bot.py"))
        register.refuse(version.name, [f"draw: malformed: {HOSTILE}"])
    return config


def test_the_page_shows_the_leaderboard_history_health_and_recent_matches(served: str) -> None:
    with httpx.Client(base_url=served) as client:
        page = client.get("/")
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        html = page.text
        for name in ("house-greedy.v1", "house-random.v1", "house-passive.v1", "alice.v1", "L000000-r0"):
            assert name in html
        assert 'href="replay/L000000-r1"' in html and 'id="matches-stored">' in html
        parts = client.get("/fragments").json()
        assert set(parts["sections"]) == set(SECTIONS) and parts["key"] in html
        board = client.get("/board.json").json()["board"]
        assert board["health"]["matches"] >= 3 and len(board["leaderboard"]) == 3    # (the browser's test plays more)
        assert all(r["ranks"] and r["stage"] == "placement" for r in board["leaderboard"])
        replay = client.get("/replay/L000000-r1")
        assert replay.status_code == 200 and "replay-data" in replay.text
        assert client.get("/replay/L999999-r0").status_code == 404
        assert client.post("/").status_code == 405                     # read-only


def test_what_a_version_brings_is_escaped(served: str) -> None:
    with httpx.Client(base_url=served) as client:
        html = client.get("/").text
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "\u202e" not in html and "\\u202eevil" in html


# -- in a real browser ---------------------------------------------------------------

BROWSERS = ("chromium", "chromium-browser")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("playwright is not installed; CI must run the browser tests")
        pytest.skip("playwright is not installed (pip install -e '.[test]')")
    path = next((p for p in map(shutil.which, BROWSERS) if p), None)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("no system Chromium; CI must run the browser tests (.ci/run installs chromium)")
        pytest.skip("no system Chromium (apt-get install chromium)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def served(league: LeagueConfig) -> Iterator[str]:
    """The page under uvicorn on 127.0.0.1, a free port, in a thread of this process."""
    with serving(league) as url:
        yield url


def test_the_browser_sees_the_table_update_without_a_reload(league: LeagueConfig, served: str, browser: Any) -> None:
    page = browser.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(served)
    before = int(page.inner_text("#matches-stored"))
    page.evaluate("window.notReloaded = true")
    page.wait_for_timeout(300)            # the event stream is open
    run_league(league, jobs=1, max_matches=3, echo=quiet, idle_exit=True)
    page.wait_for_function(f"Number(document.getElementById('matches-stored').textContent) === {before + 3}",
                           timeout=20_000)
    assert page.evaluate("window.notReloaded === true")
    assert "L000001-r0" in page.inner_text("#recent")
    assert not errors, errors
    page.close()


def test_a_sigterm_ends_serve_as_any_command(league: LeagueConfig) -> None:
    """uvicorn stops gracefully on SIGTERM; then arena ends as every command
    does, status 143 and one line, not silently with 0."""
    import signal
    import socket
    import subprocess
    import sys

    with socket.socket() as s:          # a free port on loopback, for the server to take
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "arena", "league", "serve", str(league.path.parent),
                             "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60    # bounds the wait for the server to answer; times nothing
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/board.json", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143, (out, err)
    assert [line for line in err.splitlines() if line.strip()] == [
        "Error: terminated (SIGTERM): the page is no longer served; the league's files are as they were"], err


def test_a_version_links_to_its_diagnostics_page_from_the_report(served: str, browser: Any) -> None:
    page = browser.new_page()
    page.goto(served)
    page.click("#leaderboard a.diagnostics >> text=house-random.v1")
    page.wait_for_url("**/bot/house-random.v1", timeout=20_000)
    assert page.title() == "house-random.v1 in web-league — arena report"     # the report's --bot page
    assert "Diagnostics" in page.inner_text("h2#bots")
    replay = page.locator("a.replay").first
    href = replay.get_attribute("href")
    assert href is not None and href.startswith("../replay/L0")
    replay.click()                                                       # its matches open in the page's viewer
    page.wait_for_url("**/replay/L0*", timeout=20_000)
    assert page.locator("#replay-data").count() == 1
    page.close()
    with httpx.Client(base_url=served) as client:
        assert client.get("/bot/nobody.v1").status_code == 404
        assert client.get("/bot/alice.v1").status_code == 404             # refused: it played nothing


@contextmanager
def serving(config: LeagueConfig) -> Iterator[str]:
    """A page of its own under uvicorn on 127.0.0.1, a free port, in a thread
    of this process (for the module, or for a test that patches the app's module)."""
    server = uvicorn.Server(uvicorn.Config(make_app(config), host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}/"
    finally:
        server.should_exit = True
        thread.join(10)


def test_a_change_is_rendered_aside_while_readers_get_the_last_rendering(tmp_path: Any,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader never waits for the fit behind a change: it gets what was rendered last,
    and the new rendering follows."""
    import arena.league.web.app as web

    (tmp_path / "league.yaml").write_text(LEAGUE)
    config = load_league(tmp_path)
    run_league(config, jobs=1, max_matches=3, echo=quiet, idle_exit=True)
    gate = threading.Event()
    real_board = web.board

    def held_board(*args: Any, **kwargs: Any) -> Any:
        gate.wait(60)
        return real_board(*args, **kwargs)

    monkeypatch.setattr(web, "FRESH_SECONDS", 0.0)
    with serving(config) as url, httpx.Client(base_url=url, timeout=60) as client:
        first = client.get("/fragments").json()["key"]
        monkeypatch.setattr(web, "board", held_board)
        with Register(tmp_path) as register:
            register.add_version("alice", "1" * 64, ("python3", "bot.py"))         # the league changes
        answers: list[str] = []
        reader = threading.Thread(target=lambda: answers.append(client.get("/fragments").json()["key"]))
        reader.start()
        reader.join(30)                       # bounds a wait; times nothing
        gate.set()
        assert answers == [first]             # the last rendering, while the change renders aside
        deadline = time.monotonic() + 60
        while client.get("/fragments").json()["key"] == first and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "alice.v1" in client.get("/fragments").json()["sections"]["authors"]


def test_the_common_answers_are_bytes_from_memory(league: LeagueConfig, monkeypatch: pytest.MonkeyPatch) -> None:
    """50 readers queue behind serve's cost a request (issue 35's p95): the page and its
    sections are rendered once per change of the league, and within FRESH_SECONDS of a
    look at its state a request reads no database and renders nothing."""
    import arena.league.web.app as web

    looks: list[int] = []
    renders: list[int] = []
    real_state_key, real_board = web.state_key, web.board

    def counted_state_key(*args: Any, **kwargs: Any) -> Any:
        looks.append(1)
        return real_state_key(*args, **kwargs)

    def counted_board(*args: Any, **kwargs: Any) -> Any:
        renders.append(1)
        return real_board(*args, **kwargs)

    monkeypatch.setattr(web, "state_key", counted_state_key)
    monkeypatch.setattr(web, "board", counted_board)
    monkeypatch.setattr(web, "FRESH_SECONDS", 3600.0)
    with serving(league) as url, httpx.Client(base_url=url, timeout=60) as client:
        answers = [client.get(path) for _ in range(10) for path in ("", "fragments")]
    assert {answer.status_code for answer in answers} == {200}
    assert len({answer.content for answer in answers[1::2]}) == 1 and "house-greedy" in answers[1].text
    assert (len(looks), len(renders)) == (1, 1)


def test_serve_parses_http_in_c_and_logs_no_access(league: LeagueConfig) -> None:
    """h11's pure-Python parsing was twice the rest of a request's CPU, and an access log
    line a request would cost more than the answer: the league extra brings httptools."""
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    from arena.league.web.serve import settings

    config = settings(league, "127.0.0.1", 0)
    config.load()
    assert config.http_protocol_class is HttpToolsProtocol
    assert config.access_log is False


def test_a_store_the_run_is_still_creating_is_no_error_page(league: LeagueConfig, tmp_path: Any) -> None:
    """The run makes results.sqlite as its page starts: a reader that comes
    while the file is still empty gets the page as it stands (no matches
    yet), not a 500, and the matches once the store is whole."""
    shutil.copytree(league.dir, tmp_path / "lg")          # the module's league stays whole
    config = load_league(tmp_path / "lg")
    db = config.results / "results.sqlite"
    with ResultStore(db) as store:                        # its WAL into the file
        store.matches()
    whole = db.read_bytes()
    for extra in ("-wal", "-shm"):
        db.with_name(db.name + extra).unlink(missing_ok=True)
    db.write_bytes(b"")
    with serving(config) as url, httpx.Client(base_url=url, timeout=60) as client:
        first = client.get("board.json")
        assert first.status_code == 200, first.text
        db.write_bytes(whole)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            board = client.get("board.json").json()["board"]
            if board and board["health"]["matches"] > 0:
                break
            time.sleep(0.2)
    assert board and board["health"]["matches"] > 0
