"""Versions handed in over HTTP: ``POST /submit``, and an author's own page, ``/mine``.

Off unless the league file says ``submissions: {http: true}``.  A request
names its author by the token alone (``Authorization: Bearer TOKEN``); each
step refuses in one line (``Error: ...``, as the command line's errors), with
its HTTP status:

====  ==================================================================
403   the league takes no versions over HTTP
401   no token, or no author has it
429   the author handed in ``per_hour`` archives in the last hour already
      (counted in the league's register: a restarted server still counts them)
503   the register cannot be written to count it (its reason)
413   the body is over ``max_upload_mb`` (said by its length, or found reading it)
422   the archive (``archive``), or the version (``store``), is refused
202   stored: ``stored as alice.v3 (...)``
====  ==================================================================

Every request with a valid token counts towards the author's hourly
allowance, refused ones too: an author cannot send bomb after bomb.  The
version is stored and registered as ``arena league submit --no-check`` does,
and ``arena league run`` checks it before its next table: the page's process
never runs an author's code.  ``/mine`` (the token in its form, sent as the
same header by the page's script, never in a URL) shows the author their
versions and, for each refused one, every step of its check it failed.

The league file is read again when it changes, so a token made by ``arena
league token`` while the page is served works at once.
"""

from __future__ import annotations

import logging
import math
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

from ...tournament.config.model import ConfigError
from ..archive import unpack
from ..config import LeagueConfig, LeagueError, load_league
from ..register import Register, Version
from ..store import STORE
from ..tokens import author_of
from ..versions import submit

__all__ = ["Submissions", "submission_routes"]

LOG = logging.getLogger(__name__)
HOUR = 3600.0
MiB = 1024 * 1024


def refusal(status: int, line: str, headers: dict[str, str] | None = None) -> Response:
    return PlainTextResponse(f"Error: {line}\n", status_code=status, headers=headers)


class RateLimit:
    """At most ``per_hour`` requests an author in any hour (a sliding window),
    counted in the league's register (``league.sqlite``), so that a restarted
    server, or a second one, still holds an author to it."""

    def __init__(self, league_dir: Path, clock: Callable[[], float] = time.time) -> None:
        self.league_dir = league_dir
        self.clock = clock

    def take(self, author: str, per_hour: int) -> float | None:
        """None, counted, if ``author`` may; else the seconds until they may."""
        with Register(self.league_dir) as register:
            return register.take_upload(author, per_hour, self.clock(), HOUR)


class Submissions:
    """The league file as last read (again when it changes), the rate limit, and the endpoints."""

    def __init__(self, config: LeagueConfig, render: Callable[[str, dict[str, Any]], str]) -> None:
        self.config = config
        self.render = render
        self.stamp = self._stamp()
        self.lock = threading.Lock()
        self.limit = RateLimit(config.dir)
        self.unpacking = threading.Lock()

    def _store(self, config: LeagueConfig, author: str, body: bytes) -> Version:
        # One archive unpacked at a time: what unpacking holds in memory (a
        # tar's decompressed bytes, up to max_unpacked_mb) is one archive's at most.
        with self.unpacking:
            return store_archive(config, author, body)

    def _stamp(self) -> tuple[int, int]:
        try:
            st = self.config.path.stat()
        except OSError:
            return (0, 0)
        return (st.st_mtime_ns, st.st_size)

    def current(self) -> LeagueConfig:
        """The league file, read again if it changed; a file that no longer
        loads leaves the last good one in use (and is logged)."""
        with self.lock:
            stamp = self._stamp()
            if stamp != self.stamp:
                self.stamp = stamp
                try:
                    self.config = load_league(self.config.dir)
                except (ConfigError, LeagueError) as err:
                    LOG.warning("%s; the league file as it was before is used", err)
            return self.config

    def _author(self, request: Request, config: LeagueConfig) -> str | None:
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        return author_of(config, token.strip()) if scheme.lower() == "bearer" and token.strip() else None

    async def submit(self, request: Request) -> Response:
        config = await run_in_threadpool(self.current)
        limits = config.submissions
        if not limits.http:
            return refusal(403, "this league takes no versions over HTTP (league.yaml: submissions: http: false)")
        author = self._author(request, config)
        if author is None:
            return refusal(401, "no author has this token; send the header 'Authorization: Bearer TOKEN' "
                                "('arena league token' makes one)")
        try:
            wait = await run_in_threadpool(self.limit.take, author, limits.per_hour)
        except LeagueError as err:
            return refusal(503, str(err))
        if wait is not None:
            minutes = max(1, math.ceil(wait / 60))
            return refusal(429, f"{author}: {limits.per_hour} archives handed in within the hour already; "
                                f"try again in {minutes} min", {"Retry-After": str(math.ceil(wait))})
        body = await _body(request, limits.max_upload_mb * MiB)
        if body is None:
            return refusal(413, f"the archive is over {limits.max_upload_mb} MB (submissions: max_upload_mb)")
        try:
            version = await run_in_threadpool(self._store, config, author, body)
        except LeagueError as err:
            return refusal(422, str(err))
        LOG.info("%s stored over HTTP (%s)", version.name, version.digest)
        return PlainTextResponse(f"stored as {version.name} ({(version.digest or '')[:12]}); arena league run "
                                 f"checks it before its next table: see mine\n", status_code=202)

    async def page(self, request: Request) -> Response:
        config = await run_in_threadpool(self.current)
        return HTMLResponse(self.render("mine.html", {"name": config.name, "http": config.submissions.http}))

    async def mine(self, request: Request) -> Response:
        config = await run_in_threadpool(self.current)
        author = self._author(request, config)
        if author is None:
            return refusal(401, "no author has this token")
        versions = await run_in_threadpool(_versions_of, config, author)
        return HTMLResponse(self.render("mine_versions.html", {"author": author, "versions": versions}))


async def _body(request: Request, cap: int) -> bytes | None:
    """The request's body, or None as soon as it is known to be over ``cap`` bytes."""
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > cap:
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def store_archive(config: LeagueConfig, author: str, body: bytes) -> Version:
    """Unpack ``body`` in a folder of the store and hand it in as ``author``'s
    next version (``versions.submit``: copied, content-addressed, registered);
    the unpacked folder is removed either way, so nothing is written outside the store."""
    store = config.dir / STORE
    try:
        store.mkdir(exist_ok=True)
        temporary = Path(tempfile.mkdtemp(prefix=".upload-", dir=store))
    except OSError as exc:
        raise LeagueError(f"{store}: cannot unpack there: {exc.strerror or exc}") from None
    try:
        folder = unpack(body, temporary, config.submissions)
        return submit(config, author, folder)
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


def _versions_of(config: LeagueConfig, author: str) -> list[Version]:
    if not os.path.exists(config.dir / "league.sqlite"):
        return []
    with Register(config.dir, readonly=True) as register:
        return [v for v in reversed(register.versions()) if v.author == author]


def submission_routes(config: LeagueConfig, render: Callable[[str, dict[str, Any]], str]) -> list[Route]:
    handler = Submissions(config, render)
    return [Route("/submit", handler.submit, methods=["POST"]), Route("/mine", handler.page, methods=["GET"]),
            Route("/mine", handler.mine, methods=["POST"])]
