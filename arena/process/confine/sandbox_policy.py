"""What a sandboxed bot sees: its ``SandboxPolicy`` and the bwrap mount
options that carry it out (see ``sandbox`` for the sandbox itself).

A bot's file system is an allow-list, built in bwrap's empty root: the
host's system directories and a few /etc files read-only, its own
passwd and group, private, size-bounded ``/tmp``, ``/var/tmp``, ``/run``,
``/dev/shm`` and home; its own paths (working directory, program, script)
and its program's installation (a venv, a JDK) read-only; ``read`` paths
read-only, ``write`` paths writable, a scratch directory (a private tmpfs)
if it has one.  Nothing else of the host is mounted: no home directories,
no other trees, no sockets.

Inside what is shown, the ``hide`` paths (results, logs, the tournament
file, other bots' directories and programs) and version control in the
bot's own folders are left out: a folder holding one is shown entry by
entry around it, so that it is not mounted at all.  Mounts are applied
shallowest path first, so a deeper path inside a hidden one can be shown
again (a ``write`` path inside the hidden results directory), and a path
that a bot needs is never hidden.
"""

from __future__ import annotations

import dataclasses
import errno
import functools
import glob
import os
import shlex
import shutil
import stat
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
# The bot's home: a private file system, not the organiser's.
BOT_HOME = "/home/bot"
# The user and group bots run as when arena runs as root.
NOBODY = 65534
# Private, empty file systems, where programs expect to write.
_PRIVATE_TMPFS = {"/tmp": None, "/var/tmp": SMALL_TMPFS_MB, "/run": SMALL_TMPFS_MB,
                  "/dev/shm": SHM_MB, BOT_HOME: SMALL_TMPFS_MB}        # None: the bot's /tmp size


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


# Programs that run the script they are given: such a bot is named by its
# script, and only the script is hidden (``spec.BotSpec.display_name``,
# ``bot_places``).  Here, below ``spec``, as both use it.
INTERPRETERS = {"python", "python3", "pypy", "pypy3", "node", "nodejs", "deno", "bun",
                "ruby", "perl", "php", "java", "bash", "sh", "env", "lua", "Rscript"}
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


def spaced_path(argv: Sequence[str], cwd: str) -> tuple[str, ...] | None:
    """``argv`` as meant when its first words are one path with spaces in it
    (``./my bot.sh``, split into ``./my`` and ``bot.sh``): the file the
    first words name, joined, then the rest; None when no such file is
    there or the first word is found as it is."""
    if os.path.exists(os.path.join(cwd, argv[0])):
        return None
    for n in range(2, len(argv) + 1):
        joined = " ".join(argv[:n])
        if os.path.isfile(os.path.join(cwd, joined)):
            # As in a shell, a name without a / would be looked up on PATH.
            return (joined if "/" in joined else f"./{joined}", *argv[n:])
    return None


def spaced_hint(argv: Sequence[str], cwd: str, key: str = "") -> str | None:
    """"did you mean the file './my bot.sh'? ..." for ``spaced_path``'s
    case, ending with how to write it after ``key`` (``command: "'./my
    bot.sh'"``: the command is split as a shell would, and the outer quotes
    are the command line's, or YAML's)."""
    meant = spaced_path(argv, cwd)
    if meant is None:
        return None
    return f"did you mean the file {meant[0]!r}? quote a path that has spaces: {key}\"{shlex.join(meant)}\""


def start_failure(argv: Sequence[str], cwd: str, exc: OSError) -> str:
    """Why ``argv`` could not start in ``cwd`` (``exc``: what starting it
    raised, or what ``preflight`` found), with what to do about it."""
    cmd = argv[0]
    path = os.path.join(cwd, cmd)
    if isinstance(exc, FileNotFoundError):
        if "/" in cmd and os.path.isfile(path):
            return crlf_hint(path) or "its interpreter (#! line) was not found"
        spaced = spaced_hint(argv, cwd)
        return f"no such file or command; {spaced}" if spaced else \
            not_on_path_hint(cmd, cwd) or "no such file or command"
    if isinstance(exc, PermissionError):
        return (not_executable_hint(cmd) if "/" in cmd and os.path.isfile(path)
                and not os.access(path, os.X_OK) else "permission denied")
    if exc.errno == errno.ENOEXEC:
        return no_shebang_hint(cmd)
    return exc.strerror or str(exc)


