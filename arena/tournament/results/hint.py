"""What a user most likely meant by a RESULTS argument that holds no results
database: the tournament file itself (``arena leaderboard class.yaml``), or
the folder above a run's results (``arena-results``)."""

from __future__ import annotations

import os
from pathlib import Path

from ..config.load import load_config
from ..config.model import ConfigError
from .database import DEFAULT_DB_NAME, LEAGUE_FILE

__all__ = ["results_hint", "with_results_hint"]

LISTED = 3      # results directories named, at most


def _shown(path: Path) -> str:
    """``path`` as the user would type it: relative to here when under here."""
    relative = os.path.relpath(path)
    return path.as_posix() if relative.startswith("..") else relative


def results_hint(results: str) -> str | None:
    """One clause saying where the results are, or None if there is nothing to say."""
    p = Path(results)
    if p.is_file() and p.suffix.lower() in (".yaml", ".yml"):
        try:
            out = load_config(p, max_matches=None).output
        except (ConfigError, OSError):
            return f"{results} is a YAML file, not results: give the results directory `arena run` named"
        return f"{results} is a tournament file, not results: its results go to {_shown(out)}"
    if p.is_dir() and (p / LEAGUE_FILE).is_file():
        return f"{results} is a league's folder with no match stored yet (arena league run {results} plays)"
    if p.is_dir():
        try:
            held = sorted(d for d in p.iterdir() if (d / DEFAULT_DB_NAME).is_file())
        except OSError:
            return None
        if held:
            more = f" and {len(held) - LISTED} more" if len(held) > LISTED else ""
            return f"results are in {', '.join(_shown(d) for d in held[:LISTED])}{more}"
    return None


def with_results_hint(message: str, results: str) -> str:
    """``message`` (why RESULTS cannot be read), with where the results are if that can be said."""
    hint = results_hint(results)
    return f"{message}; {hint}" if hint else message
