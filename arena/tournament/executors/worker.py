"""A tournament worker process: plays the matches its arena sends, nothing else.

``ProcessExecutor`` forks each worker from the arena (``main(FD,
forked_from=...)`` in the child, after ``preload`` in the arena), or, where
forking is not safe, starts it as ``python -c "...; main(FD)"``: a fresh
interpreter that imports this module, hence the match runner, the process
layer, the engine and the reference players, and nothing of the command
line, the configuration reader, the store or the ranking (no click, yaml,
tabulate, numpy or trueskill).  Not multiprocessing's spawn: that would run
the ``arena`` script again in every worker (the whole CLI, twice the memory)
and start a resource-tracker process besides.

The worker talks to its arena over one socket (FD, see ``channel``): it
receives a pickled ``MatchSpec`` (an empty message: stop), plays it with its
own ``BotPool`` and sends back the pickled outcome, a ``MatchResult`` or a
``MatchFailure``.  It ends, closing its pool (which kills its bots), when
told to stop, when the socket closes (the arena is gone), on SIGINT (Ctrl-C)
or SIGTERM (the arena's ``abort``), and, by PR_SET_PDEATHSIG, when the arena
dies even by SIGKILL in the middle of a match.  Stopped by a signal, it
ends by that signal once its bots are stopped: a SIGTERM that was not the
arena's fails its match as "killed by SIGTERM", not as a clean exit.
"""

from __future__ import annotations

import ctypes
import gc
import os
import pickle
import signal
import sys
from typing import Any

from ...logsetup import configure_worker
from ...match.pool import BotPool
from ...match.runner import run_match
from ...match.spec import MatchSpec
from ...process.confine import affinity
from . import channel
from .outcome import STOP, MatchFailure, Outcome

PR_SET_PDEATHSIG = 1
PR_SET_NAME = 15
NAME = b"arena-worker"   # a forked worker's name in ps and /proc/PID/comm (its command line is the arena's)

__all__ = ["STOP", "MatchFailure", "Outcome", "play", "packed_outcome", "unplayable", "main"]


def preload() -> None:
    """Import what playing a match needs beyond this module (the players are
    imported by name, when a match seats one): in an arena about to fork
    workers, so that they share these modules rather than each import them."""
    from ...players import greedy, passive, random_player  # noqa: F401


def play(spec: MatchSpec, pool: BotPool) -> Outcome:
    """One match; an arena-side exception becomes a MatchFailure (Ctrl-C still propagates)."""
    try:
        return run_match(spec, pool)
    except Exception as exc:  # noqa: BLE001 - any arena bug fails this match only
        return MatchFailure.of(spec.match_id, exc)


def unplayable(spec: MatchSpec) -> str | None:
    """Why this machine cannot play ``spec`` as it asks (its bots' sandbox
    mode cannot run here), in one line; None when it can.  The arena resolved
    the mode on its own machine: a remote worker must not let a bot run with
    less isolation than that, nor let every bot fail to start."""
    from ...process.confine import sandbox  # only remote workers ask

    if any(s.bot is not None and s.bot.sandbox.mode == sandbox.BWRAP for s in spec.seats):
        try:
            sandbox.resolve(sandbox.BWRAP)
        except sandbox.SandboxUnavailable as exc:
            return str(exc)
    return None


def packed_outcome(task: bytes, pool: BotPool) -> bytes:
    """The outcome of the pickled spec ``task``, pickled here so that a result
    that cannot be pickled is a failure of its match, not a lost message."""
    try:
        spec = pickle.loads(task)
    except Exception as exc:  # noqa: BLE001 - the arena fails the match it sent
        return pickle.dumps(MatchFailure.of("", exc))
    outcome = play(spec, pool)
    try:
        return pickle.dumps(outcome)
    except Exception as exc:  # noqa: BLE001 - reported as this match's failure
        return pickle.dumps(MatchFailure.of(spec.match_id, exc))


