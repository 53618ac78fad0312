"""``arena league serve``: the page's app under uvicorn, on one address."""

from __future__ import annotations

import uvicorn

from ..config import LeagueConfig
from .app import make_app

__all__ = ["serve"]


def serve(config: LeagueConfig, host: str, port: int) -> None:
    """Serve until Ctrl-C or SIGTERM (uvicorn stops gracefully, then the signal ends arena as any command)."""
    uvicorn.run(make_app(config), host=host, port=port, log_level="warning", proxy_headers=True,
                server_header=False)
