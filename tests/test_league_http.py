"""Versions handed in over HTTP (``arena league serve``'s ``POST /submit``):
tokens kept hashed in the league file, an archive stored, registered and
checked as ``arena league submit`` does it, the author's own page, and
every hostile archive refused with its line and nothing written anywhere.

Against a real uvicorn on 127.0.0.1 (httpx), as tests/test_league_web.py.
"""

from __future__ import annotations

import hashlib
import io
import os
import tarfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from inproc import arena_here
from test_league_web import browser  # noqa: F401  (the headless Chromium fixture)

from arena.league.config import load_league
from arena.league.register import PLAYING, REFUSED, SUBMITTED, Register
from arena.league.tokens import author_of
from arena.league.versions import check_waiting
from arena.league.web.app import make_app

ROOT = Path(__file__).resolve().parent.parent
GAMEBOTS = ROOT / "tests" / "gamebots"
CHECKBOTS = ROOT / "tests" / "checkbots"

LEAGUE = """\
name: http-league
players: 3
rules: {contracts: [2S3]}
sandbox: none
seed: 7
command: python3 bot.py
submissions:
  http: true
  max_upload_mb: 1
  max_unpacked_mb: 4
  max_files: 50
  max_ratio: 50
  per_hour: 100
authors:
  - {name: house-greedy, builtin: greedy}
  - name: alice     # a student
  - name: bob
    limits: {memory_mb: 512}
"""


def quiet(line: str) -> None:
    pass


