"""What a Ray run copies to its nodes (``files: ship``): the bots' folders and
what their grants name, nothing else.

Ray copies one directory (the runtime environment's ``working_dir``), so the
shipment's ``root`` is the deepest directory holding every bot's folder; but
only the folders themselves are copied: everything else under the root (a
home directory's ``.ssh``, other projects, the tournament's results) is
left out by ``excludes``, Ray's own gitignore-style patterns, one anchored
path each.  Inside a bot's folder, dot-folders (``.git``, which holds the
tournament file's history and so its seed; ``.venv``; ``.ssh``) and
``venv``, ``__pycache__`` are left out too, unless a bot's grant
(``sandbox.read``, ``sandbox.write``) names them or something in them; and
so is a symbolic link to anything outside the shipped folders, which Ray
would copy as what it points to.  Ray itself also leaves out what a
``.gitignore`` or ``.rayignore`` lists, which the count here follows.

``plan`` walks the folders once, to write the excludes and to count what is
shipped; a shipment over ``MAX_SHIPMENT_MB`` is refused in one line, before
anything is uploaded.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .local import WorkerError
from .rayjoin import Shipment

__all__ = ["plan", "Plan", "MAX_SHIPMENT_MB", "SKIPPED_NAMES"]

MAX_SHIPMENT_MB = 100          # of files, before Ray compresses them (Ray's own limit is on the zip: 512 MiB)
SKIPPED_NAMES = ("venv", "__pycache__")   # besides every dot-folder, in a shipped folder
IGNORE_FILES = (".gitignore", ".rayignore")


@dataclass
class Plan:
    """A shipment and what it holds: ``folders`` (relative to its root, "."
    for the root itself), its ``files`` and their ``size`` in bytes, and the
    size under each folder (``by_folder``)."""

    shipment: Shipment
    folders: tuple[str, ...]
    files: int = 0
    size: int = 0
    by_folder: dict[str, int] = field(default_factory=dict)

    def line(self) -> str:
        """What is shipped, for the user: one line."""
        return (f"shipping to the Ray nodes from {self.shipment.root}: {', '.join(self.folders)} "
                f"({self.files} file{'' if self.files == 1 else 's'}, {_size(self.size)})")

    def refuse_if_large(self, most_mb: float = MAX_SHIPMENT_MB) -> None:
        if self.size <= most_mb * 2**20:
            return
        largest = max(self.by_folder, key=lambda k: self.by_folder[k])
        raise WorkerError(f"the files to ship to the Ray nodes from {self.shipment.root} take {_size(self.size)}, "
                          f"over the {most_mb:g} MiB arena ships ({largest} holds {_size(self.by_folder[largest])}): "
                          f"list large files in a .rayignore in their folder, or use 'files: shared'")


def _size(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB"):
        if n < 1024 or unit == "MiB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return ""  # pragma: no cover


def plan(folders: Iterable[str], grants: Iterable[str] = (), leave_out: Iterable[str] = ()) -> Plan:
    """The shipment of ``folders`` (absolute), with ``grants`` (paths a bot
    may read or write; those outside the root are the nodes' own) and
    without ``leave_out`` (the results).  WorkerError if the folders share
    no directory but ``/``."""
    wanted = sorted({os.path.normpath(os.path.abspath(f)) for f in folders})
    root = os.path.commonpath(wanted) if wanted else os.getcwd()
    if root == os.path.sep:
        raise WorkerError("the bots' folders share no directory but /, which cannot be shipped to a Ray cluster; "
                          "move them under one directory, or use 'files: shared' with the same paths on every node")
    kept = {_rel(root, f) for f in wanted} | {r for g in grants if (r := _rel(root, g)) is not None}
    out = {r for o in leave_out if (r := _rel(root, o)) is not None}
    walk = _Walk(root, {k for k in kept if k is not None}, out)
    walk.dir("", [])
    names = tuple(sorted(k or "." for k in {_rel(root, f) for f in wanted} if k is not None))
    shipment = Shipment(root, tuple(walk.excludes))
    return Plan(shipment, names, walk.files, walk.size, walk.by_folder)


def _rel(root: str, path: str) -> str | None:
    """``path`` relative to ``root`` ('' for the root), None if outside it."""
    path = os.path.normpath(os.path.abspath(path))
    if path == root:
        return ""
    prefix = root.rstrip("/") + "/"
    return path[len(prefix):] if path.startswith(prefix) else None


def _under(path: str, top: str) -> bool:
    """``path`` is ``top`` or inside it (relative paths; '' is the root)."""
    return top == "" or path == top or path.startswith(top + "/")


class _Walk:
    """One walk of the root: the excludes, and the files shipped."""

    def __init__(self, root: str, kept: set[str], out: set[str]) -> None:
        self.root, self.kept, self.out = root, kept, out
        self.real_kept = [os.path.realpath(os.path.join(root, k)) for k in kept]
        self.excludes: list[str] = []
        self.files = self.size = 0
        self.by_folder: dict[str, int] = {}

    def dir(self, rel: str, ignored: list[Callable[[str], bool]]) -> None:
        path = os.path.join(self.root, rel)
        ignored = ignored + _ignore_files(path)
        try:
            entries = sorted(os.scandir(path), key=lambda e: e.name)
        except OSError:
            return          # unreadable: Ray cannot read it either, and says so
        for entry in entries:
            sub = f"{rel}/{entry.name}" if rel else entry.name
            if any(match(os.path.join(path, entry.name)) for match in ignored):
                continue    # Ray leaves it out itself
            what = self._classify(sub, entry)
            if what == "out":
                self.excludes.append("/" + _escape(sub))
            elif _is_dir(entry):
                self.dir(sub, ignored)
            elif what == "in":
                self._count(sub, entry)

    def _classify(self, sub: str, entry: os.DirEntry[str]) -> str:
        """"in" (shipped), "way" (a directory on the way to something
        shipped: only that is), or "out"."""
        if any(_under(sub, o) for o in self.out):
            return "out"
        inside = any(_under(sub, k) for k in self.kept)
        below = any(k != sub and _under(k, sub) for k in self.kept)   # something kept lies inside it
        if inside and _is_dir(entry) and _skipped(entry.name) and not below and sub not in self.kept:
            return "out"
        if inside and entry.is_symlink() and not self._target_kept(entry.path):
            return "out"
        if inside:
            return "in"
        return "way" if below and _is_dir(entry) else "out"

    def _target_kept(self, path: str) -> bool:
        real = os.path.realpath(path)
        return any(real == k or real.startswith(k.rstrip("/") + "/") for k in self.real_kept)

    def _count(self, sub: str, entry: os.DirEntry[str]) -> None:
        try:
            size = entry.stat().st_size
        except OSError:
            return
        self.files += 1
        self.size += size
        top = max((k for k in self.kept if _under(sub, k)), key=len, default="")
        self.by_folder[top or "."] = self.by_folder.get(top or ".", 0) + size


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()           # follows a link, as Ray does
    except OSError:
        return False


def _skipped(name: str) -> bool:
    return name.startswith(".") or name in SKIPPED_NAMES


def _ignore_files(path: str) -> list[Callable[[str], bool]]:
    """A matcher for each ignore file Ray reads in ``path``, as Ray reads it."""
    found = []
    for name in IGNORE_FILES:
        try:
            with open(os.path.join(path, name), encoding="utf-8", errors="replace") as f:
                lines = f.readlines()
        except OSError:
            continue
        found.append(_matcher(path, lines))
    return found


def _matcher(base: str, lines: Sequence[str]) -> Callable[[str], bool]:
    spec = _path_spec().from_lines("gitwildmatch", lines)

    def match(path: str) -> bool:
        return bool(spec.match_file(os.path.relpath(path, base)))
    return match


def _escape(rel: str) -> str:
    """``rel`` as a gitignore pattern matching that path alone: each
    wildcard character behind a backslash, and a last space, which would be
    stripped, in a class ("!" and "#" are special only first, and a pattern
    here starts with "/")."""
    escaped = "".join("\\" + c if c in "*?[]\\" else c for c in rel)
    return escaped[:-1] + "[ ]" if escaped.endswith(" ") else escaped


def _path_spec() -> Any:
    """The PathSpec class Ray reads ignore files with: its own copy (older
    than pathspec's release, and not quite the same), else pathspec's.
    Imported when a run ships files to Ray (Ray's, private: hence the fallback)."""
    for name in ("ray._private.thirdparty.pathspec", "pathspec"):
        try:
            return importlib.import_module(name).PathSpec
        except ImportError:
            continue
    raise WorkerError("the ray executor needs Ray on this machine: pip install 'arena[ray]'")
