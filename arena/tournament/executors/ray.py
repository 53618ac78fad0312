"""Running matches on a Ray cluster (``executor: ray``; the extra ``arena[ray]``).

``RayExecutor`` starts ``jobs`` long-lived Ray actors of one CPU each.  An
actor (``MatchActor``) holds a ``ProcessExecutor`` of one worker process,
hence one bot pool: bots are reused across matches as with local workers,
and all a worker does locally (time, memory and CPU limits, the sandbox,
killing bots) it does on the node, by the same code.  An actor gets its next
match as soon as it returns one (``ray.wait``) and each outcome is yielded
as it arrives, so the caller stores it at once, as with local workers.

A node that is lost (or an actor process killed) fails the calls of its
actors with a ``RayActorError``: such a match is played again on another
actor, up to ``MAX_ATTEMPTS`` times in all, and a replacement actor is
started, which takes work once Ray has placed it.  Every match depends on
its seed only, so the re-run gives what the lost run would have.

The head lost (its GCS), the nodes play on without it for a while, then
Ray's core ends this process with a log line of its own: the loop watches
the head's port (``rayjoin.HeadWatch``) and ends the run first, in one
line naming the head; what was stored stays, and the same command resumes.

The bot programs reach the nodes by a ``Shipment``: Ray uploads its
``root`` (the runtime environment's ``working_dir``; files matched by a
``.gitignore`` or ``.rayignore`` are left out) and each actor runs in the
unpacked copy.  Every path under ``root`` in a spec (the bots' directories,
absolute arguments, sandbox paths, the log directory) is moved to the copy
(``node.Relocation``), and the bots' stderr logs travel back with the
outcome to be written at the arena's own paths.  What needs to know bot
specs and results (moving paths, reading logs, checking the node's sandbox)
is the tournament layer's (``tournament.node``, ``tournament.worker``): this
module moves specs and outcomes as they are.  Without a shipment the paths are used
as they are: a file system shared by every node.

``close()`` lets each actor close its worker, which ends its bots;
``abort()`` kills the actors outright, upon which the kernel sends each
worker SIGTERM (PR_SET_PDEATHSIG), so it kills its bots as at a Ctrl-C.  An
arena killed outright takes its actors with it (Ray ends a dead driver's
actors), and with them every bot.
"""

from __future__ import annotations

import itertools
import os
import sys
import time
from collections import deque
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import shipping
from .assign import LOOKAHEAD, Assigner, PoolModel
from .local import EXEC, ProcessExecutor, WorkerError
from .node import LogShipper, Relocation, bounds, check_here, start_seconds
from .outcome import MatchFailure, Outcome
from .rayjoin import HeadWatch, Shipment, connect, import_ray, leave, one_line
from .raynodes import CHECK_MARGIN, as_on_the_node, check_nodes, here, overdue
from .worker import unplayable

if TYPE_CHECKING:
    from ...match.spec import MatchSpec

__all__ = ["RayExecutor", "MatchActor", "Shipment", "Relocation", "MAX_ATTEMPTS", "connect",
           "check_on_ray"]

MAX_ATTEMPTS = 3          # plays of one match whose actor is lost, before it fails
POLL_SECONDS = 1.0        # ray.wait's timeout: how often the loop looks up
STOP_SECONDS = 30.0       # for actors to close their workers after a complete run
MAX_FAILED_STARTS = 3     # actors in a row that die starting: the cluster cannot run arena
# Ray starts its workers at niceness 15 (its daemons come first), and the
# worker processes and bots an actor starts would inherit it: on a busy node
# they would lose the CPU to everything else, and bots would time out where
# they do not locally.  Ray's own job supervisor is started with this too.
NICENESS_ENV = {"env_vars": {"RAY_worker_niceness": "0"}}
@dataclass(frozen=True)
class Played:
    """What an actor returns for a match: its outcome, with the stderr logs
    (arena path -> bytes) when they were written on a copy of the files."""

    outcome: Outcome
    logs: tuple[tuple[str, bytes], ...] = ()


