"""Reading a tournament file into a ``TournamentConfig``: the one entry point.

Apart from ``model`` (the dataclasses) because it stands above what reads the
file (``bounded``, ``reader``) and the checks of the schedule it makes
(``pairing.schedule``, ``pairing.rounds``), which all import ``model``.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..pairing.rounds import check_rounds
from ..pairing.schedule import check_schedule_size
from .bounded import read_text
from .model import MAX_MATCHES, TournamentConfig
from .reader import Reader, compose

__all__ = ["load_config"]


def load_config(path: str | os.PathLike[str], *, max_matches: int | None = MAX_MATCHES) -> TournamentConfig:
    """Read and validate a tournament file; ``ConfigError`` (one line) on any mistake.

    With ``max_matches`` (the default), a schedule larger than that is refused
    too (``schedule.check_schedule_size``); pass None to skip that check.
    """
    shown = os.fspath(path)
    p = Path(shown)
    root = compose(shown, read_text(shown, "a YAML file"))
    reader = Reader(shown, Path(os.path.normpath(os.path.abspath(p.parent))))
    config = reader.tournament(root, default_name=p.stem)
    if max_matches is not None and config.settle is None:
        check_schedule_size(config, limit=max_matches)
    elif config.settle is not None:
        check_rounds(config)
    return config
