"""Joining a Ray cluster, or starting one of our own (``connect``), for
``RayExecutor`` and ``arena check --executor ray``; what a run checks
before it says anything (``check_address``: a head answers, this machine is
a node, the head takes its token); watching the head while a run plays
(``HeadWatch``); and keeping Ray's own output off the user's terminal
(``rays_output_aside``, and Ray's logger diverted by ``import_ray``).

A Ray of our own that fails or is interrupted half started (a SIGTERM or a
Ctrl-C while ``ray.init`` runs) is ended here, all of it: ``ray.init`` only
ends what it started at the interpreter's exit once it has got far enough to
know it.  Its daemons are this process's children; the raylet's agents are
the raylet's, and would outlive it orphaned, so while Ray starts this
process is their subreaper (``PR_SET_CHILD_SUBREAPER``): an agent whose
raylet is gone becomes its child, and is ended with the rest.
"""

from __future__ import annotations

import ctypes
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ... import logsetup
from .local import WorkerError

__all__ = ["connect", "check_address", "import_ray", "one_line", "REACH_SECONDS", "Shipment", "HeadWatch",
           "HEAD_LOST_SECONDS", "leave", "rays_output_aside"]

REACH_SECONDS = 10.0      # for a head's port to answer at all (_check_reachable)
# For the token check's child (_check_token): Ray's client gives up on a head
# that takes connections and never answers after 40 s, and the child's start
# (importing Ray, 1.4 s of CPU) took 13-15 s on a loaded 2-core machine.
TOKEN_SECONDS = 60.0
# The head's port refusing connections this long, the head is lost (its host
# answers: its GCS has gone); not answering at all (the network, or the
# host), after longer, as a network can come back within Ray's own bound.
# Both well under that bound (gcs_rpc_server_reconnect_timeout_s, 60 s by
# default), after which Ray's core ends this process with a log line of its
# own: by then the run must have stopped and said why (its clean-up,
# ``ray.shutdown``, took 5 s).
HEAD_LOST_SECONDS = 5.0
HEAD_SILENT_SECONDS = 30.0
PROBE_SECONDS = 1.0       # how often the head's port is tried, and for how long at most
STOP_SECONDS = 10.0       # for each process of a half-started Ray to end on a SIGTERM
STOP_ROUNDS = 5           # rounds of ending what is left (each round: orphans adopted meanwhile)
PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37
_TOKEN_ASKED: set[str] = set()    # heads asked already, and not refusing (``_check_token``)

@dataclass(frozen=True)
class Shipment:
    """The directory Ray copies to every node (``root``, absolute), with
    ``excludes`` (gitignore-style patterns relative to it: what is not
    shipped, see ``shipping``)."""

    root: str
    excludes: tuple[str, ...] = ()

    def runtime_env(self) -> dict[str, Any]:
        return {"working_dir": self.root, "excludes": list(self.excludes)}


def import_ray() -> Any:
    try:
        # lazy: optional (the ray extra), a missing one is a one-line error; ~0.6 s of CPU (measured)
        import ray
    except ImportError:
        raise WorkerError("the ray executor needs Ray on this machine: pip install 'arena[ray]'") from None
    logsetup.divert("ray")      # its warnings (a working_dir's .git, a token's set-up) into the log file
    return ray


