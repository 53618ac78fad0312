"""Where arena keeps a user's own files between runs (XDG base directories)."""

from __future__ import annotations

import os
from pathlib import Path


def user_dir(variable: str, default: str) -> Path | None:
    """arena's directory in ``$variable`` (an absolute path), else in
    ``~/default`` (``.local/state``, ``.cache``); None without a home directory."""
    base = os.environ.get(variable, "")
    if os.path.isabs(base):
        return Path(base) / "arena"
    home = os.path.expanduser("~")         # unexpanded without HOME and a passwd entry
    if not os.path.isabs(home):
        return None
    return Path(home) / default / "arena"
