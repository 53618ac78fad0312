"""Each version's diagnostics page on the league's page: the report's own (``arena report --bot``).

Made by ``arena.report.build.bot_page`` from the league's results, its
matches linking to the page's replay viewer (``/replay/MATCH``), so a
student reads on the live page what the report would tell them: their
faults, with the decision and the reply refused, their slowest decisions,
their opponents.  A page takes a fit and a read of the version's records:
made once per state of the league (``state_key``) and version, the last
few kept, in a worker thread, never in the event loop.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from urllib.parse import quote

from ...report.build import ReportError, bot_page
from ...tournament.results.database import ResultStore, StoreError

__all__ = ["BotPages"]

KEPT = 16          # pages kept, at most (a few MB each for a version of many matches)


class BotPages:
    """The diagnostics pages, made on demand and kept per (state of the league, version)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pages: OrderedDict[tuple[str, str], str | None] = OrderedDict()

    def page(self, store: ResultStore | None, key: str, version: str) -> str | None:
        """The page of ``version`` (None: it played no match, or the league has none)."""
        if store is None:
            return None
        with self.lock:
            if (key, version) in self.pages:
                self.pages.move_to_end((key, version))
                return self.pages[(key, version)]
        try:
            # From /bot/NAME, the replays are at ../replay/MATCH.
            html = bot_page(store, version, lambda match_id: f"../replay/{quote(match_id, safe='')}")
        except (ReportError, StoreError):
            html = None
        with self.lock:
            self.pages[(key, version)] = html
            while len(self.pages) > KEPT:
                self.pages.popitem(last=False)
        return html