@contextmanager
def rays_output_aside() -> Iterator[None]:
    """What Ray's C++ core writes on this process's stderr meanwhile (its
    log lines as it joins or leaves: "Failed to determine local IP via
    external connectivity" on a machine without a default route, a token's
    warnings) goes into the arena's log file if there is one, else nowhere.
    Only around Ray's calls that write so (``ray.init``, ``ray.shutdown``):
    stderr itself (file descriptor 2) is moved, and the arena's lines take
    the same way."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        target = os.open(logsetup.log_file() or os.devnull, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.dup2(target, 2)
        os.close(target)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def leave(ray: Any) -> None:
    """``ray.shutdown``, its own lines aside; the token of a Ray of our own
    (``_own_token``) gone with it."""
    with rays_output_aside():
        ray.shutdown()
    _drop_own_token()


TOKEN_VARIABLE = "RAY_AUTH_TOKEN"
_OWN_TOKEN: list[str] = []      # the token ``_own_token`` put in the environment, while it is there


def _own_token() -> None:
    """A Ray of our own runs with token authentication, as Ray starts a local
    one by default, but with a token of this run's in the environment (its
    daemons and workers inherit it; the bots' environment is an allow-list
    without it), not one Ray writes to ~/.ray/auth_token: that file, left
    behind, turns token authentication on for any later ``ray start --head``
    on this machine, whose workers then cannot join (issue 33).  Unless the
    user has chosen: RAY_AUTH_MODE, a token given, or that file there."""
    if any(os.environ.get(v) for v in ("RAY_AUTH_MODE", TOKEN_VARIABLE, "RAY_AUTH_TOKEN_PATH")):
        return
    if (Path.home() / ".ray" / "auth_token").exists():
        return
    _OWN_TOKEN[:] = [secrets.token_hex(32)]
    os.environ[TOKEN_VARIABLE] = _OWN_TOKEN[0]


def _own_start() -> set[int]:
    """Before a Ray of our own starts: its token (``_own_token``), and this
    process's children so far (what is started from here on is that Ray's)."""
    _own_token()
    return _children()


def _drop_own_token() -> None:
    if _OWN_TOKEN and os.environ.get(TOKEN_VARIABLE) == _OWN_TOKEN[0]:
        del os.environ[TOKEN_VARIABLE]
    _OWN_TOKEN.clear()


def connect(address: str | None, shipment: Shipment | None = None) -> bool:
    """Join the Ray cluster at ``address`` (None: ``RAY_ADDRESS``, else a new
    Ray on this machine), shipping ``shipment`` to its nodes, unless this
    process has joined one; True if it joined here (and must leave it:
    ``ray.shutdown``).  Ray ships a directory for a whole job only: a process
    that joined already must have given it (``ray.init(runtime_env=...)``)."""
    ray = import_ray()
    if ray.is_initialized():
        if shipment is not None and not ray.get_runtime_context().runtime_env.get("working_dir"):
            raise WorkerError(f"Ray was joined without the tournament's files: ray.init(runtime_env="
                              f"{{'working_dir': {shipment.root!r}}}) first, or use 'files: shared'")
        return False
    env = None if shipment is None else shipment.runtime_env()
    bootstrap = check_address(address)
    # ray.init puts in a SIGTERM handler of its own (sys.exit, after its core
    # has dumped a stack): the arena's goes back, so that a SIGTERM stops a
    # Ray run as a Ctrl-C does (clicommon.stop_signals; the abort ends the
    # actors, and with them the bots).
    main = threading.current_thread() is threading.main_thread()
    held = signal.getsignal(signal.SIGTERM) if main else None
    held_int = signal.getsignal(signal.SIGINT) if main else None
    # A Ray of our own that fails or is interrupted half started: its
    # processes are this one's children, started from here on, and while it
    # starts so are its daemons' orphans (see the module).
    before = _own_start() if bootstrap == "local" else None
    adopting = _subreaper(True) if before is not None else None
    try:
        try:
            try:
                with rays_output_aside():
                    ray.init(address=bootstrap, runtime_env=env, include_dashboard=False, log_to_driver=False,
                             configure_logging=False)
            finally:
                if held is not None:
                    signal.signal(signal.SIGTERM, _after_init(held, held_int))
        except Exception as exc:  # noqa: BLE001  Ray raises a plain Exception for a node that timed out starting
            where = f"cannot join the Ray cluster at {address}" if address else "Ray could not start here"
            if _authentication(exc):
                raise WorkerError(_refused_token(where)) from None
            if address is None and isinstance(exc, (ConnectionError, RuntimeError, ValueError, OSError)):
                where = "cannot join the Ray cluster"
            raise WorkerError(f"{where}: {one_line(exc)}") from None
        except SystemExit as exc:
            # A SIGTERM while Ray started (or retried a head that does not
            # answer) met Ray's handler: its exit, with the signal's number, would
            # end the command with status 15 and without its line.  The arena's
            # handler takes it instead, as it takes one a moment later.
            if callable(held) and exc.code == signal.SIGTERM:
                held(signal.SIGTERM, None)
            raise
    except BaseException:
        if before is not None:
            _end_half_started(ray, before)
            _drop_own_token()
        raise
    finally:
        if adopting is not None:
            _subreaper(adopting)
    return True


def check_address(address: str | None) -> str | None:
    """What ``ray.init`` is to be given for ``address`` (``_bootstrap``),
    once sure that a head answers there and this machine is a node of its
    cluster (WorkerError, one line, if not): a run calls it before it says
    anything, and ``connect`` again."""
    bootstrap = _bootstrap(address)
    given, named = (os.environ.get("RAY_ADDRESS"), " (RAY_ADDRESS)") if bootstrap is None else (bootstrap, "")
    _check_reachable(given, named)
    _check_node_here(given, named)
    _check_token(given, named, bootstrap)
    return bootstrap


def _refused_token(where: str) -> str:
    return (f"{where}: its token authentication refused this machine's token, or this machine has none: give it "
            f"the cluster's (RAY_AUTH_MODE=token with RAY_AUTH_TOKEN, or ~/.ray/auth_token; docs/CLUSTER.md)")


def _check_token(address: str | None, named: str, bootstrap: str | None) -> None:
    """Refuse a head whose token authentication refuses this machine, before
    the run says anything: ``ray.init`` finds it out 25 s later (measured),
    once the run has printed its header.  Ray's own GCS client asks the head
    once, with this machine's token as ``ray.init`` would find it, in a child
    process: it blocks uninterruptibly (40 s for a head that takes
    connections and never answers), and a Ctrl-C must still stop the run.
    Past ``TOKEN_SECONDS``, and for anything but a refused token, what is
    wrong is left to ``ray.init`` to say."""
    if not address or address in ("auto", "local") or address.startswith("ray://") or address in _TOKEN_ASKED:
        return
    probe = [sys.executable, "-c", f"import sys; from {__name__} import token_refused; "
             "sys.exit(3 if token_refused(sys.argv[1], sys.argv[2] == 'auto') else 0)",
             address, "auto" if bootstrap in (None, "auto") else "given"]
    try:
        refused = subprocess.run(probe, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, timeout=TOKEN_SECONDS).returncode == 3
    except (subprocess.TimeoutExpired, OSError):
        refused = False
    if refused:
        raise WorkerError(_refused_token(f"cannot join the Ray cluster at {address}{named}"))
    _TOKEN_ASKED.add(address)       # connect checks the address again: asking once is enough


def token_refused(address: str, found: bool) -> bool:
    """(In ``_check_token``'s child.)  Whether the head at ``address`` refuses
    this machine's token; ``found``: the address was found, not given, and (as
    in ``ray.init``) a token on file then turns authentication on."""
    try:
        from ray._private.authentication.authentication_token_setup import (  # lazy: Ray is optional
            maybe_enable_token_auth_if_token_available,
        )
        from ray._raylet import GcsClient  # type: ignore[attr-defined]
    except ImportError:
        return False    # another Ray: ray.init says it
    try:
        if found:
            maybe_enable_token_auth_if_token_available(warn_if_disabled=False)
        GcsClient(address=address)
    except Exception as exc:  # noqa: BLE001 - Ray's own errors: only a refused token is ours to name
        return _authentication(exc)
    return False


class HeadWatch:
    """Whether the head of the cluster this process joined still answers.
    Its GCS gone, Ray's driver waits in silence, then ends this process
    from its C++ core (exit status 1, a line of Ray's log, no word from the
    arena): the run loop asks ``check`` instead, which tries the head's
    port (a TCP connection, at most every ``PROBE_SECONDS``) and, once it
    has refused connections for ``HEAD_LOST_SECONDS`` (or not answered at
    all for ``HEAD_SILENT_SECONDS``), raises a WorkerError naming it."""

    def __init__(self, address: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.address, self._clock = address, clock
        self._tried = float("-inf")
        self._silent_since: float | None = None

    def check(self) -> None:
        now = self._clock()
        if now - self._tried < PROBE_SECONDS:
            return
        self._tried = now
        failed = _unanswered(self.address, PROBE_SECONDS)
        if failed is None:
            self._silent_since = None
            return
        if self._silent_since is None:
            self._silent_since = now
        bound = HEAD_LOST_SECONDS if isinstance(failed, ConnectionRefusedError) else HEAD_SILENT_SECONDS
        if now - self._silent_since >= bound:
            raise WorkerError(f"lost the Ray cluster's head at {self.address}: nothing has answered there for "
                              f"{bound:.0f} s ({_why(failed)}); the matches already finished are stored: "
                              f"run the same command again to resume once the head is up")


def _why(failed: OSError) -> str:
    return failed.strerror or str(failed) or type(failed).__name__


def _unanswered(address: str, seconds: float) -> OSError | None:
    """Why nothing answers at ``address`` (HOST:PORT, or ray://HOST:PORT)
    within ``seconds``, or None if something does (or it is not HOST:PORT)."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return None
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=seconds).close()
    except OSError as exc:
        return exc
    return None