@contextmanager
def served(directory: Path) -> Iterator[httpx.Client]:
    """The league's page under uvicorn on 127.0.0.1 (a free port), and a client of it."""
    server = uvicorn.Server(uvicorn.Config(make_app(load_league(directory)), host="127.0.0.1", port=0,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30        # bounds the wait for the server; times nothing
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}/", timeout=60) as client:
            yield client
    finally:
        server.should_exit = True
        thread.join(10)


def make_token(directory: Path, author: str) -> str:
    done = arena_here("league", "token", str(directory), author, "-q")
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture()
def league(tmp_path: Path) -> Path:
    where = tmp_path / "lg"
    where.mkdir()
    (where / "league.yaml").write_text(LEAGUE)
    return where


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


# -- archives ----------------------------------------------------------------------------

def zipped(entries: dict[str, bytes], top: str = "", modes: dict[str, int] | None = None) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            if modes is None or name not in modes:
                archive.writestr(top + name, data)      # mode 0600 and no file type, as many tools write it
                continue
            info = zipfile.ZipInfo(top + name)
            info.external_attr = modes[name] << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return out.getvalue()


def tarred(members: list[tuple[tarfile.TarInfo, bytes]], mode: str = "w:gz") -> bytes:
    out = io.BytesIO()
    # gzip's own default level, not tarfile's 9: at 9 the 4.5 MB of two
    # letters took 12 CPU-s to pack, at 6 0.4 s, and packs under 1 MB either way
    level = {"compresslevel": 6} if mode.endswith("gz") else {}
    with tarfile.open(fileobj=out, mode=mode, **level) as archive:
        for info, data in members:
            info.size = len(data) if info.isfile() else 0
            archive.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return out.getvalue()


def member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, link, 0o644
    return info


def bot_files(bot: Path, helpers: Path) -> dict[str, bytes]:
    return {"bot.py": bot.read_bytes(), "common.py": (helpers / "common.py").read_bytes()}


# -- tokens ------------------------------------------------------------------------------

def test_a_token_is_printed_once_and_the_league_file_keeps_only_its_hash(league: Path) -> None:
    token = make_token(league, "alice")
    text = (league / "league.yaml").read_text()
    assert token not in text and len(token) >= 43
    assert f"token: sha256:{hashlib.sha256(token.encode()).hexdigest()}" in text
    assert "- name: alice     # a student" not in text and "# a student" in text      # its comment kept
    config = load_league(league)
    assert author_of(config, token) == "alice" and author_of(config, token + "x") is None
    again = make_token(league, "alice")              # a new token replaces the old
    config = load_league(league)
    assert author_of(config, again) == "alice" and author_of(config, token) is None
    assert (league / "league.yaml").read_text().count("token:") == 1
    make_token(league, "bob")
    assert author_of(load_league(league), again) == "alice"
    for author, line in (("house-greedy", "is the house player"), ("carol", "no author 'carol'")):
        refused = arena_here("league", "token", str(league), author)
        assert refused.returncode == 1 and line in refused.stderr and "Traceback" not in refused.stderr


def test_a_token_in_the_file_that_is_not_a_hash_is_one_line(league: Path) -> None:
    (league / "league.yaml").write_text(LEAGUE.replace("  - name: bob\n", "  - name: bob\n    token: hunter2\n"))
    done = arena_here("league", "status", str(league))
    assert done.returncode == 1 and "league.yaml:18: authors[2].token: expected a token's hash" in done.stderr


# -- a version handed in -----------------------------------------------------------------

def test_an_archive_is_stored_checked_and_shown_to_its_author_alone(league: Path) -> None:
    alice, bob = make_token(league, "alice"), make_token(league, "bob")
    good = zipped(bot_files(GAMEBOTS / "minimal.py", GAMEBOTS), top="mybot/")      # a zipped folder
    broken = tarred([(member(name), data) for name, data in bot_files(CHECKBOTS / "debug_stdout.py",
                                                                       CHECKBOTS).items()])
    with served(league) as client:
        done = client.post("submit", content=good, headers=bearer(alice))
        assert done.status_code == 202 and done.text.startswith("stored as alice.v1 ("), done.text
        assert client.post("submit", content=broken, headers=bearer(bob)).status_code == 202
        config = load_league(league)
        with Register(league) as register:
            assert [(v.name, v.status) for v in register.versions()] == [("alice.v1", SUBMITTED),
                                                                          ("bob.v1", SUBMITTED)]
            stored = league / "store" / str(register.version("alice.v1").digest)
            assert sorted(p.name for p in stored.iterdir()) == ["bot.py", "common.py"]
            assert (stored / "bot.py").read_bytes() == (GAMEBOTS / "minimal.py").read_bytes()
            check_waiting(config, register, "none", echo=quiet)        # what arena league run does first
            assert {v.name: v.status for v in register.versions()} == {"alice.v1": PLAYING, "bob.v1": REFUSED}
        mine = client.post("mine", headers=bearer(bob))
        assert mine.status_code == 200 and "bob.v1" in mine.text and "refused" in mine.text
        assert "stdout is for protocol lines only" in mine.text and "alice" not in mine.text
        theirs = client.post("mine", headers=bearer(alice)).text
        assert "alice.v1" in theirs and "playing" in theirs and "bob" not in theirs
        assert client.post("mine", headers=bearer("not-a-token")).status_code == 401
        page = client.get("mine")
        assert page.status_code == 200 and 'id="upload-form"' in page.text
        assert 'href="mine"' in client.get("").text
    assert not [p for p in (league / "store").iterdir() if p.name.startswith(".")]     # no unpacked leftovers


# -- hostile archives --------------------------------------------------------------------

def hostile(outside: Path) -> list[tuple[str, Callable[[], bytes], int, str]]:
    """(what, the body, the status, the line's telling part); ``outside`` is
    a folder beside the league the archives aim at."""
    zeros = b"\0" * (3 << 20)
    many = {f"f{i}.py": b"x = 1\n" for i in range(60)}
    # 4.5 MB of a's and b's: about 1 bit a byte, so well under 1 MB and 50 times packed, but over 4 MB unpacked
    two_letters = os.urandom(9 << 19).translate(bytes(97 + (i & 1) for i in range(256)))
    return [
        ("tar ../", lambda: tarred([(member("../x"), b"out")]), 422, "'../x': a path out of the folder"),
        ("zip ../", lambda: zipped({"a/../../x": b"out"}), 422, "'a/../../x': a path out of the folder"),
        ("tar absolute", lambda: tarred([(member(str(outside / "abs")), b"out")]), 422, "an absolute path"),
        ("zip absolute", lambda: zipped({str(outside / "abs"): b"out"}), 422, "an absolute path"),
        ("tar symlink out", lambda: tarred([(member("link", tarfile.SYMTYPE, str(outside)), b""),
                                            (member("link/evil"), b"out")]), 422, "'link': a symbolic link"),
        ("zip symlink", lambda: zipped({"link": str(outside).encode()}, modes={"link": 0o120777}), 422,
         "'link': a symbolic link"),
        ("tar hardlink", lambda: tarred([(member("hard", tarfile.LNKTYPE, "/etc/passwd"), b"")]), 422,
         "'hard': a hard link"),
        ("tar device", lambda: tarred([(member("dev", tarfile.CHRTYPE), b"")]), 422, "'dev': a device"),
        ("zip pipe", lambda: zipped({"fifo": b""}, modes={"fifo": 0o010644}), 422, "'fifo': a device, pipe"),
        ("zip bomb", lambda: zipped({"bot.py": zeros}), 422, "a bomb: unpacks to more than 50 times"),
        ("tar.gz bomb", lambda: tarred([(member("bot.py"), zeros)]), 422, "a bomb: decompresses to more than 50"),
        ("zip too big unpacked", lambda: zipped({"data": two_letters}), 422, "unpacks to more than 4 MB"),
        ("tar.gz too big unpacked", lambda: tarred([(member("data"), two_letters)]), 422,
         "unpacks to more than 4 MB"),
        ("too many files", lambda: zipped(many), 422, "more than 50 files"),
        ("oversize body", lambda: os.urandom(3 << 19), 413, "the archive is over 1 MB"),
        ("not an archive", lambda: b"hello, world\n" * 10, 422, "damaged or not a zip or tar"),
        ("empty", lambda: b"", 422, "archive: empty"),
    ]


def everything(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under ``root``, a file's with its size and modification time
    (the register's shared-memory index, which a reader touches, aside)."""
    return {str(p.relative_to(root)): (p.lstat().st_size, p.lstat().st_mtime_ns) if p.is_file() else (0, 0)
            for p in root.rglob("*") if not p.name.endswith(("-shm", "-wal"))}


def test_a_hostile_archive_is_refused_with_its_line_and_nothing_is_written(league: Path, tmp_path: Path) -> None:
    alice = make_token(league, "alice")
    outside = tmp_path / "outside"
    outside.mkdir()
    with served(league) as client:
        client.post("mine", headers=bearer(alice))           # the register as a reader leaves it
        before = everything(tmp_path)
        cases = hostile(outside)
        for what, body, status, line in cases:
            done = client.post("submit", content=body(), headers=bearer(alice))
            assert done.status_code == status, (what, done.text)
            assert done.text.startswith("Error: ") and line in done.text, (what, done.text)
            assert done.text.count("\n") == 1 and "Traceback" not in done.text, (what, done.text)
        other = alice[:-1] + ("B" if alice.endswith("A") else "A")       # one character off
        wrong = client.post("submit", content=zipped({"bot.py": b"x"}), headers=bearer(other))
        assert wrong.status_code == 401 and wrong.text.startswith("Error: no author has this token")
        assert client.post("submit", content=b"x").status_code == 401
        after = everything(tmp_path)
    # The store's folder made, empty; the register written only to count alice's archives (the hourly limit).
    assert {p: v for p, v in after.items() if p not in ("lg/store", "lg/league.sqlite")} == before
    assert not any((league / "store").iterdir())
    with Register(league) as register:
        assert register.versions() == []
    assert not (tmp_path / "x").exists() and not any(outside.iterdir())


def test_submissions_are_off_unless_the_file_says_and_limited_per_author_and_hour(league: Path) -> None:
    text = LEAGUE.replace("  http: true\n", "  http: false\n")
    (league / "league.yaml").write_text(text)
    alice, bob = make_token(league, "alice"), make_token(league, "bob")
    archive = zipped({"bot.py": b"print('hello')\n"})
    with served(league) as client:
        off = client.post("submit", content=archive, headers=bearer(alice))
        assert off.status_code == 403 and "takes no versions over HTTP" in off.text
        edited = (league / "league.yaml").read_text().replace("http: false", "http: true")
        (league / "league.yaml").write_text(edited.replace("per_hour: 100", "per_hour: 2"))   # read again
        assert [client.post("submit", content=archive, headers=bearer(alice)).status_code
                for _ in range(2)] == [202, 202]
        third = client.post("submit", content=archive, headers=bearer(alice))
        assert third.status_code == 429 and third.text.startswith("Error: alice: 2 archives handed in within")
        assert int(third.headers["Retry-After"]) > 0 and third.text.count("\n") == 1
        assert client.post("submit", content=archive, headers=bearer(bob)).status_code == 202   # per author
    with Register(league) as register:
        assert [v.name for v in register.versions()] == ["alice.v1", "alice.v2", "bob.v1"]


def test_the_hourly_limit_holds_across_a_restart_of_the_server(league: Path) -> None:
    (league / "league.yaml").write_text(LEAGUE.replace("per_hour: 100", "per_hour: 2"))
    alice = make_token(league, "alice")
    with served(league) as client:
        assert [client.post("submit", content=zipped({"bot.py": f"print({n})\n".encode()}),
                            headers=bearer(alice)).status_code for n in range(2)] == [202, 202]
    with served(league) as client:          # a new server process's app: nothing of the first in memory
        again = client.post("submit", content=zipped({"bot.py": b"print(3)\n"}), headers=bearer(alice))
    assert again.status_code == 429 and again.text.startswith("Error: alice: 2 archives handed in within"), again.text
    assert 0 < int(again.headers["Retry-After"]) <= 3600
    with Register(league) as register:
        assert [v.name for v in register.versions()] == ["alice.v1", "alice.v2"]


# -- the author's page, in a real browser --------------------------------------------------

def test_an_author_hands_in_and_sees_their_versions_in_the_browser(league: Path, tmp_path: Path,
                                                                   browser: Any) -> None:  # noqa: F811
    alice, bob = make_token(league, "alice"), make_token(league, "bob")
    archive = tmp_path / "bot.zip"
    archive.write_bytes(zipped(bot_files(GAMEBOTS / "minimal.py", GAMEBOTS)))
    with served(league) as client:
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{client.base_url}mine")
        page.fill("#token", alice)
        page.set_input_files("#archive", str(archive))
        page.click("#upload-form button")
        page.wait_for_function("document.getElementById('answer').textContent.startsWith('stored as alice.v1')",
                               timeout=20_000)
        page.wait_for_function("document.getElementById('mine').textContent.includes('alice.v1')", timeout=20_000)
        assert "submitted" in page.inner_text("#mine")
        page.fill("#token", bob)
        page.click("#token-form button")
        page.wait_for_function("document.getElementById('mine').textContent.includes('No version handed in')",
                               timeout=20_000)
        assert "alice" not in page.inner_text("#mine") and not errors, errors
        assert alice not in page.url
        page.close()
