"""Turns: a bot computes while it has a request to answer, and not between.

A match plays on one CPU (``affinity``).  A bot that goes on computing after
its reply, in a thread or a child process, takes that CPU from the bot whose
turn it is: measured with a background thread that only counts, the other
bot's decisions took twice as long, so with a per-decision limit it would time
out where it otherwise would not.  That is one bot making another lose, and
no time limit of its own sees it.

So each bot has a ``TurnClock``: the wall time it has had requests to answer
(from the moment its process is spawned to its ``ready``, then from the
writing of each request to its reply).  The memory watchdog, which reads the
bot's processes every 0.25 s anyway, compares their CPU time with that.  On
one CPU a bot cannot use more CPU during its turns than they lasted; one that
used ``OFF_TURN_SLACK`` more within a scan was computing between its turns.
From then on its processes are stopped (SIGSTOP) after each of its replies,
and continued (SIGCONT) just before the arena next writes to it: it can
compute only on its own time.  Nothing else happens to it: it is no fault,
and a runtime that compiles or collects garbage in the background (a JVM,
node) only finds that work moved into its own turns.

On a loaded machine a turn lasts longer than the CPU the bot got in it:
it waits on the run queue for CPUs others have.  Held against wall time
alone, CPU used between turns hid in that wait.  So each scan also reads
what the bot's threads waited on the run queue (``procfs.thread_times``,
/proc/PID/task/TID/schedstat: per scan only) and takes the longest of their
waits from its turns' time, less one wait per turn for the wait after its
reply (``WAIT_PER_TURN`` at least; the turns are counted from the decision
stats kept anyway: nothing is added per decision).

Measured with ``benchmarks/turn_guard_load.py`` (the bot, the arena and a
CPU hog on one CPU; a bot computing 5 ms a turn, 20 ms between its turns;
tries of 12 s): a thread spinning between its turns is caught within 0.5 s
in 3 of 3 tries sandboxed and 3 of 3 not (0 of 3 before), one computing
10 % of the time in 3 of 3 and 3 of 3 (0 of 3 before), one computing 5 %
in none: a little between turns still hides in what each turn is allowed
for the wait after its reply.  Honest bots computing 5 or 20 ms a turn
were caught in none of 3 tries each.  In tournaments of
tests/bots/ponder_game.py (a thread spinning all the time) against the
demo bots, two CPU hogs on each CPU: caught in 23 of 27 matches at load
4-9 (0 of 18 before; the others were over within a scan or two), and in
27 of 27 at load 10-11 with a flat 3 ms a turn (5 of 27 before); no demo
bot was caught, there nor in 14 demo tournaments with one or two hogs on
each CPU.

Measured, not guessed (issue 30): on a loaded machine the comparison with
wall time above is a guess, and it flagged honest bots (the demo's js bot
in 3 of 9 matches).  So it now only makes a bot a ``suspect``; from then on
the thread that talks to the bot reads the bot's CPU counter (its cgroup's,
``cgroups``, about 2 us a read; else its process tree's) as each turn ends
and as the next starts, and the bot is flagged only on CPU measured
between its turns above ``MEASURED_SLACK`` / ``MEASURED_DEBT``: load slows
a bot's turns but adds nothing to its own CPU.  Only suspects pay for the
reads.  A single burst is never measured: it only makes the bot a suspect.

Stopping costs two signals and a look at the bot's processes per decision,
which is why only a bot caught computing between turns is stopped.  In the
sandbox every process of the bot is stopped, ``setsid()`` children included;
without it, its process group is.

Two ways round the per-scan slack are closed as well:

- A bot that computes a little all the time (5 % of the CPU, below the
  slack of one scan) runs up a debt: what it uses between turns beyond
  ``OFF_TURN_LEAK`` per scan is added up, and past ``OFF_TURN_DEBT`` it is
  caught just the same.
- After ``end`` (and ``quit``) a bot has ``OWN_TIME`` seconds to sum up the
  match; then its time is no longer its own.  A process kept for a later
  match waits in the pool meanwhile, while other matches play on its CPU:
  one that computes there is caught, and stopped where it waits (``parked``:
  the watchdog stops it, as no turn of its own will come to do so) until the
  pool gives it its next match.
"""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Callable, Mapping