def runtime_paths() -> list[str]:
    """The arena package and this interpreter's installation (a venv's
    root, whose pyvenv.cfg tells Python it is one, the python it was made
    from, and its site-packages), where they lie outside the system
    directories: the sandbox shows nothing else of the host, and without
    them a bot that imports arena's botkit, as the shipped bots do, cannot
    start.  The rest of the folder arena is in is not shown."""
    package = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # arena/, from arena/process/confine/
    found = [package, sys.prefix, sys.base_prefix,
             *sorted({sysconfig.get_paths()[k] for k in ("purelib", "platlib")})]
    return [p for p in dict.fromkeys(found) if os.path.isdir(p) and not _system(p)]


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


def private_mounts(policy: SandboxPolicy) -> list[str]:
    """The file systems in memory a sandboxed bot may write (its private
    /tmp, /dev/shm, /run, /var/tmp, home and its scratch): what it keeps
    there is memory that no process's resident set shows."""
    return list(_PRIVATE_TMPFS) + ([policy.scratch] if policy.scratch is not None else [])


def _tmpfs(path: str, mb: int | None, sized: bool) -> list[str]:
    return (["--size", str(mb * MiB)] if sized and mb else []) + ["--tmpfs", path]


def _private_tmpfs(path: str, mb: int | None, sized: bool) -> list[str]:
    # Sticky and open to all: as root, bwrap makes it root's, and the bot is nobody then.
    return ["--perms", "1777", *_tmpfs(path, mb, sized)]


# Mounts of the sandbox itself (the base options': its own /proc and /dev).
_BASE_MOUNTS = ("/proc", "/dev")


def _undoes_base(path: str, own_folder: bool) -> bool:
    """Binding ``path`` would bring back what the sandbox replaced: "/"
    holds the host's whole file system, its /proc, with every process, its
    /dev and its /tmp and /run, with their sockets.  A bot's own folder
    in /proc or /dev would be the host's, and one that is a private file
    system (a working directory of /tmp) leaves that in place; a ``read``
    path there (a device) is the organiser's to give."""
    if path == "/":
        return True
    return own_folder and (path in _PRIVATE_TMPFS or any(_within(path, m) for m in _BASE_MOUNTS))


@dataclass(frozen=True)
class Mount:
    """One mount of a bot's sandbox, over ``path`` and all below it until a
    deeper one: ``shows`` the host's file there (a bind, or a symlink made
    as the host's), or hides it (a file system of its own, or /dev/null
    over a file).  A directory bwrap only makes, to hold deeper mounts,
    ``covers`` nothing."""

    path: str
    args: tuple[str, ...]
    shows: bool
    covers: bool = True


@dataclass(frozen=True)
class View:
    """What a bot's sandbox shows of the host's files: its mounts in the
    order bwrap applies them, over an empty root (the allow-list)."""

    mounts: tuple[Mount, ...]

    def hides(self, path: str) -> bool:
        """Whether the bot sees something else than the host's ``path``
        (nothing, or an empty file system): the last mount applied over it
        decides; a path it hides (or none covers) is still seen in part
        when something below it is shown (a directory bwrap made to hold
        it, a folder shown entry by entry)."""
        last = None
        for mount in self.mounts:
            if mount.covers and _within(path, mount.path):
                last = mount
        if last is not None and last.shows:
            return False
        return not any(m.shows and _within(m.path, path) and m.path != path for m in self.mounts)


# -- the allow-list ----------------------------------------------------------------

# The host's programs and libraries, read-only: all a bot gets of the host's
# system (a symlink such as /bin -> usr/bin is made as the same symlink).
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# The few files of /etc that programs read to start: the dynamic linker's
# cache and configuration, the name service switch, the time zone, the
# alternatives links (java, node) and the JDKs' settings (Debian's JDKs
# link their jvm.cfg into /etc/java-N).  passwd and group are the sandbox's
# own (``identity_files``); no certificates: bots have no network.
ETC_PATHS = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/nsswitch.conf",
             "/etc/localtime", "/etc/timezone", "/etc/alternatives")
