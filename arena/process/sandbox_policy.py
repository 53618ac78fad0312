"""What a sandboxed bot sees: its ``SandboxPolicy`` and the bwrap mount
options that carry it out (see ``sandbox`` for the sandbox itself).

A bot sees the host file system read-only, with private, size-bounded
``/tmp``, ``/var/tmp``, ``/run`` and ``/dev/shm``; its own paths (working
directory, program, script) read-only; ``read`` paths read-only, ``write``
paths writable, a scratch directory (a private tmpfs) if it has one; and the
``hide`` paths (results, logs, the tournament file, other bots' directories
and programs) replaced by empty ones.

Mounts are applied shallowest path first, so a path can be hidden and a
deeper one inside it shown again (a ``write`` path inside the hidden results
directory), and a path that a bot needs is never hidden.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import sysconfig
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

AUTO = "auto"
BWRAP = "bwrap"
NONE = "none"
MODES = (AUTO, BWRAP, NONE)

MiB = 1024 * 1024
TMP_MB = 128             # /tmp and scratch of a bot without a memory limit
SMALL_TMPFS_MB = 16      # /var/tmp, /run
SHM_MB = 64
# Private, empty file systems over places where a bot could find other
# processes' sockets or leave files for them.
_PRIVATE_TMPFS = {"/tmp": None, "/var/tmp": SMALL_TMPFS_MB, "/run": SMALL_TMPFS_MB,
                  "/dev/shm": SHM_MB}        # None: the bot's /tmp size


@dataclass(frozen=True)
class SandboxPolicy:
    """How one bot is confined.

    ``mode``: ``auto``, ``bwrap`` or ``none``.  ``read`` / ``write``: extra
    paths the bot may read / write.  ``hide``: paths it must not see (for a
    directory, an empty one is shown; for a file, an empty file).
    ``scratch``: a directory the bot may write, empty for every process
    (a bounded tmpfs in the sandbox; named in ``$ARENA_SCRATCH``).
    ``tmp_mb``: size of its /tmp and scratch (default: ``TMP_MB``, or the
    bot's memory limit).  All paths are absolute.  The bot's working
    directory and program are always shown, read-only.
    """

    mode: str = AUTO
    read: tuple[str, ...] = ()
    write: tuple[str, ...] = ()
    hide: tuple[str, ...] = ()
    scratch: str | None = None
    tmp_mb: int | None = None

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"sandbox mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        for name in ("read", "write", "hide"):
            paths = getattr(self, name)
            if isinstance(paths, (str, bytes)):
                raise TypeError(f"sandbox {name} must be a sequence of paths, not one string")
            clean = tuple(dict.fromkeys(os.path.abspath(os.fspath(p)) for p in paths))
            object.__setattr__(self, name, clean)
        if "/" in self.write:
            raise ValueError("sandbox write cannot be /: bound writable, the host's whole file system "
                             "would be the bot's, its /proc (every process) and /tmp with it")
        if self.scratch is not None:
            object.__setattr__(self, "scratch", os.path.abspath(os.fspath(self.scratch)))
        if self.tmp_mb is not None and self.tmp_mb <= 0:
            raise ValueError("sandbox tmp_mb must be positive")

    def replace(self, **changes: Any) -> SandboxPolicy:
        return dataclasses.replace(self, **changes)

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "read": list(self.read), "write": list(self.write),
                "hide": list(self.hide), "scratch": self.scratch, "tmp_mb": self.tmp_mb}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> SandboxPolicy:
        return cls(obj.get("mode", AUTO), tuple(obj.get("read", ())),
                   tuple(obj.get("write", ())), tuple(obj.get("hide", ())),
                   obj.get("scratch"), obj.get("tmp_mb"))


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def program_path(argv: Sequence[str], cwd: str, env: Mapping[str, str]) -> str | None:
    first = argv[0]
    if "/" in first:
        return os.path.normpath(os.path.join(cwd, first))
    return shutil.which(first, path=env.get("PATH", os.defpath))


# A script's usual interpreter, by its name's suffix: what a student writes
# instead of making the script executable.
_INTERPRETERS = {".py": "python3", ".js": "node", ".mjs": "node", ".pl": "perl", ".rb": "ruby",
                 ".sh": "sh", ".php": "php", ".lua": "lua"}


def _interpreter(program: str) -> str | None:
    return _INTERPRETERS.get(os.path.splitext(program)[1].lower())


def _runs_alone(path: str) -> bool:
    """Whether the file can be run by name: executable, and a binary or a #! script."""
    if not os.access(path, os.X_OK):
        return False
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError:
        return False
    return head.startswith(b"#!") or head == b"\x7fELF"


def not_on_path_hint(program: str, cwd: str) -> str | None:
    """Why a bare program name was not found although a file of that name is
    in the bot's directory: like a shell, a name without a ``/`` is looked up
    on PATH only (a compiled bot is ``./bot``, not ``bot``); a script that
    cannot run by itself (``bot.py``, no #! line or not executable) is named
    after its interpreter instead."""
    path = os.path.join(cwd, program)
    if "/" in program or not os.path.isfile(path):
        return None
    interpreter = _interpreter(program)
    if interpreter is not None and not _runs_alone(path):
        return f"not on PATH; to run the script {program!r} in {cwd}, write {interpreter} {program}"
    return f"not on PATH; to run the file {program!r} in {cwd}, write ./{program}"


def crlf_hint(path: str) -> str | None:
    """Why a script whose #! line ends in a carriage return cannot start (a
    file saved with Windows line endings: the kernel, or env, looks for an
    interpreter named ``python3\\r``); None for any other file."""
    try:
        with open(path, "rb") as f:
            first = f.readline(256)
    except OSError:
        return None
    if not (first.startswith(b"#!") and first.endswith(b"\r\n")):
        return None
    name = os.path.basename(path)
    return (f"its #! line ends in a carriage return: the file has Windows (CRLF) line endings; convert it "
            f"to LF (dos2unix {name}, or the editor's line-ending setting)")


def _or_interpreter(program: str) -> str:
    interpreter = _interpreter(program)
    return f"name its interpreter: {interpreter} {program}" if interpreter else "run it with its interpreter"


def not_executable_hint(program: str) -> str:
    """What to do about a program that exists but lacks the execute permission."""
    return f"not executable (chmod +x {program}, or {_or_interpreter(program)})"


def no_shebang_hint(program: str) -> str:
    """What to do about an executable file that is neither a binary nor a #! script."""
    interpreter = _interpreter(program)
    line = f"make '#!/usr/bin/env {interpreter}' its first line" if interpreter else "give it a #! line"
    return f"not a binary, and no #! line ({line}, or {_or_interpreter(program)})"


def runtime_paths() -> list[str]:
    """The arena package and this interpreter's environment (a venv's root,
    whose pyvenv.cfg tells Python it is one, and its site-packages), where
    they lie under a private tmpfs (a checkout or venv in /tmp): elsewhere the
    bot sees them anyway, read-only with the host.  Without them a bot that
    imports arena's botkit, as the shipped bots do, cannot start there."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    found = [package, sys.prefix, *{sysconfig.get_paths()[k] for k in ("purelib", "platlib")}]
    return [p for p in found if os.path.isdir(p) and any(_within(p, t) for t in _PRIVATE_TMPFS)]


def own_paths(argv: Sequence[str], cwd: str, env: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """What a bot needs to see: its working directory, its program (with the
    target of symlinks, e.g. a venv's python) and the files its command names
    (its script), as (directories, files)."""
    folders = [cwd]
    files = []
    program = program_path(argv, cwd, env)
    if program:
        files += [program, os.path.realpath(program)]
    for arg in argv[1:]:
        if arg.startswith("-"):
            continue
        candidate = os.path.normpath(os.path.join(cwd, arg))
        if os.path.isfile(candidate):
            files.append(candidate)
    folders += [os.path.dirname(f) for f in files]
    return list(dict.fromkeys(folders)), list(dict.fromkeys(files))


def exposed(path: str, argv: Sequence[str], cwd: str, env: Mapping[str, str]) -> str | None:
    """The first of the bot's own paths (``own_paths``, ``runtime_paths``)
    that lies in ``path``, or None.  ``mount_options`` never hides a path
    holding what the bot needs, so such a ``path`` stays in its view: callers
    that must hide it (the results, the logs) refuse to run instead."""
    folders, files = own_paths(argv, cwd, env)
    root = os.path.abspath(path)
    return next((p for p in [*folders, *files, *runtime_paths()] if _within(p, root)), None)


# Directories that hold more than one program's files: a bot's program or
# script found there is hidden from the others file by file, never the folder.
_SHARED_DIRS = ("/", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/opt",
                "/var", "/srv", "/home", "/root", "/tmp", "/usr/bin", "/usr/local/bin")


def bot_places(argv: Sequence[str], cwd: str | None) -> list[str]:
    """What to hide of a bot from the other bots: its home (``home_of``), and
    the program and script files its command names by path, with their
    directories (unless shared, like /usr/bin)."""
    places = []
    home = home_of(argv, cwd)
    if home is not None:
        places.append(home)
    base = cwd or os.getcwd()
    for i, arg in enumerate(argv):
        if arg.startswith("-") or (i == 0 and ("/" not in arg or _is_interpreter(arg))):
            continue
        path = os.path.normpath(os.path.join(base, arg))
        if os.path.isfile(path) and not path.startswith(("/usr/", "/bin/", "/sbin/", "/lib")):
            places.append(path)
            folder = os.path.dirname(path)
            if folder not in _SHARED_DIRS:
                places.append(folder)
    return list(dict.fromkeys(places))


def _is_interpreter(program: str) -> bool:
    from .spec import INTERPRETERS
    return os.path.basename(program).rstrip("0123456789.") in INTERPRETERS


def home_of(argv: Sequence[str], cwd: str | None) -> str | None:
    """The directory a bot "lives in", to hide from the other bots: its
    working directory when it has its own, else the directory of its script
    or program when that is given as a path."""
    if cwd is not None:
        return os.path.abspath(cwd)
    for arg in argv:
        if not arg.startswith("-") and ("/" in arg or os.path.isfile(arg)) and os.path.exists(arg):
            return os.path.dirname(os.path.abspath(arg))
    return None


def _redundant(path: str, outer: str, shown: list[str]) -> bool:
    """``path`` is inside hidden ``outer`` with nothing shown in between: hiding
    it again would only leave an empty mount point in view."""
    return (path != outer and _within(path, outer)
            and not any(_within(s, outer) and _within(path, s) for s in shown))


def private_mounts(policy: SandboxPolicy) -> list[str]:
    """The file systems in memory a sandboxed bot may write (its private
    /tmp, /dev/shm, /run, /var/tmp and its scratch): what it keeps there is
    memory that no process's resident set shows."""
    found = [p for p in _PRIVATE_TMPFS if os.path.isdir(p) and not os.path.islink(p)]
    return found + ([policy.scratch] if policy.scratch is not None else [])


def _tmpfs(path: str, mb: int | None, sized: bool) -> list[str]:
    return (["--size", str(mb * MiB)] if sized and mb else []) + ["--tmpfs", path]


# Mounts of the sandbox itself (the base options': its own /proc and /dev).
_BASE_MOUNTS = ("/proc", "/dev")


def _undoes_base(path: str, own_folder: bool) -> bool:
    """Binding ``path`` would bring back what the sandbox replaced: "/"
    (bound read-only already) holds the host's /proc, with every process,
    its /dev and its /tmp and /run, with their sockets.  A bot's own folder
    in /proc or /dev would be the host's, and one that is a private file
    system (a working directory of /tmp) leaves that in place; a ``read``
    path there (a device) is the organiser's to give."""
    if path == "/":
        return True
    return own_folder and (path in _PRIVATE_TMPFS or any(_within(path, m) for m in _BASE_MOUNTS))


@dataclass(frozen=True)
class Mount:
    """One mount of a bot's sandbox, over ``path`` and all below it until a
    deeper one: ``shows`` the host's file there (a bind), or hides it (a
    file system of its own, or /dev/null over a file)."""

    path: str
    args: tuple[str, ...]
    shows: bool


@dataclass(frozen=True)
class View:
    """What a bot's sandbox shows of the host's files: its mounts in the
    order bwrap applies them, over the host's root, bound read-only."""

    mounts: tuple[Mount, ...]

    def hides(self, path: str) -> bool:
        """Whether the bot sees something else than the host's ``path``
        (nothing, or an empty file system): the last mount applied over it
        decides, and there is none over the host's root."""
        last = None
        for mount in self.mounts:
            if _within(path, mount.path):
                last = mount
        return last is not None and not last.shows


def _plan(own: Iterable[str], policy: SandboxPolicy, sized: bool,
          needed: Iterable[str]) -> tuple[list[Mount], list[str]]:
    """The mounts, shallowest path first, and the hiding file systems to make read-only after them."""
    folders = list(own)
    own = folders + list(needed)
    tmp_mb = policy.tmp_mb or TMP_MB
    private = private_mounts(policy.replace(scratch=None))
    ops: list[tuple[int, int, str, Mount]] = [
        (p.count("/"), 0, p, Mount(p, tuple(_tmpfs(p, _PRIVATE_TMPFS[p] or tmp_mb, sized)), False))
        for p in private]
    shown = own + list(policy.read) + list(policy.write)
    hidden = [p for p in policy.hide
              if os.path.lexists(p) and not any(_within(s, p) for s in own)]
    read_only: list[str] = []
    for path in hidden:
        if any(_redundant(path, q, shown) for q in hidden + private):
            continue
        if os.path.isdir(path):
            op = _tmpfs(path, 1, sized)
            read_only.append(path)
        else:
            op = ["--ro-bind", "/dev/null", path]
        ops.append((path.count("/"), 0, path, Mount(path, tuple(op), False)))

    def bind(path: str, order: int, kind: str = "--ro-bind") -> None:
        ops.append((path.count("/"), order, path, Mount(path, (kind, path, path), True)))

    for path in folders + list(policy.read):
        if _undoes_base(path, own_folder=path in folders):
            continue
        if os.path.exists(path):
            bind(path, 1)
    for path in list(needed):
        # A program or script in a folder left to a private file system
        # (its working directory is /tmp, say): that file alone is shown.
        if os.path.dirname(path) in private and os.path.exists(path):
            bind(path, 1)
    for path in policy.write:
        if os.path.exists(path):
            bind(path, 2, "--bind")
    if policy.scratch is not None:
        ops.append((policy.scratch.count("/"), 2, policy.scratch,
                    Mount(policy.scratch, tuple(_tmpfs(policy.scratch, tmp_mb, sized)), False)))
    ops.sort(key=lambda op: op[:3])
    return [op[3] for op in ops], read_only


def mount_options(own: Iterable[str], policy: SandboxPolicy, sized: bool,
            needed: Iterable[str] = ()) -> list[str]:
    """Mount options after the base ones, shallowest path first.  A path is
    never hidden if the bot's own paths (``own`` directories, ``needed``
    files) are in it: what else the bot needs there, an interpreter say,
    cannot be known.  Extra read and write paths are shown even inside
    hidden ones.  Hiding file systems end read-only."""
    mounts, read_only = _plan(own, policy, sized, needed)
    remounts = [arg for path in read_only for arg in ("--remount-ro", path)]
    return [arg for m in mounts for arg in m.args] + remounts


def view(own: Iterable[str], policy: SandboxPolicy, needed: Iterable[str] = ()) -> View:
    """What ``mount_options`` with these arguments shows and hides, from the
    same mounts: a warning about what a bot can read cannot drift from what
    its sandbox does."""
    return View(tuple(_plan(own, policy, False, needed)[0]))


def needs(argv: Sequence[str], cwd: str, env: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """The (directories, files) a sandboxed bot is given: its ``own_paths``
    and, for its imports, arena's own ``runtime_paths``."""
    folders, files = own_paths(argv, cwd, env)
    return folders + [p for p in runtime_paths() if p not in folders], files
