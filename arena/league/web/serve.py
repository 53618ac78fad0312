"""``arena league serve``: the page's app under uvicorn, on one address."""

from __future__ import annotations

import uvicorn

from ..config import LeagueConfig
from .app import make_app

__all__ = ["serve"]


def serve(config: LeagueConfig, host: str, port: int) -> None:
    """Serve until Ctrl-C or SIGTERM: uvicorn stops gracefully, then raises
    the signal again, which ends arena as any command (``KeyboardInterrupt``).
    ``Server.run``, not ``uvicorn.run``: that one swallows the
    KeyboardInterrupt, so a SIGTERM ended the command silently with status 0."""
    settings = uvicorn.Config(make_app(config), host=host, port=port, log_level="warning", proxy_headers=True,
                              server_header=False)
    uvicorn.Server(settings).run()
