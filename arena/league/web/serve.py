"""``arena league serve``: the page's app under uvicorn, on one address."""

from __future__ import annotations

import uvicorn

from ..config import LeagueConfig
from .app import make_app

__all__ = ["serve", "settings"]


def settings(config: LeagueConfig, host: str, port: int) -> uvicorn.Config:
    """uvicorn's settings.  Its HTTP parser is httptools, which the ``league``
    extra installs (``http="auto"`` takes it, and falls back to h11 where an
    older install lacks it): its C parser halves serve's CPU a request
    against h11's pure Python (0.30-0.33 to 0.12-0.17 CPU-ms,
    benchmarks/league.py --only b), what 50 readers queue behind.  No access
    log: a line a request would cost more than the answer, and a reverse
    proxy keeps its own."""
    return uvicorn.Config(make_app(config), host=host, port=port, log_level="warning", proxy_headers=True,
                          server_header=False, http="auto", access_log=False)


def serve(config: LeagueConfig, host: str, port: int) -> None:
    """Serve until Ctrl-C or SIGTERM: uvicorn stops gracefully, then raises
    the signal again, which ends arena as any command (``KeyboardInterrupt``).
    ``Server.run``, not ``uvicorn.run``: that one swallows the
    KeyboardInterrupt, so a SIGTERM ended the command silently with status 0."""
    uvicorn.Server(settings(config, host, port)).run()
