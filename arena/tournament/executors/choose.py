"""Which executor a tournament plays on: ``make(config, jobs, most)`` builds the one
its file asks for (``executor:``, or ``--executor`` on the command line); the Ray
executor is imported only when chosen: Ray is an optional extra.  Not in the
package's ``__init__``: a worker imports ``executors.worker``, which must not
load the configuration nor the executors."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Union

from ..config.model import RAY, SHIP, TournamentConfig
from .assign import LOOKAHEAD
from .cpus import job_count
from .local import Executor, MatchFailure, Outcome, ProcessExecutor, SerialExecutor, WorkerError, make_executor

if TYPE_CHECKING:  # Ray is optional: imported when chosen
    from .ray import RayExecutor
    from .shipping import Plan

__all__ = ["Executor", "MatchFailure", "Outcome", "ProcessExecutor", "SerialExecutor", "WorkerError",
           "make_executor", "make", "ship_plan", "AnyExecutor", "closed_after"]

AnyExecutor = Union[SerialExecutor, ProcessExecutor, "RayExecutor"]


def ship_plan(config: TournamentConfig) -> Plan:
    """What Ray copies to every node (``shipping``): every bot's folder and
    what its grants name, without the results, the tournament file and what
    the bots must not see.  WorkerError if the folders share only ``/``, or
    the files are too large to ship."""
    from .shipping import plan  # lazy: a Ray run's alone (it walks the bots' folders with Ray's pathspec)

    bots = [b for b in config.bots if b.command]
    folders = [os.fspath(b.dir or config.dir) for b in bots]
    grants = [os.fspath(p) for b in bots for p in (*b.sandbox.read, *b.sandbox.write)]
    hidden = [config.output, config.path.absolute(), config.dir / "arena-results", *config.also_hidden]
    try:
        shipped = plan(folders, grants, [os.fspath(p) for p in hidden])
    except WorkerError as err:
        raise WorkerError(f"{config.path}: executor: {err}") from None
    shipped.refuse_if_large()
    return shipped


def make(config: TournamentConfig, jobs: int | None, most: int,
         notice: Callable[[str], None] | None = None, say: Callable[[str], None] | None = None,
         lookahead: int | None = None) -> AnyExecutor:
    """The executor of ``config``: ``jobs`` in parallel (None: the executor's
    own default, all cores or all the cluster's CPUs), never more than ``most``.
    ``notice``: the executor's warnings; ``say``: what a Ray run ships;
    ``lookahead``: of how many coming matches a worker chooses (``assign``),
    and so how far ahead of the results the matches are read (None: a
    schedule's own, ``LOOKAHEAD`` locally, all of it on Ray)."""
    if config.executor.backend != RAY:
        return make_executor(min(jobs if jobs is not None else job_count(config.jobs), most), config.affinity,
                             LOOKAHEAD if lookahead is None else lookahead)
    # lazy: executors.ray loads the match runner and the codec (tests/test_lean_imports.py PLAYING)
    from .ray import RayExecutor

    shipment = None
    if config.executor.files == SHIP and any(b.command for b in config.bots):   # built-in players need no files
        shipped = ship_plan(config)
        if say is not None:
            say(shipped.line())
        shipment = shipped.shipment
    return RayExecutor(None if jobs is None else min(jobs, most), config.executor.address, most=most,
                       shipment=shipment, notice=notice, lookahead=lookahead)


@contextmanager
def closed_after(executor: AnyExecutor) -> Iterator[AnyExecutor]:
    """``executor``, closed after a complete run and aborted after anything
    else (Ctrl-C, a store error, a bug): then running matches are interrupted
    and their bots killed."""
    complete = False
    try:
        yield executor
        complete = True
    finally:
        if complete:
            executor.close()
        else:
            executor.abort()
