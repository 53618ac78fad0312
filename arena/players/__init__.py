"""In-process players: the interface, the match loop, and the reference players."""

from .base import Player, play_match

__all__ = ["Player", "play_match"]