def _subreaper(on: bool) -> bool | None:
    """Make this process the subreaper of its descendants, or stop (Linux's
    ``PR_SET_CHILD_SUBREAPER``); what it was before, or None where that cannot
    be done (the clean-up then finds only this process's own children)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        was = ctypes.c_int(0)
        if libc.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(was)) != 0:
            return None
        if bool(was.value) != on and libc.prctl(PR_SET_CHILD_SUBREAPER, int(on)) != 0:
            return None
    except (OSError, AttributeError):
        return None
    return bool(was.value)


def _after_init(held: Any, held_int: Any) -> Any:
    """The SIGTERM handler to put back in place of Ray's: the one ``held``
    before ``ray.init``, unless it was also SIGINT's (``held_int``, the
    arena's ``stop_signals``) and a Ctrl-C during init has since moved SIGINT
    to another one, the one that ignores every later signal while the
    command cleans up.  SIGTERM follows it: put back as it was, it would
    interrupt that clean-up (ending the half-started Ray, stopping the bots)
    at the next SIGTERM."""
    now_int = signal.getsignal(signal.SIGINT)
    if held is held_int and now_int is not held_int and callable(now_int):
        return now_int
    return held


def _proc(name: str) -> Iterator[tuple[str, str]] | None:
    """Each process's pid and its /proc/PID/``name`` file (Linux's /proc;
    None where there is none); processes gone meanwhile are skipped."""
    try:
        pids = [p for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return None

    def read() -> Iterator[tuple[str, str]]:
        for pid in pids:
            try:
                with open(f"/proc/{pid}/{name}", encoding="ascii", errors="replace") as f:
                    yield pid, f.read()
            except OSError:
                continue
    return read()


def _children() -> set[int]:
    """This process's children (Linux's /proc; elsewhere none are known)."""
    me = str(os.getpid())
    stats = _proc("stat")
    return set() if stats is None else {int(pid) for pid, stat in stats
                                        if stat.rsplit(")", 1)[1].split()[1] == me}


def _end_half_started(ray: Any, before: set[int]) -> None:
    """End the Ray that ``ray.init`` was starting here when it failed or was
    interrupted.  Ray ends what it started at the interpreter's exit only once
    init has got far enough to know it, and its daemons only die with this
    process by a SIGKILL, which leaves the raylet's agents running (still
    there a minute later in tests/test_ray.py).  So: ``ray.shutdown`` (all Ray
    knows of), then a SIGTERM to each process started since (the raylet then
    ends its agents), a SIGKILL to any left; and again for the orphans this
    process adopted meanwhile (an agent whose raylet ``ray.shutdown`` killed),
    until no new one is left."""
    try:
        leave(ray)
    except Exception:  # noqa: BLE001, S110 - a half-made Ray; what is left is ended below
        pass
    ended: set[int] = set()
    for _ in range(STOP_ROUNDS):
        started = _children() - before - ended
        if not started:
            return
        _stop(started)
        ended |= started


def _stop(pids: set[int]) -> None:
    """End each of ``pids`` (children of this process), the newest first:
    a SIGTERM, then a SIGKILL if it has not ended within ``STOP_SECONDS``;
    each reaped.  Newest first because a Ray process needs those started
    before it to end cleanly: a raylet or the autoscaler's monitor whose GCS
    has gone waits 30 s or more for it (measured), and a GCS whose raylet
    is still up does not end on a SIGTERM either."""
    for pid in sorted(pids, key=_started, reverse=True):
        _signal(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_SECONDS
        while not _reaped(pid):
            if time.monotonic() > deadline:
                _signal(pid, signal.SIGKILL)
                _reaped(pid, wait=True)
                break
            time.sleep(0.02)


def _started(pid: int) -> tuple[int, int]:
    """When ``pid`` started, in clock ticks since boot (/proc/PID/stat's
    22nd field; 0 once it has gone), then the pid itself."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19]), pid
    except (OSError, ValueError, IndexError):
        return 0, pid


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


