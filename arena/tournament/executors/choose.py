"""Which executor a tournament plays on: ``make(config, jobs, most)`` builds the one
its file asks for (``executor:``, or ``--executor`` on the command line); the Ray
executor is imported only when chosen: Ray is an optional extra.  Not in the
package's ``__init__``: a worker imports ``executors.worker``, which must not
load the configuration nor the executors."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Union

from ..config.model import RAY, SHIP, TournamentConfig
from .assign import LOOKAHEAD
from .cpus import job_count
from .local import Executor, MatchFailure, Outcome, ProcessExecutor, SerialExecutor, WorkerError, make_executor

if TYPE_CHECKING:  # Ray is optional: imported when chosen
    from .ray import RayExecutor

__all__ = ["Executor", "MatchFailure", "Outcome", "ProcessExecutor", "SerialExecutor", "WorkerError",
           "make_executor", "make", "ship_root", "AnyExecutor"]

AnyExecutor = Union[SerialExecutor, ProcessExecutor, "RayExecutor"]


def ship_root(config: TournamentConfig) -> str:
    """The directory Ray copies to every node: the deepest one holding the
    tournament file and every bot's directory.  WorkerError if that is ``/``."""
    places = [os.fspath(config.dir)] + [os.fspath(b.dir or config.dir) for b in config.bots if b.command]
    root = os.path.commonpath(places)
    if root == os.path.sep:
        raise WorkerError(f"{config.path}: executor: the tournament file and the bots' directories share no "
                          f"directory but /, which cannot be shipped to a Ray cluster; move them under one "
                          f"directory, or use 'files: shared' with the same paths on every node")
    return root


def make(config: TournamentConfig, jobs: int | None, most: int,
         notice: Callable[[str], None] | None = None, lookahead: int = LOOKAHEAD) -> AnyExecutor:
    """The executor of ``config``: ``jobs`` in parallel (None: the executor's
    own default, all cores or all the cluster's CPUs), never more than ``most``;
    ``lookahead``: of how many coming matches a local worker chooses (``assign``)."""
    if config.executor.backend != RAY:
        return make_executor(min(jobs if jobs is not None else job_count(config.jobs), most), config.affinity,
                             lookahead)
    # lazy: executors.ray loads the match runner and the codec (tests/test_lean_imports.py PLAYING)
    from .ray import NOT_SHIPPED, RayExecutor, Shipment

    shipment = None
    if config.executor.files == SHIP:
        root = ship_root(config)
        output = os.fspath(config.output)
        inside = os.path.commonpath([root, output]) == root
        excludes = NOT_SHIPPED + ((os.path.relpath(output, root),) if inside else ())
        shipment = Shipment(root, excludes)
    return RayExecutor(None if jobs is None else min(jobs, most), config.executor.address, most=most,
                       shipment=shipment, notice=notice)