from .procfs import pid_namespace, process_tree

LOG = logging.getLogger("arena.process.turns")     # its name before it moved to confine: log files keep it

# CPU a bot may use beyond its turns' wall time within one watchdog scan
# (0.25 s) before it is stopped between turns: two clock ticks, above what
# rounding the CPU times to ticks can make up.  And each turn counts a
# little longer than it lasted: a bot that has written its reply is often
# put aside by the arena reading it, and finishes the write and goes back to
# reading only after the turn has ended (10-40 us of a Python bot's CPU;
# 0.2 ms leaves room for more).
OFF_TURN_SLACK = 0.02
PER_TURN_SLACK = 0.0002
# Below the slack, CPU between turns beyond 2.5 ms a scan (1 % of a CPU) is
# added up, and 0.1 s of it is caught too: 5 % of a CPU in about 3 s.
OFF_TURN_LEAK = 0.0025
OFF_TURN_DEBT = 0.1
# What a bot waited on the run queue is taken from its turns' time, less
# one wait per turn, of this much at least: after its reply the arena
# reading it is often scheduled first, and the bot then waits to finish its
# write between its turns, behind whatever else is ready.  With a CPU hog on
# its CPU that happened after 25-45 % of the turns, 3-5 ms each time (about
# a time slice of the hog), 1-2 ms a turn on average; at 2 ms an honest bot
# that computes 20 ms a turn was caught once in three tries.
WAIT_PER_TURN = 0.003
# The exact stage (a suspect's CPU read as each turn ends and the next one
# starts): what it measured between turns is evidence, not a guess, and the
# thresholds are above what an honest runtime does there.  After its reply
# a bot finishes the write and reads again (10-40 us of a Python bot's CPU,
# node's event loop a little more): TAIL_PER_TURN a turn is its own.  More
# than MEASURED_SLACK within one scan (20 % of a CPU) is computing between
# turns; below it, what exceeds MEASURED_LEAK a scan (2 %) is added up, and
# MEASURED_DEBT of it is too: a bot computing 5 % of the time is caught in
# about 5 s.  Start-up is a turn (spawn to 'ready'), never measured here.
TAIL_PER_TURN = 0.0005
MEASURED_SLACK = 0.05
MEASURED_LEAK = 0.005
MEASURED_DEBT = 0.15
# Wall seconds after 'end' or 'quit' that are the bot's own to compute in.
OWN_TIME = 1.0
_CLK_TCK = os.sysconf("SC_CLK_TCK")
_TICK = 1 / _CLK_TCK


