"""The league's live page: a read-only ASGI app (Starlette).

Routes: ``/`` the page; ``/fragments`` its sections as HTML (JSON of
section -> HTML); ``/events`` server-sent events, an ``update`` each time
what the page shows changed; ``/replay/MATCH`` a match's replay viewer,
made by the report's own code (``arena.report``); ``/bot/VERSION`` a
version's diagnostics page, the report's too (``diagnostics``); ``/board.json``
the data; ``/submit`` and ``/mine``: versions handed in over HTTP, when the
league takes them (``submit``), the only routes that write.

Why server-sent events rather than polling: a page learns of a stored match
within a second without asking every second, one light ``state_key`` check
a second serves every reader, and the browser's ``EventSource`` reconnects by
itself (through a reverse proxy too: the response says
``X-Accel-Buffering: no``, and keep-alive comments every 15 s keep idle
proxies from closing it).  The sections themselves are fetched once per
change, rendered once per change whoever asks (``_Cache``): the bootstrap fit
behind the intervals takes a while, and runs in a worker thread, never in
the event loop.

Every value is rendered by Jinja2 with autoescape, through the report's
``visible`` (bidi controls and the like shown as escapes), so no name or
reason from a version can write markup; the page's script only moves those
rendered fragments into place.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup
from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from ...report.html import replay_page, visible
from ...report.replay import ReplayError
from ...tournament.results.database import DEFAULT_DB_NAME, ResultStore, StoreError
from ..config import LeagueConfig, LeagueError
from ..register import Register
from ..standings import Board, board, state_key
from .diagnostics import BotPages
from .submit import submission_routes

__all__ = ["SECTIONS", "make_app"]

LOG = logging.getLogger(__name__)

SECTIONS = ("leaderboard", "health", "recent", "authors")
CHECK_SECONDS = 1.0       # how often /events looks for a change
FRESH_SECONDS = 0.5       # a request within this long of the last look at the league's state is served without one


def _finalize(value: Any) -> Any:
    # As the report's pages: text shown with its invisible characters escaped; the templates' own Markup as is.
    return visible(value) if isinstance(value, str) and not isinstance(value, Markup) else value


def _asset(name: str) -> str:
    return (resources.files(__package__) / "templates" / name).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FunctionLoader(_asset), autoescape=True, undefined=jinja2.StrictUndefined,
                              trim_blocks=True, lstrip_blocks=True, finalize=_finalize)


@dataclass(frozen=True)
class _Shown:
    """One rendering of the league: its state's key, the sections, the data, and
    the two answers most requests get, encoded once."""

    key: str
    fragments: dict[str, str]
    board: Board | None
    page: bytes
    fragments_json: bytes


class _Cache:
    """The league's stores, opened read-only once they exist, and the page's
    sections rendered once per state of the league."""

    def __init__(self, config: LeagueConfig) -> None:
        self.config = config
        self.lock = threading.Lock()
        self.store: ResultStore | None = None
        self.register: Register | None = None
        # What is shown, as one value (replaced whole by the thread that renders it): key, sections, board.
        self.shown: _Shown | None = None
        self.rendering = False
        self.checked = 0.0           # time.monotonic() of the last look at the league's state
        self.unreadable = ""         # the last store that could not be opened yet, as said in the log

    def _open(self) -> tuple[ResultStore | None, Register | None]:
        # A store the run is creating (an empty file, no tables yet) is not
        # there yet, not an error page: the run makes it as the page starts.
        # One that stays unreadable is said once in the page's log.
        db = self.config.results / DEFAULT_DB_NAME
        try:
            if self.store is None and db.exists():
                self.store = ResultStore(db, readonly=True)
            if self.register is None and (self.config.dir / "league.sqlite").exists():
                self.register = Register(self.config.dir, readonly=True)
        except (StoreError, LeagueError) as exc:
            if str(exc) != self.unreadable:
                LOG.warning("not read yet: %s", exc)
                self.unreadable = str(exc)
        return self.store, self.register

    def _state(self) -> tuple[str, ResultStore | None, Register | None]:
        with self.lock:
            store, register = self._open()
            return ("empty" if register is None else state_key(store, register)), store, register

    def _render(self, key: str, store: ResultStore | None, register: Register | None) -> None:
        try:
            shown_board = None if register is None else board(self.config, store, register)
            view = shown_board or Board(self.config.name)
            fragments = {s: _env().get_template(f"{s}.html").render(board=view) for s in SECTIONS}
            page = _env().get_template("league.html").render(name=self.config.name, key=key,
                                                             sections={s: Markup(fragments[s]) for s in SECTIONS})
            self.shown = _Shown(key, fragments, shown_board, page.encode(),
                                json.dumps({"key": key, "sections": fragments}).encode())
        finally:
            with self.lock:
                self.rendering = False

    def current_key(self) -> str:
        """The key of what is shown (what the event stream announces once it is ready to fetch)."""
        return self.sections().key

    def fresh(self) -> _Shown | None:
        """What is shown, if the league's state was looked at less than FRESH_SECONDS ago
        (no database read: for the event loop itself); else None."""
        shown = self.shown
        return shown if shown is not None and time.monotonic() - self.checked < FRESH_SECONDS else None

    def sections(self) -> _Shown:
        """What is shown.  The first request renders it; after that, a change of
        the league is rendered by one thread in the background while every
        reader gets the last rendering at once: with matches stored every few
        tenths of a second, a fit per change in the readers' way kept 50 of them
        waiting past 60 s (benchmarks/league.py --only b)."""
        key, store, register = self._state()
        self.checked = time.monotonic()
        shown = self.shown
        if shown is None:
            with self.lock:
                self.rendering = True
            self._render(key, store, register)
            assert self.shown is not None
            return self.shown
        if key != shown.key:
            with self.lock:
                start, self.rendering = not self.rendering, True
            if start:
                threading.Thread(target=self._render, args=(key, store, register), daemon=True).start()
        return shown

    def replay(self, match_id: str) -> str | None:
        # lazy: a replay loads the engine to replay the record; most readers never open one
        from ...report.data import stored_replay

        with self.lock:
            store, _ = self._open()
            if store is None:
                return None
            try:
                return replay_page(stored_replay(store, match_id, back="../"))
            except (StoreError, ReplayError, KeyError):
                return None


def make_app(config: LeagueConfig) -> Starlette:
    cache = _Cache(config)

    async def shown() -> _Shown:
        # Most requests: what was rendered, straight from memory, no thread, no database read.
        now = cache.fresh()
        return now if now is not None else await run_in_threadpool(cache.sections)

    async def page(request: Request) -> Response:
        return HTMLResponse((await shown()).page)

    async def fragments(request: Request) -> Response:
        return Response((await shown()).fragments_json, media_type="application/json")

    async def board_json(request: Request) -> Response:
        now = await shown()
        return JSONResponse({"key": now.key, "board": None if now.board is None else asdict(now.board)})

    async def events(request: Request) -> Response:
        async def changes() -> AsyncIterator[dict[str, str]]:
            last = request.query_params.get("key")
            while True:
                key = await run_in_threadpool(cache.current_key)
                if key != last:
                    last = key
                    yield {"event": "update", "data": key}
                await asyncio.sleep(CHECK_SECONDS)
        return EventSourceResponse(changes(), ping=15)

    async def replay(request: Request) -> Response:
        html = await run_in_threadpool(cache.replay, request.path_params["match_id"])
        if html is None:
            return HTMLResponse("<!doctype html><title>no such match</title><p>No such match.</p>", status_code=404)
        return HTMLResponse(html)

    pages = BotPages()

    async def diagnostics(request: Request) -> Response:
        version = request.path_params["version"]

        def made() -> str | None:
            key = cache.current_key()
            return pages.page(cache.store, key, version)
        html = await run_in_threadpool(made)
        if html is None:
            return HTMLResponse("<!doctype html><title>no such version</title><p>No match of that version.</p>",
                                status_code=404)
        return HTMLResponse(html)

    def render(template: str, values: dict[str, Any]) -> str:
        return _env().get_template(template).render(**values)

    return Starlette(routes=[Route("/", page), Route("/fragments", fragments), Route("/board.json", board_json),
                             Route("/events", events), Route("/replay/{match_id}", replay),
                             Route("/bot/{version}", diagnostics), *submission_routes(config, render)])
