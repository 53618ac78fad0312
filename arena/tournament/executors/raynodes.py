"""The nodes of a Ray cluster, as the Ray executor sees them: each one's
name for messages (``here``), the environment its bots get
(``as_on_the_node``), and the check of every node before the first match
(``check_nodes``): the same arena, Ray and Python versions as this machine,
and every bot program able to start there.  A node that differs, or cannot
start a bot, stops the run in one line naming it (and the bot), before a
match is charged to a bot for what is the node's fault."""

from __future__ import annotations

import os
import platform
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ... import __version__
from .local import WorkerError
from .rayjoin import import_ray, one_line

__all__ = ["here", "as_on_the_node", "NodeCheck", "check_node", "check_nodes", "versions", "CHECK_MARGIN"]

CHECK_MARGIN = 60.0     # seconds for a node's check beyond its bots' start-up times
# What Ray puts in the environment of its worker processes, which the bots
# would inherit: they must see the node's environment, as a local bot sees
# the arena's.  (Ray also sets OMP_NUM_THREADS to the task's one CPU when it
# is unset; a match has one CPU, so that one stays.)
RAY_WORKER_VARIABLES = ("RAY_JOB_ID", "RAY_RAYLET_PID", "RAY_LD_PRELOAD_ON_WORKERS", "SPT_NOENV",
                        "RAY_worker_niceness")


def here() -> tuple[str, str]:
    """This node's name for messages (its address, host name and the start
    of its Ray id: a test's nodes share the first two), and its Ray id."""
    ray = import_ray()
    node_id = ray.get_runtime_context().get_node_id()
    return f"{ray.util.get_node_ip_address()} ({socket.gethostname()}, node {node_id[:8]})", node_id


def as_on_the_node() -> None:
    """Take out of this worker's environment what Ray put there for it: the
    shipped folder's copy on ``PYTHONPATH`` (a bot's imports would find the
    tournament's files there), Ray's debugger as ``PYTHONBREAKPOINT``, and
    Ray's own variables; the bots started from here inherit the rest."""
    copy = os.getcwd()
    kept = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and os.path.abspath(p) != copy]
    if kept:
        os.environ["PYTHONPATH"] = os.pathsep.join(kept)
    else:
        os.environ.pop("PYTHONPATH", None)
    if os.environ.get("PYTHONBREAKPOINT", "").startswith("ray."):
        del os.environ["PYTHONBREAKPOINT"]
    for name in RAY_WORKER_VARIABLES:
        os.environ.pop(name, None)


@contextmanager
def _environment_kept() -> Iterator[None]:
    """``os.environ`` as it was, after: a task's Ray worker runs later tasks."""
    saved = dict(os.environ)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def versions() -> tuple[tuple[str, str], ...]:
    return (("arena", __version__), ("Ray", import_ray().__version__), ("Python", platform.python_version()))


@dataclass(frozen=True)
class NodeCheck:
    """What a node said: its name, its versions, and (bot, why) for each bot
    program that cannot start there."""

    node: str
    versions: tuple[tuple[str, str], ...]
    problems: tuple[tuple[str, str], ...]


def check_node(specs: list[Any], head_root: str | None) -> NodeCheck:
    """Runs on the node (a Ray task): its versions, and each bot of ``specs``
    started there, in the environment a match there gives it."""
    from .node import start_problems  # lazy: this task's alone, it loads the match runner on the node

    with _environment_kept():
        as_on_the_node()
        problems = start_problems(specs, head_root)
    return NodeCheck(here()[0], versions(), tuple(problems))


def check_nodes(specs: list[Any], head_root: str | None, runtime_env: dict[str, Any], seconds: float) -> None:
    """``check_node`` on every live node of the cluster that has CPUs, at
    once; WorkerError naming the first node that differs from this machine,
    cannot start a bot, fails, or has not answered within ``seconds``."""
    ray = import_ray()
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy  # lazy: Ray is optional

    # No CPU: the actors, placed already, may hold every one; the check is short.
    task = ray.remote(num_cpus=0, max_retries=0, runtime_env=runtime_env)(check_node)
    nodes = [n for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) >= 1]
    calls = {task.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False))
             .remote(specs, head_root): n for n in nodes}
    done, late = ray.wait(list(calls), num_returns=len(calls), timeout=seconds)
    mine = versions()
    for ref in done:
        try:
            report = ray.get(ref)
        except ray.exceptions.RayError as exc:
            raise WorkerError(f"Ray node {_named(calls[ref])}: arena's start check failed there: "
                              f"{one_line(_cause(exc))}") from None
        _refuse(report, mine)
    if late:
        raise WorkerError(f"Ray node {_named(calls[late[0]])} did not answer arena's start check within "
                          f"{seconds:.0f} s: can this machine reach it on every port Ray uses (docs/CLUSTER.md)?")


def _refuse(report: NodeCheck, mine: tuple[tuple[str, str], ...]) -> None:
    if report.versions != mine:
        theirs = ", ".join(f"{k} {v}" for k, v in report.versions)
        ours = ", ".join(f"{k} {v}" for k, v in mine)
        raise WorkerError(f"Ray node {report.node} runs {theirs}; this machine runs {ours}: install the same "
                          f"versions on every node")
    if report.problems:
        bot, why = report.problems[0]
        more = len(report.problems) - 1
        others = f" (and {more} other bot{'s' if more > 1 else ''})" if more else ""
        raise WorkerError(f"Ray node {report.node}: bot {bot} cannot start there: {why}{others}")


def _named(node: dict[str, Any]) -> str:
    return f"{node.get('NodeManagerAddress')} ({node.get('NodeManagerHostname')}, node {node['NodeID'][:8]})"


def _cause(exc: BaseException) -> BaseException:
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, BaseException) else exc


def overdue(sent: float, ready_at: float | None, bounds: tuple[float, float], now: Callable[[], float] = time.monotonic
            ) -> str | None:
    """Why a call sent at ``sent`` (ready on its node since ``ready_at``)
    is overdue under ``bounds`` (to play, to arrive), or None."""
    play, arrive = bounds
    if ready_at is not None and now() - ready_at > arrive:
        return f"its result, ready there, did not arrive within {arrive:.0f} s"
    if now() - sent > play:
        return f"it did not end within {play:.0f} s, its longest possible time"
    return None
