"""Ratings, intervals and matchmaking: what the tournament's tables are computed from.

Nothing here knows about processes, stores or the game: the input is a list
of ranked games (:class:`Game`).
"""

from .confidence import Assessment, Row, assess, rank_groups, sign_test
from .games import Game
from .trueskill_batch import Fit, Prior, Rating, fit

__all__ = ["Assessment", "Fit", "Game", "Prior", "Rating", "Row", "assess", "fit", "rank_groups",
           "sign_test"]
