"""The league's store of versions: each handed-in folder copied, named by its content.

``DIR/store/DIGEST/`` holds one version's files, where DIGEST is the SHA-256
of every file's path, executable bit and content.  The copy is what is
checked and played, so an author editing their own folder afterwards
changes nothing that was played, and handing in the same files twice stores
them once.  A copy is made in a temporary folder of the store and renamed
into place, so a store folder is always whole.

A folder is refused, in one line naming the file, when it holds what a copy
could not faithfully keep or a hostile one could abuse: a symbolic link (it
could point anywhere on the arena's machine), a device or pipe, or more than
``MAX_FILES`` files or ``MAX_BYTES`` bytes.  ``.git`` and ``__pycache__``
folders are left out: history and caches are not the program.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from pathlib import Path

from .config import LeagueError

__all__ = ["MAX_BYTES", "MAX_FILES", "STORE", "digest_of", "files_of", "store_version"]

STORE = "store"
MAX_FILES = 10_000
MAX_BYTES = 256 * 1024 * 1024
SKIPPED = (".git", "__pycache__")


def files_of(source: Path) -> list[tuple[str, Path]]:
    """Every file to copy, as (path relative to the folder, with '/', its path); LeagueError on what is refused."""
    if source.is_symlink():
        raise LeagueError(f"{source}: a symbolic link; hand in the folder (or file) itself")
    if source.is_file():
        return [(source.name, source)]
    if not source.is_dir():
        raise LeagueError(f"{source}: no such file or folder")
    found: list[tuple[str, Path]] = []
    size = 0
    for root, dirs, names in os.walk(source):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED)
        for name in sorted(names + [d for d in dirs if os.path.islink(os.path.join(root, d))]):
            path = Path(root, name)
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                raise LeagueError(f"{path}: a symbolic link; a version holds files and folders only "
                                  f"(copy what it points to into the folder)")
            if not stat.S_ISREG(mode):
                raise LeagueError(f"{path}: not a regular file (a device, pipe or socket); remove it")
            size += path.lstat().st_size
            found.append((path.relative_to(source).as_posix(), path))
            if len(found) > MAX_FILES or size > MAX_BYTES:
                raise LeagueError(f"{source}: more than {MAX_FILES} files or {MAX_BYTES >> 20} MB; "
                                  f"hand in the program, not its data or build output")
    if not found:
        raise LeagueError(f"{source}: an empty folder; hand in the folder holding the program")
    return found


def digest_of(files: list[tuple[str, Path]]) -> str:
    """SHA-256 of each file's relative path, executable bit and content, in path order."""
    whole = hashlib.sha256()
    for rel, path in sorted(files):
        content = hashlib.sha256(path.read_bytes()).hexdigest()
        executable = "x" if os.access(path, os.X_OK) else "-"
        whole.update(f"{rel}\0{executable}\0{content}\n".encode())
    return whole.hexdigest()


def store_version(league_dir: Path, source: Path) -> tuple[str, Path]:
    """Copy ``source`` (a folder, or one file) into the store: its digest and its folder there."""
    try:
        files = files_of(source)
        digest = digest_of(files)
    except OSError as exc:
        raise LeagueError(f"{source}: cannot read: {exc.strerror or exc}") from None
    store = league_dir / STORE
    target = store / digest
    if target.is_dir():
        return digest, target            # the same files, handed in before
    try:
        store.mkdir(exist_ok=True)
        temporary = Path(tempfile.mkdtemp(prefix=".incoming-", dir=store))
        try:
            for rel, path in files:
                copy = temporary / rel
                copy.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, copy)
                # Read-only: the copy is what was handed in, and stays so.
                copy.chmod(0o555 if os.access(path, os.X_OK) else 0o444)
            os.rename(temporary, target)
        except BaseException:
            shutil.rmtree(temporary, ignore_errors=True)
            raise
    except OSError as exc:
        if target.is_dir():              # another submit stored the same files meanwhile
            return digest, target
        raise LeagueError(f"{store}: cannot store the version: {exc.strerror or exc}") from None
    return digest, target