ETC_PATTERNS = ("/etc/java-*",)
# Version-control directories are never shown inside a bot's own folders:
# their objects may hold other bots' code, or the tournament file's seed.
VCS_NAMES = (".git", ".hg", ".svn")
# A folder holding something hidden is shown entry by entry, so that what is
# hidden is not mounted at all (and /proc/self/mountinfo cannot name it);
# past this many entries, as an empty mount over what is hidden instead.
MAX_BINDS = 256
# Written for the sandbox (``identity_files``).
IDENTITY_FILES = ("/etc/passwd", "/etc/group")


# Where to find what makes a bot nobody when arena runs as root.
_SETPRIV_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"


@functools.cache
def unprivileged() -> str | None:
    """When arena runs as root, the ``setpriv`` that makes each bot nobody
    (in the system directories, which every sandbox shows); None when
    arena is not root (bots are its own user then, in a user namespace) or
    none is found (bots stay root, as ``Containment.description`` says)."""
    if os.geteuid() != 0:
        return None
    found = shutil.which("setpriv", path=_SETPRIV_PATH)
    return found if found is not None and os.path.realpath(found).startswith("/usr/") else None


def bot_user() -> tuple[int, int]:
    """The uid and gid a sandboxed bot runs as (outside its user namespace)."""
    return (NOBODY, NOBODY) if unprivileged() is not None else (os.getuid(), os.getgid())


def usable(path: str, want: int) -> bool:
    """Whether the bot's user may ``want`` (os.R_OK | os.X_OK, or os.W_OK | os.X_OK) ``path``
    by its mode (root, as arena may be, would pass any test of ``os.access``)."""
    uid, gid = bot_user()
    if uid == 0:
        return True
    try:
        st = os.stat(path)
    except OSError:
        return False
    shift = 6 if st.st_uid == uid else 3 if st.st_gid == gid else 0
    if not stat.S_ISDIR(st.st_mode):
        want &= ~os.X_OK
    return (st.st_mode >> shift) & want == want


def _system(path: str) -> bool:
    return path == "/" or any(_within(path, s) for s in SYSTEM_PATHS)


def _shown(path: str, kind: str = "--ro-bind") -> Mount:
    """``path`` as on the host: bound (``kind``), or for a symlink the same symlink."""
    if os.path.islink(path):
        return Mount(path, ("--symlink", os.readlink(path), path), True)
    return Mount(path, (kind, path, path), True)


@functools.cache
def system_mounts() -> tuple[Mount, ...]:
    """The host's system directories and /etc files that exist here."""
    found = [*SYSTEM_PATHS, *ETC_PATHS, *sorted(p for pattern in ETC_PATTERNS for p in glob.glob(pattern))]
    return tuple(_shown(p) for p in found if os.path.lexists(p))


def _venv_base(prefix: str) -> list[str]:
    """The installation a virtual environment was made from (its pyvenv.cfg's ``home``)."""
    try:
        with open(os.path.join(prefix, "pyvenv.cfg"), encoding="utf-8", errors="replace") as f:
            lines = f.read(65536).splitlines()
    except OSError:
        return []
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip() == "home" and value.strip():
            home = os.path.abspath(value.strip())
            return [os.path.dirname(home) if os.path.basename(home) == "bin" else home]
    return []


def toolchain_paths(program: str | None) -> list[str]:
    """Where a program's installation lies when outside the system
    directories: for a program in PREFIX/bin, PREFIX (a venv, pyenv's
    python, a JDK, node, with their libraries), for each symlink it is
    reached through, and for a venv the python it was made from."""
    found: list[str] = []
    path = program
    for _hop in range(16):
        if path is None:
            break
        folder = os.path.dirname(path)
        if os.path.basename(folder) == "bin":
            prefix = os.path.dirname(folder)
            found += [prefix, *_venv_base(prefix)]
        if not os.path.islink(path):
            break
        path = os.path.normpath(os.path.join(folder, os.readlink(path)))
    return [p for p in dict.fromkeys(found) if not _system(p) and os.path.isdir(p)]


