"""In-process players: the interface, the match loop, and the reference players."""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False  # typing's flag without loading typing, which bots never need (tests/test_botstart.py)
if TYPE_CHECKING:
    from typing import Any

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
