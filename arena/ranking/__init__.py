"""Ratings, intervals and matchmaking: what the tournament's tables are computed from.

Nothing here knows about processes, stores or the game: the input is a list
of ranked games (:class:`Game`).
"""

from .games import Game
from .trueskill_batch import Fit, Prior, Rating, fit

__all__ = ["Game", "Fit", "Prior", "Rating", "fit"]
