"""What writing a report's files can raise, and how one file is written.

Below ``build`` (the report, the single replay) and ``writers`` (the replays,
by worker processes): both write files and raise these errors, and neither
imports the other for them.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["ReportError", "ReportUnwritable", "FileUnwritable", "write_file"]


class ReportError(Exception):
    """A report or replay that cannot be made; one line naming what and where."""


class ReportUnwritable(ReportError):
    """Where the report goes cannot be written (``directory``, ``reason``):
    nothing of it can be, so it stops at the first file."""

    def __init__(self, directory: Path, reason: str) -> None:
        super().__init__(f"{directory}: cannot write the report there ({reason})")
        self.directory = directory
        self.reason = reason


class FileUnwritable(ReportError):
    """A file of a report or a replay that cannot be written (``path``, ``reason``)."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: cannot write ({reason})")
        self.path = path
        self.reason = reason


def write_file(path: Path, text: str) -> None:
    """``text`` into ``path``, whole or not at all (a reader never sees half a page)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        raise FileUnwritable(path, exc.strerror or str(exc)) from None
