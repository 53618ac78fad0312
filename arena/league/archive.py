"""Unpacking a version handed in as an archive (zip, or tar: plain, gzip, bzip2 or xz).

Anyone with a token may send one, so every entry is looked at before
anything is written, and the archive is refused, in one line naming the
entry, for:

* a path out of the folder: absolute (``/etc/x``), or with a ``..`` part;
* a link (symbolic or hard), a device, a pipe: a version holds files and folders;
* more than ``max_files`` files, or more than ``max_unpacked_mb`` unpacked;
* a bomb: unpacking to more than ``max_ratio`` times the archive's size.

Sizes are judged before they are written or even decompressed.  A tar's
compression is undone first, into memory and at most to the limit (one
byte over it is a refusal), so a compressed stream of zeros costs no more
than the limit; tar headers then say each file's size, and are summed as
they are read.  A zip's central directory says each file's size, and
``zipfile`` reads no more of an entry than that (a lying entry fails its CRC).

Why the standard library and its ``data`` filter rather than a package:
``tarfile``'s ``filter="data"`` (Python 3.12, and 3.11.4 on) is the
maintained defence against what a tar can carry (links out, devices,
setuid bits, writable modes), and stays on as a second line behind the
checks here, which refuse what it would quietly change (it strips a leading
``/`` where the league refuses the archive, so the author learns why).
``zipfile``'s own extraction also quietly rewrites bad paths, so a zip's
entries are checked here and written by this module, each file created new
(``O_EXCL | O_NOFOLLOW``) inside the folder.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import stat
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from .config import LeagueError, Submissions

__all__ = ["ArchiveError", "unpack"]

MiB = 1024 * 1024
CHUNK = 1 << 16
_COMPRESSED: dict[bytes, Callable[[io.BytesIO], io.BufferedIOBase]] = {
    b"\x1f\x8b": lambda f: gzip.GzipFile(fileobj=f),
    b"BZh": lambda f: bz2.BZ2File(f),
    b"\xfd7zXZ\x00": lambda f: lzma.LZMAFile(f),
}
_TAR_OVERHEAD = 1536    # bytes of a tar's headers and padding per file, at most, for the common formats


class ArchiveError(LeagueError):
    """An archive refused: one line naming the entry and what is wrong with it."""


def unpack(data: bytes, into: Path, limits: Submissions) -> Path:
    """Unpack ``data`` into the empty folder ``into``; the version's folder
    (``into``, or the one folder everything is in, as a zipped folder is)."""
    if not data:
        raise ArchiveError("archive: empty; send a zip or tar of the version's folder")
    try:
        if zipfile.is_zipfile(io.BytesIO(data)):
            _unzip(data, into, limits)
        else:
            _untar(_inflated(data, limits), len(data), into, limits)
    except (OSError, EOFError, lzma.LZMAError, tarfile.TarError, zipfile.BadZipFile) as exc:
        if isinstance(exc, tarfile.FilterError):      # the data filter: a second line, not expected to act
            raise ArchiveError(f"archive: {exc}") from None
        raise ArchiveError(f"archive: damaged or not a zip or tar ({_one_line(exc)})") from None
    inside = list(into.iterdir())
    return inside[0] if len(inside) == 1 and inside[0].is_dir() else into


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _shown(name: str) -> str:
    return repr(name)


def _checked(name: str) -> PurePosixPath | None:
    """The entry's path inside the folder (None for the folder itself); ArchiveError for one out of it."""
    if any(ord(c) < 32 or c == "\x7f" for c in name):
        raise ArchiveError(f"archive: {_shown(name)}: a name with a control character; rename it")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise ArchiveError(f"archive: {_shown(name)}: an absolute path; archive the folder's contents "
                           f"with paths relative to it")
    path = PurePosixPath(name)
    if ".." in path.parts:
        raise ArchiveError(f"archive: {_shown(name)}: a path out of the folder ('..'); entries must stay inside it")
    parts = [p for p in path.parts if p != "."]
    return PurePosixPath(*parts) if parts else None


def _over(what: str, limits: Submissions) -> ArchiveError:
    return ArchiveError(f"archive: {what}; at most {limits.max_files} files and {limits.max_unpacked_mb} MB "
                        f"unpacked, {limits.max_ratio} times the archive's size (submissions: in league.yaml)")