def _reaped(pid: int, wait: bool = False) -> bool:
    try:
        return os.waitpid(pid, 0 if wait else os.WNOHANG)[0] == pid
    except ChildProcessError:
        return True       # reaped already (by the Popen that started it)


def _bootstrap(address: str | None) -> str | None:
    """What ``ray.init`` is given for ``address``.  Given no address (None),
    Ray joins ``RAY_ADDRESS``, else the cluster last started on this machine
    by ``ray start`` or a test's ``Cluster`` (its temporary directory's
    ``ray_current_cluster`` file, left behind by one killed); the arena then
    starts a Ray of its own, as documented: "local" makes Ray do just that.
    Joining that other cluster would put a run on someone else's machines, or
    hang retrying a head long gone or in another network namespace."""
    if address is None and not os.environ.get("RAY_ADDRESS"):
        return "local"
    return address


def _check_reachable(address: str | None, named: str = "") -> None:
    """Refuse a head that nothing answers at: given one, ``ray.init`` retries
    it for minutes on end (more than 5 seen) before it gives up, if it does.
    Only an address of the form HOST:PORT (or ray://HOST:PORT) is tried;
    "auto" and "local" are Ray's to find.  ``named``: where the address was given."""
    if not address or address in ("auto", "local"):
        return
    reason = _unanswered(address, REACH_SECONDS)     # None for what is not HOST:PORT: Ray says what is wrong
    if reason is not None:
        raise WorkerError(f"cannot join the Ray cluster at {address}{named}: nothing answers there "
                          f"({_why(reason)})") from None