@dataclass(frozen=True)
class Refused:
    """This node cannot play the match as asked (one line: why)."""

    reason: str


class MatchActor:
    """A Ray actor: plays matches in its own worker process, as a local
    ``ProcessExecutor`` slot does.  ``head_root``: the arena's shipped
    directory, whose copy is this actor's working directory (None: shared paths)."""

    def __init__(self, head_root: str | None) -> None:
        as_on_the_node()        # before its worker starts: the bots inherit the worker's environment
        self.relocation = None if head_root is None else Relocation(head_root, os.getcwd())
        self.logs = None if self.relocation is None else LogShipper(self.relocation)
        # Ray places its actors (pinned, every one would take CPU 0), and an
        # actor has threads: its worker is exec'd, never forked.
        self.executor = ProcessExecutor(1, pin=False, start=EXEC)
        self.checked = False

    def node(self) -> tuple[str, str]:
        """Where this actor runs: its name for messages, its Ray id."""
        return here()

    def play(self, spec: MatchSpec) -> Played | Refused:
        if not self.checked:
            reason = unplayable(spec)
            if reason is not None:
                return Refused(f"Ray node {self.node()[0]}: {reason}")
            self.checked = True
        if self.relocation is not None:
            spec = self.relocation.spec(spec)
        outcomes = list(self.executor.run([spec]))
        if self.logs is None:
            return Played(outcomes[0])
        return Played(*self.logs.sent_back(outcomes[0]))

    def close(self) -> tuple[tuple[str, bytes], ...]:
        """Close the worker (its bots quit); the logs that grew meanwhile or
        since their match was sent (arena path -> bytes), to be written."""
        self.executor.close()
        return () if self.logs is None else self.logs.late()


@dataclass
class _Slot:
    """One actor; ``node`` (its name) and ``node_id`` are known once Ray has placed and started it."""

    actor: Any
    node: str | None = None
    node_id: str | None = None


