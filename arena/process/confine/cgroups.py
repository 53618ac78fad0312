"""A control group of its own per bot: limits the kernel enforces, and a CPU
counter that sees every task of the bot.

Why: the per-process rlimits and the watchdog (``limits``) count processes,
not threads; see no System V or kernel memory; and add up CPU only of the
processes alive when they look, so CPU used in children the kernel reaps at
once (SIGCHLD ignored) is seen by nobody.  A cgroup counts all of it:

* ``pids.max``: tasks, i.e. processes *and* threads; a ``fork`` or
  ``pthread_create`` past it fails (EAGAIN), nothing is killed.
* ``memory.max`` / ``memory.limit_in_bytes``: every page the bot's tasks
  are charged for (anonymous memory, its tmpfs files, shared memory, kernel
  memory); past it the kernel reclaims, then kills a task (``oom_kills``).
* ``cpu.stat usage_usec`` / ``cpuacct.usage``: the CPU of every task that
  ever ran in it, threads and reaped children alike.

Two backends, chosen once per process by ``backend()``:

* **v2** (most current distributions): a directory of the unified hierarchy
  whose ``cgroup.controllers`` has ``memory`` and ``pids`` and where arena
  can write: ``$ARENA_CGROUP`` if set (a delegated subtree), else the
  cgroup arena runs in.  The kernel lets a non-root cgroup hand controllers
  to its children only while it has no processes of its own, so when arena
  is the only process of its cgroup it first moves itself into a leaf,
  ``arena-main``, as container init systems do; with other processes there
  (a login shell's cgroup), v2 is not used.
* **v1** (older systems, and this project's CI): the ``memory``, ``pids``
  and ``cpuacct`` hierarchies, each writable (root), one directory per bot
  in each, below arena's own cgroup there.

Neither: ``backend()`` is None, with one warning, and ``limits`` watches as
before (RLIMIT_DATA, counting tasks every 0.25 s).  The bot cgroups are
named ``arena-<pid>-<n>`` and removed when the bot is gone.
"""

from __future__ import annotations

import atexit
import errno
import functools
import itertools
import logging
import os
import signal
import time
from collections.abc import Iterable
from dataclasses import dataclass

LOG = logging.getLogger("arena.process.cgroups")     # its name before it moved to confine: log files keep it

ENV_BASE = "ARENA_CGROUP"            # a delegated cgroup v2 directory to create bot cgroups in
ENV_OFF = "ARENA_NO_CGROUP"          # "1": never use cgroups (the watchdog alone)
V1_CONTROLLERS = ("memory", "pids", "cpuacct")
V2_CONTROLLERS = ("memory", "pids")
_COUNTER = itertools.count(1)


class CgroupError(Exception):
    """A bot cgroup could not be made or joined; the message says why."""


@dataclass(frozen=True)
class Mounts:
    """Where the hierarchies are: the v2 mount, and the v1 mount of each controller."""

    unified: str | None
    v1: dict[str, str]


