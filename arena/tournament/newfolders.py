"""The results folder a run made: removed again if the run stored nothing in it."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from .results.database import ResultStore, StoreError


def new_folders(path: Path) -> list[Path]:
    """The folders ``path.mkdir(parents=True)`` would create, outermost first."""
    missing: list[Path] = []
    while not path.exists() and path != path.parent:
        missing.insert(0, path)
        path = path.parent
    return missing


def remove_unused(created: Sequence[Path], db: Path) -> None:
    """A run that created its results folder and stopped before storing
    anything (an error, a Ctrl-C, a bot that cannot start) leaves no empty
    folder behind: ``created`` (``new_folders``) is removed if the database
    in it holds no match and no failure (a stored failure's traceback is
    worth keeping), the folders above it only if empty."""
    if not created:
        return
    if db.exists():
        try:
            with ResultStore(db, readonly=True) as store:
                if len(store) or store.failures():
                    return
        except StoreError:
            return          # something is there, unreadable: not this run's to throw away
    try:
        shutil.rmtree(created[-1])
        for folder in reversed(created[:-1]):
            folder.rmdir()
    except OSError:
        pass                # the rest is not empty, or not ours to remove