@dataclass
class _Call:
    """A match sent to an actor: when, how long its result may take
    (``node.bounds``), and since when Ray has said it is ready on its node."""

    slot: _Slot
    spec: MatchSpec
    attempt: int
    sent: float = field(default_factory=time.monotonic)
    bounds: tuple[float, float] = (float("inf"), float("inf"))
    ready_at: float | None = None


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class RayExecutor:
    """Runs matches on ``jobs`` Ray actors (None: one per CPU of the cluster,
    at most ``most``) of the cluster at ``address`` (see ``connect``), with
    ``shipment`` copied to its nodes (None: shared paths).  ``notice`` gets a
    line for each match played again (default: stderr)."""

    def __init__(self, jobs: int | None, address: str | None = None, *, most: int | None = None,
                 shipment: Shipment | None = None, notice: Callable[[str], None] | None = None,
                 lookahead: int | None = None) -> None:
        self._ray = import_ray()
        self.shipment, self.notice = shipment, notice or _stderr
        # None: a tournament's schedule, read whole before the first match (every bot
        # checked on every node).  A number: the matches are read as actors come free,
        # at most this many waiting (``assign``), as the local executor reads them: a
        # league chooses each table from the results stored before it, and its
        # matches never end.
        self.lookahead = lookahead
        self._idle: deque[_Slot] = deque()
        self._starting: dict[Any, _Slot] = {}
        self._calls: dict[Any, _Call] = {}
        self._failed_starts = 0
        self._pool_models: dict[Hashable, PoolModel] = {}     # each actor's, for ``assign``
        self._avoid: set[str] = set()       # nodes whose results do not arrive: no actor is placed there again
        self._checked: set[str] | None = None   # the bots (seat names) every node has started; None: no check yet
        self._ours = connect(address, shipment)
        try:
            self._head = self._head_watch()
            if jobs is None:
                cpus = max(1, int(self._ray.cluster_resources().get("CPU", 1)))
                jobs = cpus if most is None else max(1, min(cpus, most))
            self.jobs = jobs
            self._class = self._ray.remote(MatchActor)
            for _ in range(jobs):
                self._start()
        except WorkerError:
            self.abort()
            raise
        except Exception as exc:  # noqa: BLE001 - Ray's own errors (an upload refused...): one line
            self.abort()
            raise WorkerError(f"cannot start Ray actors: {one_line(exc)}") from None
        except BaseException:
            self.abort()
            raise

    def _head_watch(self) -> HeadWatch | None:
        """The watch of the head's port; None where Ray does not say it (Ray Client's ``ray://``)."""
        try:
            return HeadWatch(self._ray.get_runtime_context().gcs_address)
        except Exception:  # noqa: BLE001 - a driver without a GCS client of its own: Ray's to watch
            return None

    def _start(self) -> None:
        root = None if self.shipment is None else self.shipment.root
        options: dict[str, Any] = {"num_cpus": 1, "max_restarts": 0, "runtime_env": NICENESS_ENV}
        if self._avoid:     # Ray's own labels: every node has its id as one
            options["label_selector"] = {"ray.io/node-id": f"!in({','.join(sorted(self._avoid))})"}
        slot = _Slot(self._class.options(**options).remote(root))
        self._starting[slot.actor.node.remote()] = slot

    def run(self, specs: Iterable[MatchSpec]) -> Iterator[Outcome]:
        # Each actor keeps its own bot pool: as in ProcessExecutor, an idle
        # actor gets the match its pool plays with the fewest new processes.
        source = iter(specs)
        # The node check's matches: all of a schedule, else the first few (a league's first table).
        first = list(source) if self.lookahead is None else list(itertools.islice(source, self.lookahead))
        if first:
            self._check(first)
        later = self._checked_as_read(source) if self.lookahead is not None else source
        todo = Assigner(itertools.chain(first, later), self.jobs,
                        LOOKAHEAD if self.lookahead is None else self.lookahead, pools=self._pool_models)
        retry: deque[tuple[MatchSpec, int]] = deque()
        more = True
        while True:
            while self._idle and (retry or more):
                slot = self._idle[0]
                if retry:
                    spec, attempt = retry.popleft()
                else:
                    nxt = todo.next_for(id(slot))
                    if nxt is None:
                        more = False
                        break
                    spec, attempt = nxt, 1
                self._idle.popleft()
                self._calls[slot.actor.play.remote(spec)] = _Call(slot, spec, attempt, bounds=bounds(spec))
            if not self._calls and not retry and not more:
                return
            waiting = [*self._calls, *self._starting]
            if not waiting:
                raise WorkerError("no Ray actor is left to play the remaining matches")
            done, _ = self._ray.wait(waiting, num_returns=1, timeout=POLL_SECONDS)
            if self._head is not None:
                self._head.check()      # a lost head: one line, before Ray's core ends this process
            for ref in done:
                if ref in self._starting:
                    self._started(ref)
                else:
                    yield from self._returned(ref, retry)
            yield from self._overdue(retry)

    def _check(self, specs: list[MatchSpec]) -> None:
        """``check_nodes`` of ``specs``: the first time always (the nodes'
        versions, even for built-in players alone), then only for a bot that
        no node has started yet."""
        names = {seat.name for spec in specs for seat in spec.seats if seat.bot is not None}
        if self._checked is None or names - self._checked:
            root = None if self.shipment is None else self.shipment.root
            check_nodes(specs, root, NICENESS_ENV, CHECK_MARGIN + start_seconds(specs))
            self._checked = names | (self._checked or set())

    def _checked_as_read(self, source: Iterator[MatchSpec]) -> Iterator[MatchSpec]:
        """A league's later matches, each handed on once every node has
        started its bots: a version handed in mid-league is checked there
        before its first match, as the first table's bots were, so that a
        node that cannot start it stops the run in one line instead of
        charging the version with a crash that is the node's."""
        for spec in source:
            self._check([spec])
            yield spec

    def _overdue(self, retry: deque[tuple[MatchSpec, int]]) -> Iterator[Outcome]:
        """Give up the matches whose results are overdue (``node.bounds``):
        a node that stalls, or whose result cannot reach this machine (a
        firewalled port), would otherwise keep the run waiting for ever."""
        if not self._calls:
            return
        ready, _ = self._ray.wait(list(self._calls), num_returns=len(self._calls), timeout=0, fetch_local=False)
        now = time.monotonic()
        for ref in ready:
            if self._calls[ref].ready_at is None:
                self._calls[ref].ready_at = now
        for ref, call in list(self._calls.items()):
            why = overdue(call.sent, call.ready_at, call.bounds)
            if why is not None:
                del self._calls[ref]
                yield from self._given_up(call, why, retry)

    def _given_up(self, call: _Call, why: str, retry: deque[tuple[MatchSpec, int]]) -> Iterator[Outcome]:
        """The node of ``call`` is not used again: its actors are ended and
        replaced elsewhere, and the match is played again on another node."""
        if call.slot.node_id is not None:
            self._avoid.add(call.slot.node_id)
            usable = {n["NodeID"] for n in self._ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU")}
            if usable <= self._avoid:
                raise WorkerError(f"no Ray node is left whose results reach this machine: the last, "
                                  f"{call.slot.node}, did not return match {call.spec.match_id} ({why})")
        for slot in [call.slot, *(s for s in self._idle if s.node_id == call.slot.node_id)]:
            self._retire(slot)
        match_id = call.spec.match_id
        if call.attempt >= MAX_ATTEMPTS:
            yield MatchFailure(match_id, f"no result from Ray node {call.slot.node} ({why}), {call.attempt} times")
            return
        self.notice(f"{match_id}: no result from Ray node {call.slot.node}: {why}; playing the match again "
                    f"on another node, and no more on that one")
        retry.appendleft((call.spec, call.attempt + 1))

    def _retire(self, slot: _Slot) -> None:
        """End ``slot``'s actor (its worker then kills its bots) and start another."""
        if slot in self._idle:
            self._idle.remove(slot)
        self._pool_models.pop(id(slot), None)
        try:
            self._ray.kill(slot.actor, no_restart=True)
        except Exception:  # noqa: BLE001, S110 - gone already
            pass
        self._start()

    def _started(self, ref: Any) -> None:
        slot = self._starting.pop(ref)
        try:
            slot.node, slot.node_id = self._ray.get(ref)
        except self._ray.exceptions.RayError as exc:
            self._failed_starts += 1
            if self._failed_starts >= MAX_FAILED_STARTS and not self._idle and not self._calls:
                raise WorkerError(f"Ray actors die as they start: {one_line(exc)}") from None
            self._start()
            return
        self._failed_starts = 0
        self._idle.append(slot)

    def _returned(self, ref: Any, retry: deque[tuple[MatchSpec, int]]) -> Iterator[Outcome]:
        call = self._calls.pop(ref)
        errors = self._ray.exceptions
        try:
            back = self._ray.get(ref)
        except errors.RayTaskError as exc:  # play() raised: an arena bug fails this match only
            self._idle.append(call.slot)
            yield MatchFailure.of(call.spec.match_id, exc.cause if isinstance(exc.cause, BaseException) else exc)
            return
        except errors.RayError as exc:  # the actor is gone: its node lost, its process killed
            yield from self._lost(call, exc, retry)
            return
        if isinstance(back, Refused):
            raise WorkerError(back.reason)
        if call.slot.node_id in self._avoid:
            self._retire(call.slot)         # its node's results may not arrive: see _given_up
        else:
            self._idle.append(call.slot)
        self._write_logs(back.logs)
        yield back.outcome

    def _lost(self, call: _Call, exc: BaseException, retry: deque[tuple[MatchSpec, int]]) -> Iterator[Outcome]:
        where = f" on {call.slot.node}" if call.slot.node else ""
        self._pool_models.pop(id(call.slot), None)
        try:
            self._ray.kill(call.slot.actor, no_restart=True)
        except Exception:  # noqa: BLE001, S110 - gone with its node, as expected
            pass
        self._start()
        match_id = call.spec.match_id
        if call.attempt >= MAX_ATTEMPTS:
            yield MatchFailure(match_id, f"its Ray actor was lost {call.attempt} times (last{where}: {one_line(exc)})")
            return
        self.notice(f"{match_id}: its Ray actor{where} was lost ({one_line(exc)}); playing the match again")
        retry.appendleft((call.spec, call.attempt + 1))

    def _write_logs(self, logs: tuple[tuple[str, bytes], ...]) -> None:
        for path, data in logs:
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "wb") as f:
                    f.write(data)
            except OSError as err:
                self.notice(f"cannot write the stderr log {path}: {err.strerror or err}")

    def _slots(self) -> list[_Slot]:
        return [*self._placed(), *self._starting.values()]

    def _placed(self) -> list[_Slot]:
        return [*self._idle, *(c.slot for c in self._calls.values())]

    def close(self) -> None:
        """Let every actor close its worker (ending its bots), then end them all
        (an actor Ray could not place yet, the cluster being short of CPUs, too)."""
        try:
            refs = [s.actor.close.remote() for s in self._placed()]
            if refs:
                done, _ = self._ray.wait(refs, num_returns=len(refs), timeout=STOP_SECONDS)
                for ref in done:
                    try:
                        self._write_logs(self._ray.get(ref))    # what bots wrote after their matches
                    except self._ray.exceptions.RayError:
                        pass  # an actor lost as it closed: its late logs with it
        finally:
            self.abort()

    def abort(self) -> None:
        """Kill every actor: each worker gets SIGTERM and kills its bots."""
        try:
            for slot in self._slots():
                try:
                    self._ray.kill(slot.actor, no_restart=True)
                except Exception:  # noqa: BLE001, S110 - already gone, or the cluster with it
                    pass
            self._idle.clear()
            self._starting.clear()
            self._calls.clear()
        finally:
            if self._ours:
                self._ours = False
                leave(self._ray)