# The signal that stopped this worker (None: none did): once its bots are
# stopped, the worker ends by it (``_end_by``), so that its arena, if it did
# not send it, reports "killed by SIGTERM" and not a clean exit.
_stopped_by: int | None = None


def _interrupt(signum: int, frame: Any) -> None:
    global _stopped_by
    _stopped_by = signum
    # Only the first signal interrupts: a Ctrl-C reaches the worker and the
    # arena's SIGTERM follows it, and a second KeyboardInterrupt raised inside
    # a match's clean-up (killing a bot that was starting, say) would cut it
    # short and leave that bot running.  A Python no-op rather than SIG_IGN:
    # a signal already caught but not yet handled would make Python raise
    # "Signal 15 ignored due to race condition" instead.
    signal.signal(signal.SIGINT, _ignore)
    signal.signal(signal.SIGTERM, _ignore)
    raise KeyboardInterrupt


def _ignore(signum: int, frame: Any) -> None:
    pass


def _die_with_parent() -> None:
    """Ask Linux to SIGTERM this worker when the arena dies, even by SIGKILL,
    so that the worker still kills its bots in the middle of a match."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass  # not Linux: the closed socket still ends an idle worker


def _forked() -> None:
    """What a worker forked from the arena sets apart from its arena."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_NAME, NAME)
    except (OSError, AttributeError):
        pass
    null = os.open(os.devnull, os.O_RDONLY)   # as an exec'd worker: stdin is not the arena's terminal
    os.dup2(null, 0)
    os.close(null)
    # The process's own streams, as an exec'd worker has: not whatever the
    # arena had put in their place (a test runner's capture, say).
    sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__


def main(fd: int, cpu: int | None = None, forked_from: int | None = None) -> None:
    """Serve matches on the socket ``fd`` until told to stop or the arena is
    gone; on ``cpu`` alone, with every bot it starts, unless None.
    ``forked_from``: the arena's pid, in a worker forked from it (which
    starts with SIGINT and SIGTERM blocked, until its handlers are set)."""
    signal.signal(signal.SIGTERM, _interrupt)
    # An arena that started with SIGINT ignored (nohup, a script's background
    # job) keeps it ignored, and so must its workers: a Ctrl-C at that
    # terminal reaches their process group too, and would fail their matches
    # while the arena plays on.  SIGTERM stays: it is how the arena stops them.
    if signal.getsignal(signal.SIGINT) != signal.SIG_IGN:
        signal.signal(signal.SIGINT, _interrupt)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    _die_with_parent()
    if forked_from is not None:
        if os.getppid() != forked_from:
            return   # the arena died before PR_SET_PDEATHSIG could tie this worker to it
        _forked()
    affinity.pin(cpu)
    configure_worker()      # the arena's -v and --log-file, passed in the environment
    # What start-up made is never walked by a full collection, as in a worker
    # forked after the arena's gc.freeze(): one walked every module's objects
    # (10-30 ms, about every 20 matches of 700 decisions).
    gc.freeze()
    pool = BotPool()
    try:
        while True:
            task = channel.receive(fd)
            if task == STOP:
                break
            channel.send(fd, packed_outcome(task, pool))
    except (KeyboardInterrupt, EOFError, OSError):
        pass  # stopped, or the arena is gone (its end of the socket closed)
    finally:
        # A second Ctrl-C, or the arena's SIGTERM after it, must not cut the
        # clean-up short: closing the pool is what kills this worker's bots.
        signal.signal(signal.SIGINT, _ignore)
        signal.signal(signal.SIGTERM, _ignore)
        pool.close()
        os.close(fd)
    if _stopped_by is not None:
        _end_by(_stopped_by)


def _end_by(signum: int) -> None:
    """End this process by ``signum``, as if its default action had been
    taken: what its exit status then says to whoever waits for it."""
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)    # not blocked: delivered before kill returns
