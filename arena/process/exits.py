"""How a bot process ends: noticing, reaping, describing and cleaning up.

``ProcessExits`` is the part of ``transport.PipeTransport`` that deals with the end of the
bot's process: seeing that the group leader has exited without reaping it
(``waitid`` with ``WNOWAIT``), reaping it with its resource usage, turning
the exit status into a message, the ``BotCrashed`` failure of a bot that
died, and making sure the group, its pipes and the stderr reader thread are gone.
``emergency_kill`` is the finalizer of a ``PipeTransport`` that was never closed.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import time
import weakref
from collections.abc import Sequence

from .confine import cgroups, sandbox
from .confine.limits import WATCHDOG, cgroup_memory_reason
from .confine.procfs import (
    CHILDREN_LISTS,
    group_exists,
    group_members,
    kill_group,
    process_tree,
    signal_member,
)
from .confine.spec import BotSpec
from .errors import BotCrashed, BotFailure, describe_exit, excerpt
from .stderr import StderrReader, Wakeup
from .streams import EOF, EXIT, StdoutReader

LOG = logging.getLogger(__name__)

EXIT_WAIT = 1.0           # stdout/stdin closed: how long to wait for the exit status


def emergency_kill(proc: subprocess.Popen[bytes], wake: Wakeup, name: str) -> None:
    """Finalizer (garbage collection / interpreter exit) of a PipeTransport that was
    never closed.  Holds no reference to the PipeTransport itself."""
    if proc.returncode is None:
        LOG.debug("%s: not closed, killing process group %d", name, proc.pid)
        WATCHDOG.unregister(proc.pid)
        kill_group(proc.pid, signal.SIGKILL)
        try:
            proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            LOG.warning("%s: pid %d did not die after SIGKILL", name, proc.pid)
    wake.set()


# How runtimes report a file that is not there (Python, C, Node, Java).
_MISSING_FILE = ("No such file or directory", "FileNotFoundError", "ENOENT", "FileNotFoundException")
# A quoted absolute path in that message: the working directory has nothing to do with it.
_ABSOLUTE = re.compile(r"""['"]/[^'"]*['"]""")


class ProcessExits:
    """The process-ending part of ``PipeTransport``; the attributes below are set by
    ``PipeTransport.__init__`` and ``start``."""

    name: str
    label: str      # in log lines (``PipeTransport.relabel``)
    spec: BotSpec
    returncode: int | None
    exit_description: str | None
    cpu_seconds_used: float | None
    peak_rss_mb: float | None
    _proc: subprocess.Popen[bytes] | None
    _wake: Wakeup
    _stdout: StdoutReader | None
    _stderr: StderrReader | None
    _finalizer: weakref.finalize | None

    @property
    def stderr_tail(self) -> str:  # PipeTransport reads it from its stderr reader
        raise NotImplementedError
    _reaped: bool
    _failure: BotFailure | None
    _kill_reasons: list[str]
    containment: sandbox.Containment | None
    _sandbox_init: int | None
    _cgroup: cgroups.BotCgroup | None

    # ----------------------------------------------------------- processes
    @property
    def _sandboxed(self) -> bool:
        return self.containment is not None and self.containment.mode == sandbox.BWRAP

    def _signal_bot(self, sig: int) -> None:
        """Signal the bot's processes.  In the sandbox, not bwrap's own two:
        they would die at once and take the bot with them, with no chance to
        handle the signal."""
        assert self._proc is not None
        if not self._sandboxed:
            kill_group(self._proc.pid, sig)
            return
        keep = {self._proc.pid, self._sandbox_init}
        for pid in self._sandbox_members():
            if pid not in keep:
                signal_member(pid, self._proc.pid, sig)

    def _sandbox_members(self) -> list[int]:
        """The sandboxed bot's processes with bwrap's: from the sandbox's own
        process tree (every process of its PID namespace) where the kernel
        lists children, instead of reading every process of the host."""
        assert self._proc is not None
        init = self._sandbox_init
        if init is None or not CHILDREN_LISTS:
            return group_members(self._proc.pid)
        return [self._proc.pid] + [p.pid for p in process_tree(init) if p.state not in "ZX"]

    def _leader_exited(self) -> bool:
        """Has the main process exited?  Does not reap it (WNOWAIT)."""
        if self._reaped:
            return True
        assert self._proc is not None
        try:
            info = os.waitid(os.P_PID, self._proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True
        return info is not None

    def _wait_leader(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        pause = 0.001
        while not self._leader_exited():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self._pause_for_exit(min(pause, remaining))
            pause = min(pause * 2, 0.02)
        return True

    def _pause_for_exit(self, seconds: float) -> None:
        time.sleep(seconds)

    def _reap(self) -> None:
        """Collect the exit status.  Only call once the leader is dead or killed."""
        if self._reaped:
            return
        proc = self._proc
        assert proc is not None
        if self._finalizer is not None:
            self._finalizer.detach()
        WATCHDOG.unregister(proc.pid)
        group = self._cgroup
        if group is not None and not self._kill_reasons:
            if group.oom_kills():
                self._kill_reasons.append(cgroup_memory_reason(group.memory_bytes))
            elif refused := group.refused_tasks():
                self._kill_reasons.append(f"process limit reached: the kernel refused {refused} new "
                                          f"process(es) or thread(s), limit {group.tasks}")
        try:
            _pid, status, usage = os.wait4(proc.pid, 0)
        except ChildProcessError:            # reaped behind our back: status lost
            returncode = proc.returncode
        else:
            returncode = os.waitstatus_to_exitcode(status)
            proc.returncode = returncode     # so Popen never waits for it again
            if self._sandboxed:
                # bwrap's exit code stands for the bot's; its usage is bwrap's
                # own (its init is not reaped by it), so the bot's is unknown.
                returncode = sandbox.exit_code(returncode)
            else:
                self.cpu_seconds_used = usage.ru_utime + usage.ru_stime
                self.peak_rss_mb = usage.ru_maxrss / 1024      # KiB on Linux
        self._reaped = True
        if group is not None:
            self._cgroup = None
            cgroups.release(group)      # what is left in it is killed; removed once empty
        self.returncode = returncode
        self.exit_description = self._describe_exit()
        LOG.debug("%s: pid %d %s", self.label, proc.pid, self.exit_description)

    def _describe_exit(self) -> str:
        if self.returncode is None:
            return "exit status unknown"
        text = describe_exit(self.returncode)
        spec = self.spec
        if self._kill_reasons:
            return f"{text}: {self._kill_reasons[0]}"
        sig = -self.returncode
        cpu = self.cpu_seconds_used
        if spec.cpu_seconds is not None and (
                sig == signal.SIGXCPU
                or (sig == signal.SIGKILL and cpu is not None and cpu >= spec.cpu_seconds)):
            return f"{text}: CPU time limit of {spec.cpu_seconds} s exceeded"
        if spec.memory_mb is not None and self.returncode != 0:
            if self.peak_rss_mb is None:          # not measured (sandbox): a hint only
                return f"{text} (memory limit {spec.memory_mb} MB)"
            if self.peak_rss_mb >= 0.8 * spec.memory_mb:
                return (f"{text} (peak memory {self.peak_rss_mb:.0f} MB, "
                        f"memory limit {spec.memory_mb} MB)")
        return text

    def _kill_and_reap(self) -> None:
        if not self._reaped:
            assert self._proc is not None
            kill_group(self._proc.pid, signal.SIGKILL)
            self._reap()

    def _died(self, cause: str, said: Sequence[str] = ()) -> BotCrashed:
        """The bot closed stdout (EOF), its main process exited (EXIT) or it
        closed stdin ("stdin").  Kill what is left of its group, collect the
        exit status and return the failure (sticky).  ``said``: the lines it
        wrote on stdout last, quoted in the message (a runtime that cannot
        start prints its error there)."""
        exited = self._wait_leader(0.0 if cause == EXIT else EXIT_WAIT)
        self._kill_and_reap()
        if self._stderr is not None:
            self._stderr.join(timeout=0.5)   # let it read the last words (traceback)
        tail = self.stderr_tail
        if exited:
            message = self.exit_description or "exited"
            returncode = self.returncode
        else:
            message = f"closed its {'stdout' if cause == EOF else 'stdin'} (killed)"
            returncode = None
        if said:
            message += f'; stdout: "{excerpt(" | ".join(said))}"'
        last = [line for line in tail.splitlines() if line.strip()]
        if last:
            message += f"; stderr: {excerpt(last[-1])}"
            if any(word in last[-1] for word in _MISSING_FILE) and not _ABSOLUTE.search(last[-1]):
                # Most often a file opened by a relative path, next to the
                # bot's program but not in the directory it was started in.
                cwd = os.path.abspath(self.spec.cwd if self.spec.cwd is not None else os.getcwd())
                message += f"; relative paths start from its working directory, {cwd}"
        exc = BotCrashed(message, bot=self.name, returncode=returncode, stderr_tail=tail,
                         stdout_first=said[0] if said else None)
        self._failure = exc
        LOG.debug("%s: crashed: %s", self.label, message)
        return exc

    def _stdout_abandoned(self) -> bool:
        """Whether a sandboxed bot has closed its stdout: no process of it
        holds the pipe any more.  bwrap and the sandbox's first process keep
        a copy of the pipe for their own lives, so its end of file never
        comes.  False when it cannot be told (no children lists, a process
        whose descriptors cannot be read): the bot is judged as before."""
        init = self._sandbox_init
        if not self._sandboxed or init is None or not CHILDREN_LISTS or self._reaped:
            return False
        assert self._proc is not None and self._proc.stdout is not None
        try:
            pipe = f"pipe:[{os.fstat(self._proc.stdout.fileno()).st_ino}]"
        except (OSError, ValueError):
            return False
        bot = [p.pid for p in process_tree(init) if p.pid != init]
        if not bot:
            return False        # nothing but init: the bot's exit is on its way
        for pid in bot:
            try:
                fds = os.listdir(f"/proc/{pid}/fd")
            except FileNotFoundError:
                continue        # gone meanwhile
            except OSError:
                return False
            for fd in fds:
                try:
                    if os.readlink(f"/proc/{pid}/fd/{fd}") == pipe:
                        return False
                except OSError:
                    continue
        LOG.debug("%s: no process of the bot holds its stdout", self.label)
        return True

    def _wait_group_gone(self, timeout: float) -> list[int]:
        """SIGKILLed processes take a moment to die: wait while the group has
        live members, and return those left.  An empty group (most bots',
        once their only process is reaped) is told by a signal, not by
        reading every process of the host (52 ms with 1,000 on it)."""
        assert self._proc is not None
        deadline = time.monotonic() + timeout
        while group_exists(self._proc.pid):
            left = group_members(self._proc.pid)      # zombies are not left
            if not left or time.monotonic() >= deadline:
                return left
            time.sleep(0.005)
        return []

    def _close_stdin(self) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.close()
        except OSError as exc:
            LOG.debug("%s: closing stdin: %s", self.label, exc)

    def _stop_readers(self) -> None:
        if self._stdout is not None:
            self._stdout.close()       # no thread: stdout is read by the owner's thread
        readers = [t for t in (self._stderr,) if t is not None]
        for t in readers:          # the group is dead: EOF comes at once, stderr gets drained
            t.join(timeout=1.0)
        self._wake.set()
        for t in readers:
            t.join(timeout=1.0)
        if any(t.is_alive() for t in readers):
            LOG.warning("%s: stderr reader thread still blocked; a process outside its group "
                        "holds its pipes", self.name)
            return
        assert self._proc is not None
        for stream in (self._proc.stdout, self._proc.stderr):
            if stream is not None:
                stream.close()