# -- arena check on a node ------------------------------------------------------

def check_on_ray(bot: Any, address: str | None, *, time_control: Any = None, ship: bool = True) -> Any:
    """``arena check`` of ``bot`` (a ``BotSpec``) on a node of the Ray cluster
    at ``address``: its ``CheckReport``.  ``ship``: the bot's directory (else
    the current one) is shipped there, as a tournament's is; else the paths
    are the node's own.  ``time_control``: a ``TimeControl``, or None."""
    ray = import_ray()
    root = os.path.abspath(os.fspath(bot.cwd or os.getcwd()))
    shipment = None
    if ship:
        shipped = shipping.plan([root], [*bot.sandbox.read, *bot.sandbox.write])
        shipped.refuse_if_large()
        shipment = shipped.shipment
    ours = connect(address, shipment)
    try:
        task = ray.remote(num_cpus=1, max_retries=0, runtime_env=NICENESS_ENV)(check_here)
        return ray.get(task.remote(bot, root if ship else None, time_control))
    except ray.exceptions.RayTaskError as exc:
        cause = exc.cause if isinstance(exc.cause, BaseException) else exc
        raise WorkerError(f"the check failed on the Ray node: {one_line(cause)}") from None
    except ray.exceptions.RayError as exc:
        raise WorkerError(f"the check could not run on Ray: {one_line(exc)}") from None
    finally:
        if ours:
            leave(ray)