def read_mounts(mountinfo: str = "/proc/self/mountinfo") -> Mounts:
    """The cgroup mounts listed in ``mountinfo`` (nothing if it cannot be read)."""
    unified: str | None = None
    v1: dict[str, str] = {}
    try:
        with open(mountinfo, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return Mounts(None, {})
    for line in lines:
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        point = fields[4].replace("\\040", " ")
        if tail[0] == "cgroup2" and unified is None:
            unified = point
        elif tail[0] == "cgroup":
            for option in tail[2].split(","):
                v1.setdefault(option, point)
    return Mounts(unified, v1)


def own_paths(cgroup_file: str = "/proc/self/cgroup") -> dict[str, str]:
    """This process's cgroup per hierarchy: "" for v2, each controller for v1."""
    paths: dict[str, str] = {}
    try:
        with open(cgroup_file, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return paths
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for controller in parts[1].split(",") if parts[1] else [""]:
            paths[controller] = parts[2]
    return paths


def _count(path: str, name: str) -> int:
    """The count on the line ``name N`` of a cgroup's events file (0 if
    there is none, or the file cannot be read)."""
    try:
        text = _read(path)
    except OSError:
        return 0
    for line in text.splitlines():
        key, _sep, value = line.partition(" ")
        if key == name:
            return int(value) if value.strip().isdigit() else 0
    return 0


def _read(path: str) -> str:
    with open(path, encoding="ascii", errors="replace") as f:
        return f.read()


def _write(path: str, value: str) -> None:
    with open(path, "w", encoding="ascii") as f:
        f.write(value)


def _join(mount: str, inner: str) -> str:
    return os.path.normpath(os.path.join(mount, inner.lstrip("/")))


class BotCgroup:
    """One bot's cgroup: one directory (v2) or one per hierarchy (v1).

    The CPU counter is read through a descriptor kept open: a ``pread`` of
    about 2 us, cheap enough to be read at a turn's start and end."""

    def __init__(self, kind: str, dirs: Iterable[str], cpu_file: str, memory_dir: str,
                 procs_dir: str, memory_bytes: int | None, tasks: int | None = None) -> None:
        self.kind = kind
        self.dirs = tuple(dict.fromkeys(dirs))          # each once: co-mounted controllers share one
        self.memory_dir = memory_dir
        self.procs_dir = procs_dir
        self.memory_bytes = memory_bytes
        self.tasks = tasks
        self._cpu_fd: int | None = os.open(cpu_file, os.O_RDONLY | os.O_CLOEXEC)

    def attach(self, pid: int) -> None:
        """Move process ``pid`` (all its threads) in; its children are born in it.
        Raises ``CgroupError``."""
        try:
            for folder in self.dirs:
                _write(os.path.join(folder, "cgroup.procs"), str(pid))
        except OSError as exc:
            raise CgroupError(f"cannot move process {pid} into {folder}: {exc.strerror}") from exc

    def cpu_seconds(self) -> float:
        """CPU seconds used by every task that was ever in it (0.0 once removed)."""
        fd = self._cpu_fd
        if fd is None:
            return 0.0
        try:
            data = os.pread(fd, 1024, 0)
        except OSError:
            return 0.0
        if self.kind == "v1":                     # cpuacct.usage: ns
            return int(data or b"0") / 1e9
        for line in data.splitlines():            # cpu.stat: "usage_usec N" first
            if line.startswith(b"usage_usec "):
                return int(line.split()[1]) / 1e6
        return 0.0

    def members(self) -> list[int]:
        """Its processes (not threads); [] once it is gone."""
        try:
            return [int(p) for p in _read(os.path.join(self.procs_dir, "cgroup.procs")).split()]
        except (OSError, ValueError):
            return []

    def oom_kills(self) -> int:
        """How many of its tasks the kernel killed at its memory limit."""
        name = "memory.events" if self.kind == "v2" else "memory.oom_control"
        return _count(os.path.join(self.memory_dir, name), "oom_kill")

    def refused_tasks(self) -> int:
        """How many forks or new threads the kernel refused at its ``pids.max``."""
        return _count(os.path.join(self.procs_dir, "pids.events"), "max")

    def kill_members(self) -> None:
        """SIGKILL what is left in it (an unsandboxed bot's ``setsid()``
        children): each through a pidfd taken before it is checked to be
        still a member, so a pid reused meanwhile is never signalled."""
        for pid in self.members():
            try:
                fd = os.pidfd_open(pid)
            except (AttributeError, OSError):      # gone, or no pidfd here: left to the group kill
                continue
            try:
                if pid in self.members():
                    signal.pidfd_send_signal(fd, signal.SIGKILL)
            except OSError:
                pass
            finally:
                os.close(fd)

    def remove(self) -> bool:
        """Remove its directories: False while a task still is in it (tried again later)."""
        if self._cpu_fd is not None:
            os.close(self._cpu_fd)
            self._cpu_fd = None
        gone = True
        for folder in self.dirs:
            try:
                os.rmdir(folder)
            except FileNotFoundError:
                continue
            except OSError as exc:
                if exc.errno != errno.EBUSY:
                    LOG.debug("cannot remove cgroup %s: %s", folder, exc)
                gone = False
        return gone


# Cgroups whose last task had not yet left when their bot was closed.
_LEFT: list[BotCgroup] = []


def release(group: BotCgroup) -> None:
    """Kill what is left in ``group`` and remove it (later, if it is busy)."""
    group.kill_members()
    if not group.remove():
        _LEFT.append(group)


def _retry_left() -> None:
    _LEFT[:] = [g for g in _LEFT if not g.remove()]


def _remove_left_at_exit() -> None:
    """The last bots' tasks take a moment to exit after their kill: wait a
    little for them (0.5 s at most) rather than leave empty cgroups behind."""
    deadline = time.monotonic() + 0.5
    while _LEFT and time.monotonic() < deadline:
        _retry_left()
        if _LEFT:
            time.sleep(0.01)


atexit.register(_remove_left_at_exit)


def _remove_stale(bases: Iterable[str]) -> None:
    """Remove the empty bot cgroups an arena that is gone left (killed before it could)."""
    for base in dict.fromkeys(bases):
        try:
            names = os.listdir(base)
        except OSError:
            continue
        for name in names:
            parts = name.split("-")
            if len(parts) != 3 or parts[0] != "arena" or not parts[1].isdigit():
                continue
            if os.path.exists(f"/proc/{parts[1]}"):
                continue
            try:
                os.rmdir(os.path.join(base, name))
            except OSError:
                continue            # still busy, or not ours to remove


@dataclass(frozen=True)
class Backend:
    """Where bot cgroups are made: ``kind`` v1 or v2, and the folder bot
    cgroups go in, per hierarchy ("" for v2, each controller for v1)."""

    kind: str
    bases: dict[str, str]

    def describe(self) -> str:
        if self.kind == "v2":
            return f"cgroup v2 ({self.bases['']})"
        return "cgroup v1 (" + ", ".join(f"{c}: {self.bases[c]}" for c in V1_CONTROLLERS) + ")"

    def create(self, memory_bytes: int | None, tasks: int | None) -> BotCgroup:
        """A new bot cgroup with these limits.  Raises ``CgroupError``."""
        _retry_left()
        name = f"arena-{os.getpid()}-{next(_COUNTER)}"
        made: list[str] = []
        try:
            if self.kind == "v2":
                return self._create_v2(os.path.join(self.bases[""], name), memory_bytes, tasks, made)
            return self._create_v1(name, memory_bytes, tasks, made)
        except OSError as exc:
            for folder in reversed(made):
                try:
                    os.rmdir(folder)
                except OSError:
                    pass
            raise CgroupError(f"cannot make a cgroup for the bot: {exc}") from exc

    @staticmethod
    def _create_v2(folder: str, memory_bytes: int | None, tasks: int | None,
                   made: list[str]) -> BotCgroup:
        os.mkdir(folder)
        made.append(folder)
        if memory_bytes is not None:
            _write(os.path.join(folder, "memory.max"), str(memory_bytes))
            _optional(os.path.join(folder, "memory.swap.max"), "0")    # no swapping past the limit
            _optional(os.path.join(folder, "memory.oom.group"), "1")   # the whole bot, as the watchdog did
        if tasks is not None:
            _write(os.path.join(folder, "pids.max"), str(tasks))
        return BotCgroup("v2", [folder], os.path.join(folder, "cpu.stat"), folder, folder, memory_bytes, tasks)

    def _create_v1(self, name: str, memory_bytes: int | None, tasks: int | None,
                   made: list[str]) -> BotCgroup:
        dirs = {c: os.path.join(self.bases[c], name) for c in V1_CONTROLLERS}
        for folder in dict.fromkeys(dirs.values()):
            os.mkdir(folder)
            made.append(folder)
        if memory_bytes is not None:
            _write(os.path.join(dirs["memory"], "memory.limit_in_bytes"), str(memory_bytes))
            _optional(os.path.join(dirs["memory"], "memory.memsw.limit_in_bytes"), str(memory_bytes))
        if tasks is not None:
            _write(os.path.join(dirs["pids"], "pids.max"), str(tasks))
        return BotCgroup("v1", dirs.values(), os.path.join(dirs["cpuacct"], "cpuacct.usage"),
                         dirs["memory"], dirs["pids"], memory_bytes, tasks)


def _optional(path: str, value: str) -> None:
    """Write a setting the kernel may not have (swap accounting off, an older kernel)."""
    try:
        _write(path, value)
    except OSError as exc:
        LOG.debug("cannot set %s: %s", path, exc)


def _writable_here(base: str) -> str | None:
    """None if a cgroup can be made (and removed) in ``base``, else why not."""
    trial = os.path.join(base, f"arena-probe-{os.getpid()}")
    try:
        os.mkdir(trial)
        os.rmdir(trial)
    except OSError as exc:
        return f"cannot make a cgroup in {base}: {exc.strerror}"
    return None


def _probe_v2(mounts: Mounts, own: dict[str, str], env: dict[str, str]) -> tuple[Backend | None, str]:
    if mounts.unified is None:
        return None, "no cgroup v2 hierarchy"
    given = env.get(ENV_BASE)
    base = given or _join(mounts.unified, own.get("", "/"))
    try:
        available = _read(os.path.join(base, "cgroup.controllers")).split()
        enabled = _read(os.path.join(base, "cgroup.subtree_control")).split()
    except OSError as exc:
        return None, f"cgroup v2: cannot read {base}: {exc.strerror}"
    missing = [c for c in V2_CONTROLLERS if c not in available]
    if missing:
        return None, f"cgroup v2: {base} is given no {' or '.join(missing)} controller"
    if not all(c in enabled for c in V2_CONTROLLERS):
        why = _enable_v2(base, moving_self=given is None)
        if why is not None:
            return None, why
    why = _writable_here(base)
    return (None, f"cgroup v2: {why}") if why else (Backend("v2", {"": base}), "")


def _enable_v2(base: str, *, moving_self: bool) -> str | None:
    """Hand the memory and pids controllers to ``base``'s children; the
    kernel refuses while ``base`` has processes of its own (EBUSY), so if
    arena is the only one, it first moves itself into a leaf.  None, or why not."""
    control = os.path.join(base, "cgroup.subtree_control")
    wanted = " ".join(f"+{c}" for c in V2_CONTROLLERS)
    try:
        _write(control, wanted)
        return None
    except OSError as exc:
        if exc.errno != errno.EBUSY or not moving_self:
            return f"cgroup v2: cannot enable {wanted} in {base}: {exc.strerror}"
    try:
        others = [p for p in _read(os.path.join(base, "cgroup.procs")).split() if int(p) != os.getpid()]
        if others:
            return (f"cgroup v2: {base} holds other processes than arena's; give arena a "
                    f"delegated cgroup of its own (${ENV_BASE}, docs/SECURITY.md)")
        leaf = os.path.join(base, "arena-main")
        os.makedirs(leaf, exist_ok=True)
        _write(os.path.join(leaf, "cgroup.procs"), str(os.getpid()))
        _write(control, wanted)
    except (OSError, ValueError) as exc:
        return f"cgroup v2: cannot enable {wanted} in {base}: {exc}"
    return None


def _probe_v1(mounts: Mounts, own: dict[str, str]) -> tuple[Backend | None, str]:
    bases: dict[str, str] = {}
    for controller in V1_CONTROLLERS:
        mount = mounts.v1.get(controller)
        if mount is None:
            return None, f"no cgroup v1 {controller} hierarchy"
        base = _join(mount, own.get(controller, "/"))
        if base not in bases.values():
            why = _writable_here(base)
            if why is not None:
                return None, f"cgroup v1: {why}"
        bases[controller] = base
    return Backend("v1", bases), ""


def probe(mountinfo: str = "/proc/self/mountinfo", cgroup_file: str = "/proc/self/cgroup",
          env: dict[str, str] | None = None) -> tuple[Backend | None, str]:
    """The backend usable here (v2 first), or None and why neither is."""
    env = dict(os.environ) if env is None else env
    if env.get(ENV_OFF) == "1":
        return None, f"${ENV_OFF} is set"
    mounts = read_mounts(mountinfo)
    own = own_paths(cgroup_file)
    found, why_v2 = _probe_v2(mounts, own, env)
    if found is not None:
        return found, ""
    if env.get(ENV_BASE):
        return None, why_v2              # named, so meant: no silent fall back to v1
    found, why_v1 = _probe_v1(mounts, own)
    if found is not None:
        return found, ""
    return None, f"{why_v2}; {why_v1}"


@functools.cache
def backend() -> Backend | None:
    """``probe()`` once per process, with one warning where neither backend
    works (forked workers inherit the answer: ``sandbox.prepare`` asks first)."""
    found, why = probe()
    if found is None:
        # A warning only where one was asked for: without root or a
        # delegated cgroup (most desktops) the watchdog is the normal case.
        LOG.log(logging.WARNING if os.environ.get(ENV_BASE) else logging.INFO,
                "%sno cgroup for bots (%s): memory and process limits are kept by a watchdog every "
                "0.25 s, and CPU a bot uses in children the kernel reaps at once is not seen "
                "between its turns (docs/SECURITY.md, 'Limits')",
                "warning: " if os.environ.get(ENV_BASE) else "", why)
    else:
        LOG.debug("bot limits: %s", found.describe())
        _remove_stale(found.bases.values())
    return found
