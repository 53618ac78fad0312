"""Starting a bot process: its environment, the sandbox, limits and readers.

``ProcessStart`` is the part of ``transport.PipeTransport`` that spawns the bot: it
resolves the spec's sandbox mode, starts the program directly or inside
bwrap (held until its namespace's first process has the resource limits:
``sandbox.Gates``), applies the limits, opens the pidfd, starts the stderr
reader and registers the process with the watchdog.  A program that cannot
be started becomes a ``BotStartupError`` naming what and why.
"""

from __future__ import annotations

import errno
import logging
import os
import signal
import subprocess
import tempfile
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import IO, TypeVar

from .confine import cgroups, sandbox
from .confine.limits import GROUP_SLACK_MB, WATCHDOG, apply_limits, tree_cpu_seconds
from .confine.procfs import kill_group, pid_namespace
from .confine.spec import MiB
from .confine.turns import TurnClock, cpus_of
from .errors import BotStartupError
from .exits import ProcessExits, emergency_kill
from .interrupts import interrupts_deferred
from .stderr import LazyLog, StderrReader
from .streams import StdoutReader

# The name these lines had before they moved here from ``bot``: log files
# (and filters on them) keep reading the same logger name.
LOG = logging.getLogger("arena.process.bot")

READY_WAIT = 2.0          # for the sandbox's first process to be past its set-up

_Self = TypeVar("_Self", bound="ProcessStart")

_WARNED: set[str] = set()


def _warn_once(message: str) -> None:
    """The fallback warning of ``auto``, once per process (callers that
    resolve the mode themselves, like the CLI, print it their own way)."""
    if message not in _WARNED:
        _WARNED.add(message)
        LOG.warning("%s", message)


