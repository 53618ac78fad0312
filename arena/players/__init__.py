"""In-process players: the interface, the match loop, and the reference players."""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import Player, play_match

__all__ = ["Player", "play_match"]


def __getattr__(name: str) -> Any:
    # Loaded on first use (PEP 562): ``players.registry``'s names must not
    # bring the engine into a process that only checks a player's name.
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(".base", __name__), name)
    globals()[name] = value
    return value
