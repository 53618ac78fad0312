"""Ratings, intervals and matchmaking: what the tournament's tables are computed from.

Nothing here knows about processes, stores or the game: the input is a list
of ranked games (:class:`Game`).

The names below are imported on first use (PEP 562), so that importing
``arena.ranking.games`` or ``arena.ranking.matchmaking`` does not load numpy:
a running tournament needs its games long before it needs a fit.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .confidence import Assessment, Row, assess, rank_ranges, sign_test
    from .games import Game
    from .trueskill_batch import Fit, Prior, Rating, fit

_MODULE_OF = {
    "Assessment": "confidence", "Row": "confidence", "assess": "confidence", "rank_ranges": "confidence",
    "sign_test": "confidence", "Game": "games", "Fit": "trueskill_batch", "Prior": "trueskill_batch",
    "Rating": "trueskill_batch", "fit": "trueskill_batch",
}

__all__ = ["Assessment", "Fit", "Game", "Prior", "Rating", "Row", "assess", "fit", "rank_ranges",
           "sign_test"]


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