class TurnClock:
    """The time a bot has had to decide, kept by the thread that talks to it,
    and what the watchdog concluded from its CPU time.

    ``closed`` is the seconds of the turns that are over, ``since`` the start
    of the one under way (None between turns), ``until`` where that one ends
    by itself (own time after ``end``; None: when it is closed).  The owner
    thread adds to ``closed`` before it clears ``since``, and the watchdog
    thread reads ``since`` first: a scan in between counts a turn twice (too
    much time, never a bot wrongly caught), never not at all.

    Two stages (module doc): ``observe`` compares the bot's CPU with its
    turns' wall time, which on a loaded machine is a guess, and makes the bot
    a ``suspect``; from then on ``exact``: the owner thread reads the bot's
    CPU ``counter`` as each turn ends (``gap_start``) and as the next one
    starts (``gap_end``), and only what that measured between its turns
    gets it ``caught``."""

    __slots__ = ("closed", "since", "until", "cpus", "caught", "off_turn", "debt", "_base",
                 "_threads", "taken", "_taken", "counter", "exact", "suspect", "gap_from", "gaps",
                 "_epoch", "_high", "_expired", "_exact_taken", "_exact_debt")

    def __init__(self, opened: float | None, cpus: int = 1,
                 taken: Callable[[], int] | None = None,
                 counter: Callable[[], float] | None = None) -> None:
        self.closed = 0.0
        self.since = opened
        self.until: float | None = None
        self.cpus = max(1, cpus)      # CPUs the bot may run on: turns * cpus is the CPU it can use
        self.caught = False           # measured computing between turns: stopped between them from now on
        self.off_turn = 0.0           # CPU seconds measured between turns (exact stage)
        self.debt = 0.0               # small excesses added up (OFF_TURN_LEAK), first stage
        self._base: tuple[float, float] | None = None
        self._threads: Mapping[int, tuple[int, int, int]] = {}
        self.taken = taken            # how many turns it has taken (a count a new match may restart)
        self._taken = 0
        self.counter = counter        # the CPU seconds of all of the bot's tasks (cgroup, or its tree)
        self.suspect = False          # the first stage saw more CPU than its turns could hold
        self.exact = False            # the owner thread reads ``counter`` at each turn's ends
        self.gap_from: tuple[int, float] | None = None   # (epoch, counter) as the last turn ended
        self.gaps = 0.0               # CPU measured between turns, gaps closed by the owner thread
        self._epoch = 0               # a new one each time ``exact`` is switched on
        self._high = 0.0              # the most CPU between turns seen so far (never goes down)
        self._expired: tuple[float | None, float, float, float] = (None, 0.0, 0.0, 0.0)
        self._exact_taken = 0
        self._exact_debt = 0.0

    def open(self, at: float) -> None:
        """A turn starts at ``at`` (a turn still open goes on: counted up to ``at``)."""
        since = self.since
        if since is not None:
            until = self.until
            self.closed += max(0.0, (at if until is None else min(at, until)) - since)
            self.until = None
        elif self.exact:
            self.gap_end()
        self.since = at

    def own_time(self, at: float) -> None:
        """From ``at`` the bot may compute for ``OWN_TIME`` seconds (after
        ``end``, ``quit``), or until its next turn opens if that is sooner."""
        self.open(at)
        self.until = at + OWN_TIME

    def close(self, at: float) -> None:
        since = self.since
        if since is not None:
            until = self.until
            self.closed += max(0.0, (at if until is None else min(at, until)) - since) + PER_TURN_SLACK
            self.since = None
            self.until = None
            if self.exact:
                self.gap_start()

    def gap_start(self) -> None:
        """A turn has ended (owner thread, exact stage): the gap's CPU starts here."""
        counter = self.counter
        if counter is not None:
            self.gap_from = (self._epoch, counter())

    def gap_end(self) -> None:
        """A turn starts (owner thread, exact stage): what the bot used since
        the last one ended is CPU between its turns.  ``gaps`` is added to
        before ``gap_from`` is cleared, and the watchdog reads them the other
        way round: a scan in between misses the gap once, never counts it twice."""
        start, counter = self.gap_from, self.counter
        if start is not None and counter is not None and start[0] == self._epoch:
            self.gaps += max(0.0, counter() - start[1])
        self.gap_from = None

    def seconds(self, now: float) -> float:
        """Seconds of turns so far, the one under way up to ``now``."""
        since = self.since
        until = self.until
        closed = self.closed
        if since is None:
            return closed
        return closed + max(0.0, (now if until is None else min(now, until)) - since)

    def observe(self, cpu_seconds: float, now: float,
                threads: Mapping[int, tuple[int, int, int]] | None = None) -> float | None:
        """A watchdog scan: the bot's tasks had used ``cpu_seconds`` in all,
        and ``threads`` (``procfs.thread_times``) are its threads' CPU and
        run-queue wait in ns so far.  Returns the CPU seconds measured
        between its turns when this scan finds it ``caught``, else None."""
        if self.exact:
            self._observed(cpu_seconds, now)           # keeps the first stage's base current
            return self._measured(now)
        excess = self._observed(cpu_seconds, now, threads)
        if excess is None:
            return None
        self.suspect = True
        if self.counter is None:                       # nothing to measure with: the guess stands
            self.off_turn += excess
            self.caught = True
            return excess
        self._epoch += 1                               # stale gap starts no longer count
        if self.since is None:
            # Between turns now: this gap is measured from here.  Written
            # before ``exact``: an owner thread that opens a turn meanwhile
            # has not seen ``exact`` and leaves it, and its next close
            # replaces it (a scan adds a gap only while no turn is open).
            self.gap_from = (self._epoch, self.counter())
        self.exact = True
        self._exact_taken = self.taken() if self.taken is not None else 0
        return None

    def _observed(self, cpu: float, now: float,
                  threads: Mapping[int, tuple[int, int, int]] | None = None) -> float | None:
        """The first stage: CPU beyond what its turns could hold since the
        last scan when that is more than the slack, else None."""
        turns = self.seconds(now)
        base = self._base
        # A child that has died but is not reaped yet drops out of the sum until
        # its parent's counts take it in: the CPU seen never goes down here.
        self._base = (cpu if base is None else max(cpu, base[0]), turns)
        waited = self._waited(threads)
        if base is None:
            return None
        # The CPU it could have had in its turns: their wall time, less what
        # it waited on the run queue meanwhile (a loaded machine).
        excess = max(0.0, cpu - base[0]) - max(0.0, (turns - base[1]) * self.cpus - waited)
        if excess <= OFF_TURN_SLACK:
            # A little at a time adds up: only what stays under the leak is forgiven.
            # Credit for a scan that used less CPU than its turns lasted is
            # one clock tick at most: enough that the ticks' rounding evens
            # out, too little for time idled in its turns to hide much.
            self.debt = max(0.0, self.debt + max(excess, -_TICK) - OFF_TURN_LEAK)
            if self.debt <= OFF_TURN_DEBT:
                return None
            excess, self.debt = self.debt, 0.0
        return excess

    def _measured(self, now: float) -> float | None:
        """The exact stage: the CPU the counter measured between turns since
        the last scan, held against ``MEASURED_SLACK`` and, added up, against
        ``MEASURED_DEBT``.  Returns it when the bot is caught at this scan."""
        assert self.counter is not None
        cpu = self.counter()
        total = self.gaps + self._expired_cpu(cpu, now)        # ``gaps`` before ``gap_from``
        start = self.gap_from
        if start is not None and start[0] == self._epoch and self.since is None:
            total += max(0.0, cpu - start[1])
        used = max(0.0, total - self._high)
        self._high = max(self._high, total)
        taken = self.taken() if self.taken is not None else 0
        turns = taken - self._exact_taken if taken >= self._exact_taken else taken
        self._exact_taken = taken
        # What a bot does right after writing its reply (finish the write,
        # read again) comes after the turn's end: a little per turn is its own.
        excess = used - turns * TAIL_PER_TURN
        if self.caught:
            self.off_turn += used
            return None
        if excess <= MEASURED_SLACK:
            self._exact_debt = max(0.0, self._exact_debt + excess - MEASURED_LEAK)
            if self._exact_debt <= MEASURED_DEBT:
                return None
        self.off_turn += used + self._exact_debt
        self.caught = True
        return self.off_turn

    def _expired_cpu(self, cpu: float, now: float) -> float:
        """CPU used since a turn's own time ran out (``until``) with no reply
        to end it (a bot summing up after ``end``, then idle in a pool): from
        the first scan that sees it run out, while that turn lasts."""
        key, base, done, current = self._expired
        since, until = self.since, self.until
        if key is not None and since != key:           # that turn is over: keep what it used
            key, done, current = None, done + current, 0.0
        if since is not None and until is not None and now > until:
            if key is None:
                key, base, current = since, cpu, 0.0
            else:
                current = max(0.0, cpu - base)
        self._expired = (key, base, done, current)
        return done + current

    def _waited(self, threads: Mapping[int, tuple[int, int, int]] | None) -> float:
        """Seconds since the last scan in which the bot could not have the
        CPU in its turns: what the thread that waited longest on the run
        queue waited, less the wait after each reply (one wait of that
        thread's usual length, ``WAIT_PER_TURN`` at least).  Not the sum of
        its threads' waits: they wait at the same time (and for each other,
        when more are ready than it has CPUs)."""
        if threads is None:
            return 0.0
        taken = self.taken() if self.taken is not None else 0
        turns = taken - self._taken if taken >= self._taken else taken   # a new count: a new match
        self._taken = taken
        before, self._threads = self._threads, threads
        longest = 0.0
        for tid, (ran, waited, slices) in threads.items():
            then = before.get(tid)
            if then is not None and then[0] <= ran and then[1] <= waited and then[2] <= slices:
                waited -= then[1]
                slices -= then[2]
            # else a thread new since the last scan (or a reused id): all of it is new
            if waited > 0:
                usual = waited / 1e9 / max(1, slices)      # its waits' mean length
                longest = max(longest, waited / 1e9 - turns * max(WAIT_PER_TURN, usual))
        return longest