def _entries(root: str, hidden: Sequence[str], budget: list[int]) -> list[str] | None:
    """What of ``root`` to bind, entry by entry, to show it all but the
    ``hidden`` paths in it (None past ``budget``, a one-item list counted
    down).  A folder the bot's user may not open (a 0700 one of root's,
    mktemp's or pytest's, when bots are nobody) is shown entry by entry
    too, in a folder bwrap makes: it was given to the bot to read."""
    inside = [h for h in hidden if _within(h, root)]
    if root in inside:
        return []
    closed = os.path.isdir(root) and not os.path.islink(root) and not usable(root, os.R_OK | os.X_OK)
    if not inside and not closed:
        return [root]
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return [root]
    budget[0] -= len(names)
    if budget[0] < 0:
        return None
    found: list[str] = []
    for name in names:
        path = os.path.join(root, name)
        if os.path.isdir(path) and not os.path.islink(path) and path not in inside:
            deeper = _entries(path, inside, budget)
            if deeper is None:
                return None
            found += deeper
        elif path not in inside and (os.path.isfile(path) or os.path.islink(path)):
            found.append(path)       # a socket or a device of the host is never shown
    return found


def _show_root(root: str, kind: str, order: int, hidden: Sequence[str]) -> list[tuple[int, int, str, Mount]]:
    """The mounts that show ``root`` but its ``hidden`` paths: entry by
    entry, or past ``MAX_BINDS`` entries, whole with empty mounts over them."""
    def op(path: str, mount: Mount, at: int = order) -> tuple[int, int, str, Mount]:
        return (path.count("/"), at, path, mount)

    entries = _entries(root, hidden, [MAX_BINDS]) if kind == "--ro-bind" else _entries_rw(root, hidden)
    if entries == [root]:
        return [op(root, _shown(root, kind))]
    if entries is not None:
        # The folder itself is made, even with nothing in it to show: the bot may run from it.
        made = op(root, Mount(root, ("--perms", "0755", "--dir", root), False, covers=False), 0)
        # -try: an entry removed between the listing and bwrap's start is
        # not there to show, and must not keep the bot from starting
        return [made, *(op(p, _shown(p, "--ro-bind-try")) for p in entries)]
    ops = [op(root, _shown(root, kind))]
    for path in hidden:
        if _within(path, root) and not any(_within(path, h) and h != path for h in hidden):
            cover = _tmpfs(path, 1, False) if os.path.isdir(path) else ["--ro-bind", "/dev/null", path]
            ops.append(op(path, Mount(path, tuple(cover), False), 3))
    return ops


def _entries_rw(root: str, hidden: Sequence[str]) -> list[str] | None:
    """A writable folder is bound whole (what the bot writes must land in
    it), with empty mounts over what is hidden in it."""
    return [root] if not any(_within(h, root) for h in hidden) else None


def _roots(own: list[str], policy: SandboxPolicy, needed: list[str]) -> list[tuple[str, str, int]]:
    """(path, bind option, order) of what to show besides the system."""
    roots = [(p, "--ro-bind", 1) for p in own if not _undoes_base(p, own_folder=True)]
    roots += [(p, "--ro-bind", 1) for p in policy.read if not _undoes_base(p, own_folder=False)]
    roots += [(p, "--ro-bind", 1) for p in needed]
    roots += [(p, "--bind", 2) for p in policy.write]
    return [r for r in dict.fromkeys(roots) if os.path.exists(r[0]) and not _system(r[0])]


def _hidden(own: list[str], policy: SandboxPolicy, needed: list[str]) -> list[str]:
    """What must not be shown even inside a shown folder: the policy's
    ``hide`` paths, and version control in the bot's own folders; never a
    path that holds what the bot runs from."""
    vcs = [os.path.join(f, n) for f in own for n in VCS_NAMES]
    mine = own + needed
    return [p for p in dict.fromkeys([*policy.hide, *vcs])
            if os.path.lexists(p) and not any(_within(s, p) for s in mine)]