def _authentication(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) is Ray's token authentication
    refusing this process: Ray's own message then starts "Failed to connect"."""
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            return False
        if type(seen).__name__ == "AuthenticationError" or "InvalidAuthToken" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _check_node_here(address: str | None, named: str = "") -> None:
    """Refuse to join a cluster from a machine that is not one of its nodes:
    a Ray driver needs a raylet of the cluster beside it, and without one
    Ray failed with a long traceback (shipping the files) or its core's
    fatal log.  Ray Client's ``ray://`` addresses are left to Ray, and so
    is a head on this machine (a loopback address): the head is a node."""
    if not address or address in ("auto", "local") or address.startswith("ray://"):
        return
    host = address.rpartition(":")[0].strip("[]")
    if host in ("localhost", "::1") or host.startswith("127.") or _raylet_here():
        return
    raise WorkerError(f"cannot join the Ray cluster at {address}{named} from this machine: no Ray node runs here, "
                      f"and arena runs on a node of the cluster: run it on the head, or run `ray start --address "
                      f"{address}` here first (docs/CLUSTER.md)")


def _raylet_here() -> bool:
    """Whether a Ray node's daemon (``raylet``) runs on this machine, as far
    as /proc shows (elsewhere: assumed, and Ray says what is wrong)."""
    names = _proc("comm")
    return names is None or any(comm.strip() == "raylet" for _, comm in names)


def one_line(exc: BaseException) -> str:
    """One line of a (Ray's often long) error message."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    text = lines[0] if lines else type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."