class ProcessStart(ProcessExits):
    """The starting part of ``PipeTransport``; the attributes below (and those of
    ``ProcessExits``) are set by ``PipeTransport.__init__`` and ``start``."""

    stderr_log: str | os.PathLike[str] | None
    startup_seconds: float          # how long the bot may take to start (the sandbox's gate waits)
    turns_taken: Callable[[], int]  # its decisions so far, for its TurnClock (the owner's count)
    spawn_seconds: float | None
    _stdin: IO[bytes]               # the process's stdin, from start() on
    _scratch_dir: str | None        # this process's scratch (no sandbox)
    _has_pidfd: bool
    _turns: TurnClock | None        # held against its CPU time by the watchdog
    _cgroup: cgroups.BotCgroup | None   # its own cgroup, where the kernel keeps its limits

    def _stop_parked(self) -> None:  # PipeTransport's: the watchdog's call for a caught bot
        raise NotImplementedError

    def start(self: _Self) -> _Self:
        """Spawn the bot.  Raises ``BotStartupError`` if it cannot be started."""
        if self._proc is not None:
            raise RuntimeError(f"bot {self.name!r} already started")
        spec = self.spec
        self.containment = self._choose_containment()
        log_file = None
        if self.stderr_log is not None:
            os.makedirs(os.path.dirname(os.path.abspath(self.stderr_log)), exist_ok=True)
            log_file = LazyLog(self.stderr_log)     # owned by the stderr thread
        t0 = time.monotonic()
        try:
            if self.containment.mode == sandbox.BWRAP:
                proc = self._spawn_sandboxed()
            else:
                proc = self._spawn()
        except (OSError, BotStartupError) as exc:
            if log_file is not None:
                log_file.close()
            if isinstance(exc, BotStartupError):
                raise
            raise self._startup_error(exc) from exc
        self.spawn_seconds = time.monotonic() - t0
        self._proc = proc
        self._finalizer = weakref.finalize(self, emergency_kill, proc, self._wake, self.name)
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self._stdin = proc.stdin             # its fd is asked for at each write: it raises once closed
        os.set_blocking(proc.stdin.fileno(), False)
        try:
            if self.containment.mode != sandbox.BWRAP:
                apply_limits(proc.pid, spec)
                self._cgroup = self._own_cgroup(proc.pid, 0)
        except ProcessLookupError:
            pass            # already gone: reported as a crash on first use
        except OSError as exc:
            self._finalizer()
            if log_file is not None:
                log_file.close()
            raise BotStartupError(f"cannot apply resource limits to {spec.argv[0]!r}: {exc}",
                                  argv=spec.argv, bot=self.name) from exc
        try:
            pidfd: int | None = os.pidfd_open(proc.pid)
        except (AttributeError, OSError):      # no pidfd (old kernel): poll instead
            pidfd = None
        self._has_pidfd = pidfd is not None
        self._stderr = StderrReader(self.label, proc.stderr, self._wake, log_file,
                                    spec.stderr_max_bytes)
        self._stdout = StdoutReader(self.label, proc.stdout, pidfd, spec.max_line_bytes,
                                    self._stderr)
        self._stderr.start()
        self._watch(proc.pid, t0)
        LOG.debug("%s: started pid %d in %.1f ms (%s): %s", self.label, proc.pid,
                  self.spawn_seconds * 1000, self.containment.mode, " ".join(spec.argv))
        return self

    def _choose_containment(self) -> sandbox.Containment:
        """The sandbox this bot runs in (warning once when 'auto' falls back),
        once its working directory is known to exist; raises
        ``BotStartupError`` if either fails."""
        spec = self.spec
        if spec.cwd is not None and not os.path.isdir(spec.cwd):
            raise BotStartupError(f"cannot start {spec.argv[0]!r}: working directory "
                                  f"{os.fspath(spec.cwd)!r} does not exist",
                                  argv=spec.argv, bot=self.name)
        try:
            containment = sandbox.resolve(spec.sandbox.mode)
        except sandbox.SandboxUnavailable as exc:
            raise BotStartupError(str(exc), argv=spec.argv, bot=self.name) from exc
        if containment.warning and spec.sandbox.mode == sandbox.AUTO:
            _warn_once(containment.warning)
        return containment

    def _watch(self, pid: int, t0: float) -> None:
        """Start the turn clock (if guarded) and hand the process to the
        watchdog when it has a memory, process or turn limit to enforce."""
        spec = self.spec
        if spec.turn_guard:
            # Its first turn runs from the spawn to its 'ready': the start-up.
            group = self._cgroup
            root = self._sandbox_init or pid
            counter = group.cpu_seconds if group is not None else (lambda: tree_cpu_seconds(root))
            self._turns = TurnClock(t0, cpus_of(pid), self.turns_taken, counter)
        if spec.memory_mb is not None or spec.max_processes is not None or self._turns is not None:
            pidns = pid_namespace(self._sandbox_init) if self._sandbox_init else None
            private = ((self._sandbox_init, tuple(sandbox.private_mounts(spec.sandbox)))
                       if self._sandbox_init else None)
            WATCHDOG.register(pid, self.label, spec.memory_mb, self._kill_reasons.append,
                              pidns, spec.max_processes, self._turns,
                              weakref.WeakMethod(self._stop_parked) if self._turns is not None else None,
                              private, self._cgroup)

    def _own_cgroup(self, pid: int, extra_tasks: int) -> cgroups.BotCgroup | None:
        """A cgroup of its own for the bot whose first process is ``pid``
        (``cgroups``): made and joined before the bot runs (held at bwrap's
        --block-fd; unsandboxed, a few microseconds after its exec, the
        window ``apply_limits`` has too).  None where there is none: the
        watchdog keeps the limits then."""
        spec = self.spec
        found = cgroups.backend()
        if found is None or (spec.memory_mb is None and spec.max_processes is None
                             and not spec.turn_guard):
            return None
        memory = None if spec.memory_mb is None else (spec.memory_mb + GROUP_SLACK_MB) * MiB
        tasks = None if spec.max_processes is None else spec.max_processes + extra_tasks
        try:
            group = found.create(memory, tasks)
        except cgroups.CgroupError as exc:
            _warn_once(f"warning: {exc}; the watchdog keeps the bots' limits")
            return None
        try:
            group.attach(pid)
        except cgroups.CgroupError as exc:
            cgroups.release(group)
            if os.path.exists(f"/proc/{pid}"):     # else it is gone: a crash, reported on first use
                _warn_once(f"warning: {exc}; the watchdog keeps the bots' limits")
            return None
        return group

    def _environment(self) -> dict[str, str]:
        env = sandbox.bot_environment(os.environ, self.spec.env)
        scratch = self.spec.sandbox.scratch
        if scratch is not None:
            if self.containment is None or self.containment.mode != sandbox.BWRAP:
                # No sandbox to mount a private file system: a fresh directory
                # for this process, removed when it is closed.
                os.makedirs(scratch, mode=0o700, exist_ok=True)
                self._scratch_dir = tempfile.mkdtemp(prefix="process-", dir=scratch)
                scratch = self._scratch_dir
            env["ARENA_SCRATCH"] = scratch
        return env

    def _popen(self, argv: Sequence[str], cwd: str | os.PathLike[str] | None,
               env: Mapping[str, str], pass_fds: Sequence[int] = ()) -> subprocess.Popen[bytes]:
        # start_new_session: own session and process group, and no terminal
        # signals (Ctrl-C goes to the arena, which then closes its bots).
        # No preexec_fn, so CPython can use vfork(); close_fds keeps a bot
        # from inheriting the pipes of other bots (which would hide EOFs).
        return subprocess.Popen(
            list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, cwd=cwd, env=env, bufsize=0,
            close_fds=True, pass_fds=tuple(pass_fds), start_new_session=True)

    def _spawn(self) -> subprocess.Popen[bytes]:
        program = self.spec.argv[0]
        if "/" in program:
            # Refused here as in the sandbox's preflight: through env the CRLF
            # script would start and die with a message about shebang options.
            cwd = os.path.abspath(self.spec.cwd if self.spec.cwd is not None else os.getcwd())
            if sandbox.crlf_hint(os.path.join(cwd, program)) is not None:
                raise FileNotFoundError(errno.ENOENT, "No such file or directory", program)
        return self._popen(self.spec.argv, self.spec.cwd, self._environment())

    def _spawn_sandboxed(self) -> subprocess.Popen[bytes]:
        """Start the bot inside bwrap, held until its namespace's first
        process has the resource limits (see ``sandbox.Gates``)."""
        spec = self.spec
        cwd = os.path.abspath(spec.cwd if spec.cwd is not None else os.getcwd())
        env = self._environment()
        problem = sandbox.preflight(spec.argv, cwd, env, spec.sandbox)
        if problem is not None:
            raise problem
        policy = spec.sandbox
        if policy.tmp_mb is None and spec.memory_mb is not None:
            policy = policy.replace(tmp_mb=spec.memory_mb)
        if self.stderr_log is not None:      # the arena's logs are no business of the bot
            logs = os.path.dirname(os.path.abspath(self.stderr_log))
            policy = policy.replace(hide=(*policy.hide, logs))
        gates = sandbox.Gates()
        proc: subprocess.Popen[bytes] | None = None
        try:
            # Not interruptible until bwrap's first process is held or let go:
            # an interrupt is handed on when the block ends, in this try.
            with interrupts_deferred():
                assert self.containment is not None and self.containment.bwrap is not None
                argv = sandbox.command(self.containment.bwrap, spec.argv, cwd=cwd, env=env,
                                       policy=policy, gates=gates, sized=self.containment.sized)
                proc = self._popen(argv, cwd, env, pass_fds=gates.child_fds)
                gates.spawned()
                child = self._hold_and_release(proc, gates)
        except BaseException:
            if proc is None:
                gates.close(spawned=False)
            else:
                # Interrupted (a stopping worker's SIGTERM): bwrap may not have
                # its --die-with-parent yet, and its first process waits for it.
                kill_group(proc.pid, signal.SIGKILL)
                proc.wait()
            raise
        if child is None:
            kill_group(proc.pid, signal.SIGKILL)
            _out, err = proc.communicate(timeout=5.0)
            lines = err.decode("utf-8", "replace").strip().splitlines()
            why = lines[-1] if lines else f"bwrap exited with code {proc.returncode}"
            raise BotStartupError(f"cannot start {spec.argv[0]!r} in the sandbox: {why}",
                                  argv=spec.argv, bot=self.name)
        return proc

    def _hold_and_release(self, proc: subprocess.Popen[bytes], gates: sandbox.Gates) -> int | None:
        """Set the limits on the held sandbox and let the bot start (``Gates``);
        the pid of the sandbox's first process, or None if bwrap failed."""
        spec = self.spec
        try:
            child = gates.child_pid(self.startup_seconds)
            if child is not None:
                self._sandbox_init = child
                apply_limits(child, spec)
                self._cgroup = self._own_cgroup(child, 1)      # the sandbox's init is one task more
                wait = min(self.startup_seconds, READY_WAIT)
                if not gates.held(child, wait):
                    LOG.debug("%s: could not see the sandbox held; going on", self.label)
                gates.release()
                if not gates.ready(child, wait):
                    LOG.debug("%s: could not see the sandbox's init wait; starting anyway",
                              self.name)
                assert proc.stdin is not None
                proc.stdin.write(sandbox.GATE_LINE)
        except OSError as exc:
            child = None
            LOG.debug("%s: sandbox set-up failed: %s", self.label, exc)
        finally:
            gates.close(spawned=True)
        return child

    def _startup_error(self, exc: OSError) -> BotStartupError:
        cwd = os.path.abspath(self.spec.cwd if self.spec.cwd is not None else os.getcwd())
        what = sandbox.start_failure(self.spec.argv, cwd, exc)
        return BotStartupError(f"cannot start {self.spec.argv[0]!r}: {what}", argv=self.spec.argv,
                               bot=self.name)