def _count(files: int, total: int, packed: int, limits: Submissions) -> None:
    """Refuse as soon as the entries seen so far pass a limit."""
    if files > limits.max_files:
        raise _over(f"more than {limits.max_files} files", limits)
    if total > limits.max_unpacked_mb * MiB:
        raise _over(f"unpacks to more than {limits.max_unpacked_mb} MB", limits)
    if total > limits.max_ratio * packed:
        raise _over(f"a bomb: unpacks to more than {limits.max_ratio} times its {packed} bytes", limits)


# -- tar -------------------------------------------------------------------------------

def _inflated(data: bytes, limits: Submissions) -> bytes:
    """A compressed tar's bytes, decompressed at most to what the limits allow (one byte more is refused)."""
    opener = next((open_ for magic, open_ in _COMPRESSED.items() if data.startswith(magic)), None)
    if opener is None:
        return data
    overhead = _TAR_OVERHEAD * (limits.max_files + 2)
    size_cap = limits.max_unpacked_mb * MiB + overhead
    ratio_cap = limits.max_ratio * len(data) + overhead
    with opener(io.BytesIO(data)) as stream:
        raw = stream.read(min(size_cap, ratio_cap) + 1)
    if len(raw) > size_cap:
        raise _over(f"unpacks to more than {limits.max_unpacked_mb} MB", limits)
    if len(raw) > ratio_cap:
        raise _over(f"a bomb: decompresses to more than {limits.max_ratio} times its {len(data)} bytes", limits)
    return raw


def _untar(raw: bytes, packed: int, into: Path, limits: Submissions) -> None:
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:") as tar:
        members: list[tarfile.TarInfo] = []
        files = total = 0
        for member in tar:            # headers are read one by one: a refusal stops before the rest
            _tar_kind(member)
            if _checked(member.name) is None:
                continue
            if member.isfile():
                files += 1
                total += member.size
                _count(files, total, packed, limits)
            members.append(member)
        tar.extractall(into, members=members, filter="data")


def _tar_kind(member: tarfile.TarInfo) -> None:
    name = _shown(member.name)
    if member.issym():
        raise ArchiveError(f"archive: {name}: a symbolic link (to {member.linkname!r}); a version holds files "
                           f"and folders only")
    if member.islnk():
        raise ArchiveError(f"archive: {name}: a hard link (to {member.linkname!r}); a version holds files "
                           f"and folders only")
    if not (member.isfile() or member.isdir()):
        raise ArchiveError(f"archive: {name}: a device, pipe or other special file; remove it")


# -- zip -------------------------------------------------------------------------------

def _unzip(data: bytes, into: Path, limits: Submissions) -> None:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        wanted: list[tuple[zipfile.ZipInfo, PurePosixPath]] = []
        seen: set[PurePosixPath] = set()
        total = 0
        for info in archive.infolist():
            path = _zip_entry(info)
            if path is None or info.is_dir():
                continue
            if path in seen:
                raise ArchiveError(f"archive: {_shown(info.filename)}: twice in the archive")
            seen.add(path)
            total += info.file_size
            _count(len(seen), total, len(data), limits)
            wanted.append((info, path))
        written = 0
        for info, path in wanted:
            written += _write(archive, info, into / path, limits.max_unpacked_mb * MiB - written)


def _zip_entry(info: zipfile.ZipInfo) -> PurePosixPath | None:
    name = info.filename.replace("\\", "/")     # some Windows tools write '\'
    path = _checked(name)
    # The file's type, where the tool that made the zip wrote one (Unix tools do; Windows tools and
    # Python's writestr leave it 0: a file).
    kind = stat.S_IFMT(info.external_attr >> 16)
    if kind == stat.S_IFLNK:
        raise ArchiveError(f"archive: {_shown(info.filename)}: a symbolic link; a version holds files and "
                           f"folders only")
    if kind and kind not in (stat.S_IFREG, stat.S_IFDIR):
        raise ArchiveError(f"archive: {_shown(info.filename)}: a device, pipe or other special file; remove it")
    if info.flag_bits & 0x1:
        raise ArchiveError(f"archive: {_shown(info.filename)}: encrypted; send it unencrypted")
    return path


def _write(archive: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path, room: int) -> int:
    """One entry written as a new file (never through a link); the bytes written."""
    target.parent.mkdir(parents=True, exist_ok=True)
    executable = (info.external_attr >> 16) & 0o111
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o755 if executable else 0o644)
    written = 0
    with os.fdopen(fd, "wb") as out, archive.open(info) as source:
        while chunk := source.read(CHUNK):
            written += len(chunk)
            if written > room:      # more than its entry said: zipfile stops first; this bounds it regardless
                raise ArchiveError(f"archive: {_shown(info.filename)}: more bytes than its entry says")
            out.write(chunk)
    return written