def _plan(own: Iterable[str], policy: SandboxPolicy, sized: bool,
          needed: Iterable[str]) -> tuple[list[Mount], list[str]]:
    """The mounts, shallowest path first, and the hiding file systems to make read-only after them."""
    folders, files = list(dict.fromkeys(own)), list(dict.fromkeys(needed))
    tmp_mb = policy.tmp_mb or TMP_MB
    hidden = _hidden(folders, policy, files)
    ops = [(m.path.count("/"), 0, m.path, m) for m in system_mounts()]
    ops += [(p.count("/"), 0, p, Mount(p, tuple(_private_tmpfs(p, mb or tmp_mb, sized)), False))
            for p, mb in _PRIVATE_TMPFS.items()]
    roots = _roots(folders, policy, files)
    for path, kind, order in roots:
        # Already shown by a root around it, with nothing hidden in between.
        if any(r != path and k == kind and _within(path, r) and not any(_within(path, h) for h in hidden)
               for r, k, _o in roots):
            continue
        ops += _show_root(path, kind, order, hidden)
    if policy.scratch is not None:
        ops.append((policy.scratch.count("/"), 2, policy.scratch,
                    Mount(policy.scratch, tuple(_private_tmpfs(policy.scratch, tmp_mb, sized)), False)))
    ops += _folders_made([op[3] for op in ops])
    ops.sort(key=lambda op: op[:3])
    read_only = [op[2] for op in ops if op[1] == 3 and op[3].args[0] != "--ro-bind"]
    return [op[3] for op in ops], read_only


def _folders_made(mounts: list[Mount]) -> list[tuple[int, int, str, Mount]]:
    """The directories bwrap makes to hold mounts (in the sandbox's own
    root or a file system of its own, not in what is bound from the
    host): readable by all, as bwrap as root would make them its own only."""
    made: dict[str, None] = {}
    for path in [*(m.path for m in mounts), *IDENTITY_FILES]:
        folder = os.path.dirname(path)
        while folder != "/" and not any(_within(folder, m) for m in _BASE_MOUNTS) \
                and not any(_within(folder, m.path) for m in mounts if m.covers and m.shows):
            made[folder] = None
            folder = os.path.dirname(folder)
    return [(p.count("/"), 0, p, Mount(p, ("--perms", "0755", "--dir", p), False, covers=False)) for p in made]


def mount_options(own: Iterable[str], policy: SandboxPolicy, sized: bool,
                  needed: Iterable[str] = (), made: Sequence[str] = ()) -> list[str]:
    """Mount options after the base ones, shallowest path first, into
    bwrap's empty root: the system, private file systems, the bot's own
    paths (``own`` directories, ``needed`` files) and its grants, without
    the hidden paths in them.  A path is never hidden if the bot's own
    paths are in it: what else the bot needs there cannot be known.
    Extra read and write paths are shown even inside hidden ones.  The
    root and hiding file systems end read-only, after the ``made`` options
    (files bwrap makes in /etc: ``identity_files``)."""
    mounts, read_only = _plan(own, policy, sized, needed)
    remounts = [arg for path in [*read_only, "/"] for arg in ("--remount-ro", path)]
    return [arg for m in mounts for arg in m.args] + list(made) + remounts


def view(own: Iterable[str], policy: SandboxPolicy, needed: Iterable[str] = ()) -> View:
    """What ``mount_options`` with these arguments shows and hides, from the
    same mounts: a warning about what a bot can read cannot drift from what
    its sandbox does."""
    return View(tuple(_plan(own, policy, False, needed)[0]))


def needs(argv: Sequence[str], cwd: str, env: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """The (directories, files) a sandboxed bot is given: its ``own_paths``,
    its program's installation (``toolchain_paths``) and, for its imports,
    arena's own ``runtime_paths``."""
    folders, files = own_paths(argv, cwd, env)
    extra = [*toolchain_paths(program_path(argv, cwd, env)), *runtime_paths()]
    return folders + [p for p in dict.fromkeys(extra) if p not in folders], files


def identity_files(uid: int, gid: int) -> dict[str, bytes]:
    """The sandbox's /etc/passwd and /etc/group: the bot's user alone
    (nobody when arena runs as root), at home in its private ``BOT_HOME``."""
    user, group = ("nobody", "nogroup") if uid == NOBODY else ("bot", "bot")
    passwd, group_file = IDENTITY_FILES
    return {passwd: f"{user}:x:{uid}:{gid}:{user}:{BOT_HOME}:/bin/sh\n".encode(),
            group_file: f"{group}:x:{gid}:\n".encode()}