def cpus_of(pid: int) -> int:
    """How many CPUs ``pid`` may run on (1 if that cannot be read)."""
    try:
        return len(os.sched_getaffinity(pid))
    except OSError:
        return 1


class Pauser:
    """Stops a caught bot's processes after its replies and continues them
    before the arena writes to it again.  Used by the thread that talks to
    the bot only.

    In the sandbox the processes are found from its PID namespace's tree
    (``procfs.process_tree``) at each stop, bubblewrap's own two left alone,
    and held by pidfd until they are continued: a pid reused meanwhile is
    never signalled.  Without the sandbox the process group is signalled."""

    def __init__(self, name: str, pgid: int, sandbox_init: int | None) -> None:
        self.name = name
        self.pgid = pgid
        self.sandbox_init = sandbox_init
        self.stopped = False
        self._held: list[int] = []            # pidfds of the stopped processes
        self._namespace: int | None = None

    def stop(self) -> None:
        if self.stopped:
            return
        if self.sandbox_init is None:
            self.stopped = _signal_group(self.pgid, signal.SIGSTOP)
            return
        if self._namespace is None:
            self._namespace = pid_namespace(self.sandbox_init)
        keep = {self.pgid, self.sandbox_init}
        for info in process_tree(self.sandbox_init):
            if info.pid in keep:
                continue
            fd = _hold(info.pid, self._namespace)
            if fd is None:
                continue
            try:
                signal.pidfd_send_signal(fd, signal.SIGSTOP)
            except OSError:
                os.close(fd)
                continue
            self._held.append(fd)
        self.stopped = True

    def resume(self) -> None:
        if not self.stopped:
            return
        self.stopped = False
        if self.sandbox_init is None:
            _signal_group(self.pgid, signal.SIGCONT)
            return
        held, self._held = self._held, []
        for fd in held:
            try:
                signal.pidfd_send_signal(fd, signal.SIGCONT)
            except OSError:
                pass                # gone meanwhile (killed)
            finally:
                os.close(fd)


def _signal_group(pgid: int, sig: int) -> bool:
    try:
        os.killpg(pgid, sig)
    except OSError as exc:
        LOG.debug("cannot signal process group %d: %s", pgid, exc)
        return False
    return True


def _hold(pid: int, namespace: int | None) -> int | None:
    """A pidfd for ``pid`` if it is (still) a process of the bot's PID
    namespace: checked after the pidfd is held, so it cannot be a reused pid."""
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return None
    try:
        same = namespace is not None and os.stat(f"/proc/{pid}/ns/pid").st_ino == namespace
    except OSError:
        same = False
    if not same:
        os.close(fd)
        return None
    return fd
