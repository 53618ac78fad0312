"""How long a run will take: the estimate ``arena run`` prints before it starts.

A match takes the engine's time plus, for each seat of a bot program, what
that bot spends: its decisions, and the time limits it runs into.  A bot
that times out costs its per-decision limit at each timeout (until its
strikes forfeit it), and one that never says 'ready' its start-up limit at
each match (a forfeited bot's next match starts a new process).  Those
limits, and slow bots, not the engine, make a class's run long: a flat 2 s
per match was 9 to 14 times short on classes whose slow or unflushed bots
timed out.

So each figure is measured where it can be:

- a bot that played in the matches already stored in the same results
  folder (a resumed run, a ``--rerun``) costs a match what it cost them:
  its decisions as timed, each timeout at the per-decision limit, each
  missed start at the start-up limit; the rest of a match (the engine,
  pipes, a busy machine) is what the stored matches took beyond that;
- a bot no stored match has timed is probed by the run before it plays
  (``probe_bots``: its start and first decisions, in its sandbox, and on
  to its ``DEEPER``-th while they took less than one decision's limit in
  all: a bot that turns slow only later in the game times out there, and
  its matches are counted at their strikes, each at the limit; counted
  from its first, prompt decisions, a class with two such bots was
  estimated at half the run's time);
- how many decisions a match asks of a seat depends on who sits at the
  table (a table that never goes down plays each hand to its end, 3 to 6
  times as long as one where greedy goes out): it is counted in matches of
  built-in players standing in for the table, on ``DEALS`` deals (one deal's
  count of a table of greedy players is anywhere from 0.7 to 1.5 times
  their mean), timed here (hundredths of a second each).  A bot program
  is stood in for by ``passive`` (the fallback moves a forfeited seat
  plays) when it runs into its limits; else by the built-in player that
  made every move it made in its probe (``passive`` or ``greedy``), if one
  did; else by ``random``.  How slow a bot is says nothing of how it plays:
  a class's slow bots that went down and out were counted as never going
  down, and their run estimated at 1.3 times what it took.

The sum is spread over the jobs (``pairing.schedule.estimate_seconds``).
"""

from __future__ import annotations

import random
import secrets
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..match.spec import TIMEOUT
from .config.model import TournamentConfig
from .executors.cpus import job_count
from .pairing.schedule import ScheduleEntry, estimate_seconds
from .preflight import bot_problems
from .results.rows import StoredMatch

if TYPE_CHECKING:
    from ..match.probe import Probe

# A bot program's decision, pipes and JSON included, and its start (an
# interpreter, once per process: shared by the matches a process plays),
# where nothing measured says otherwise: the shipped Python bots' mean
# decision is about 2 ms, and such a bot starts in 0.1-0.3 s.
PROGRAM_DECISION = 0.003
PROGRAM_START = 0.05
# Of a healthy bot's start, the share a match pays: a process plays several
# matches (a forfeited one is killed, and its next match starts a new one).
START_SHARE = 0.25
# A decision slower than this share of the limit makes a bot slow: the
# timed line names it as one that makes the run long.
SLOW_SHARE = 0.1
# A decision slower than this share of the limit is near it: on a busy
# machine such a bot times out and forfeits, and its matches end sooner
# than any estimate from its probe (benchmarks/estimate.py: 7 times sooner,
# bots at 60-70 % of their limit beside the suite).  The line says so.
NEAR_SHARE = 0.5
# A probed bot whose decisions take little is asked on, up to this many
# decisions (``match.probe._cheap``): enough to reach its second or third
# hand's plays, where a bot that turns slow later in the game times out.
DEEPER = 30
# The deals a kind of table is played on to count its decisions.
DEALS = 3


def seat_seconds(stats: Mapping[str, object], faults: Sequence[Mapping[str, object]], config: TournamentConfig) -> float:
    """What one stored seat cost its match: its answered decisions as timed,
    and each timeout at the limit it ran into (a missed start-up at the
    start-up limit, a decision at the per-decision limit, the bank once)."""
    count, mean, timeouts = stats.get("count") or 0, stats.get("mean") or 0.0, stats.get("timeouts") or 0
    assert isinstance(count, int) and isinstance(mean, float | int) and isinstance(timeouts, int)
    limits = config.time
    missed_start = sum(1 for f in faults if f.get("kind") == TIMEOUT and f.get("decision") is None)
    bank = (limits.bank_seconds or 0.0) if timeouts else 0.0
    return count * mean + timeouts * limits.per_decision_seconds + bank + missed_start * limits.startup_seconds


def probe_seconds(config: TournamentConfig, probe: Probe, decisions: float) -> float:
    """What a seat of a bot costs a match of ``decisions`` per seat, from its
    probe: a missed start its start-up limit; timeouts the per-decision
    limit each, at the rate seen, until its strikes forfeit it; answered
    decisions their mean time; a forfeited bot's start every match, a
    healthy one's a share of it."""
    limits = config.time
    if not probe.ready:
        return limits.startup_seconds if probe.missed_start else probe.startup_seconds
    mean = probe.decision_seconds / probe.decisions if probe.decisions else 0.0
    if not probe.timeouts:
        return decisions * mean + START_SHARE * probe.startup_seconds
    rate = probe.timeouts / (probe.decisions + probe.timeouts)
    strikes = 1 if config.faults.strict else config.faults.max_strikes
    played = min(decisions, strikes / rate)           # decisions until forfeited, if ever
    each = rate * limits.per_decision_seconds + (1 - rate) * mean
    return played * each + (limits.bank_seconds or 0.0) + probe.startup_seconds


def _slow(config: TournamentConfig, probe: Probe) -> bool:
    """A probe after which the bot's matches run long: it did not start, timed out, or is slow."""
    if not probe.ready or probe.timeouts:
        return True
    return bool(probe.decisions) and \
        probe.decision_seconds / probe.decisions > SLOW_SHARE * config.time.per_decision_seconds


def table_decisions(config: TournamentConfig, roles: Sequence[str], seed: int = 0) -> tuple[float, float]:
    """A match of the built-in players ``roles`` at the tournament's rules,
    timed: (its seconds, the decisions a seat made on average)."""
    # lazy, these three: the engine and players, for the estimate only (test_lean_imports' PLAYING)
    from ..players.registry import make_player  # lazy: as above
    from ..shanghai.actions import BUY, DRAW  # lazy: as above
    from ..shanghai.game import Game  # lazy: as above

    game = Game.seeded(config.rules, len(roles), seed)
    players = [make_player(role, random.Random(seed + i)) for i, role in enumerate(roles)]
    started = time.perf_counter()
    decisions = 0
    while (d := game.decision()) is not None:
        decisions += 1
        player, view = players[d.seat], game.view(d.seat)
        action = player.draw(view) if d.kind == DRAW else player.buy(view) if d.kind == BUY else player.play(view)
        game.apply(action, d.seat)
    return time.perf_counter() - started, decisions / len(roles)


@dataclass
class Estimate:
    """The seconds of each match of a run (``match``), from what is known of
    its bots: ``stored`` matches, and ``timed`` probes."""

    config: TournamentConfig
    stored: Sequence[StoredMatch] = ()
    timed: Mapping[str, Probe] = field(default_factory=dict)
    seed: int = 0
    _tables: dict[tuple[str, ...], tuple[float, float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.programs = {b.name for b in self.config.bots if b.command is not None}
        self.builtin = {b.name: b.builtin for b in self.config.bots if b.builtin is not None}
        self.measured, self.rest = self._from_stored()

    def _from_stored(self) -> tuple[dict[str, float], float | None]:
        """Each stored bot's mean cost per match, and what a match took beyond its bots'."""
        per_bot: dict[str, list[float]] = {}
        rest: list[float] = []
        for m in self.stored:
            spent = 0.0
            for seat, name in enumerate(m.bots):
                if name in self.programs and seat < len(m.decision_stats):
                    faults = [f for f in m.faults if f.get("seat") == seat]
                    cost = seat_seconds(m.decision_stats[seat], faults, self.config)
                    per_bot.setdefault(name, []).append(cost)
                    spent += cost
            rest.append(max(0.0, m.duration_seconds - spent))
        return {n: sum(c) / len(c) for n, c in per_bot.items()}, (sum(rest) / len(rest) if rest else None)

    def _role(self, name: str) -> str:
        """Who plays like bot ``name``, for how long its matches are."""
        if name in self.builtin:
            return self.builtin[name]
        probe = self.timed.get(name)
        if probe is None:
            return "random"
        if not probe.ready or probe.timeouts:
            return "passive"            # forfeited, its seat plays the fallback moves
        return probe.plays_like or "random"

    def table(self, seats: Sequence[str]) -> tuple[float, float]:
        """(engine seconds, decisions a seat) of a match at this table, the
        mean of ``DEALS`` deals, counted once per kind of table."""
        roles = tuple(sorted(self._role(name) for name in seats))
        if roles not in self._tables:
            counts = [table_decisions(self.config, roles, self.seed + deal) for deal in range(DEALS)]
            self._tables[roles] = (sum(c[0] for c in counts) / DEALS, sum(c[1] for c in counts) / DEALS)
        return self._tables[roles]

    def match(self, entry: ScheduleEntry) -> float:
        engine, decisions = self.table(entry.seats)
        total = engine if self.rest is None else self.rest
        for name in entry.seats:
            if name not in self.programs:
                continue
            if name in self.measured:
                total += self.measured[name]
            elif name in self.timed:
                total += probe_seconds(self.config, self.timed[name], decisions)
            else:
                total += decisions * PROGRAM_DECISION + PROGRAM_START
        return total


def unmeasured(config: TournamentConfig, entries: Sequence[ScheduleEntry], stored: Sequence[StoredMatch]) -> list[str]:
    """The bot programs that play in ``entries`` and in none of ``stored``:
    what the estimate guesses unless they are timed (``probe_bots``)."""
    seen = {name for m in stored for name in m.bots}
    playing = {name for e in entries for name in e.seats}
    return [b.name for b in config.bots if b.command is not None and b.name in playing and b.name not in seen]


def run_seconds(config: TournamentConfig, entries: Sequence[ScheduleEntry], jobs: int,
                stored: Sequence[StoredMatch] = (), timed: Mapping[str, Probe] | None = None) -> float:
    """The wall time of playing ``entries`` with ``jobs`` in parallel."""
    if not entries:
        return 0.0
    estimate = Estimate(config, stored, timed or {}, seed=entries[0].seed)
    return estimate_seconds(entries, estimate.match, jobs)


def probe_bots(config: TournamentConfig, names: Sequence[str], sandbox_mode: str, jobs: int,
               seed: int) -> dict[str, Probe]:
    """Each of ``names`` started as the run starts it (its sandbox, what it
    must not see) at a table of built-in players, on a deal of ``seed`` (not
    one of the tournament's), and timed (``match.probe``), ``jobs`` at a time."""
    from concurrent.futures import ThreadPoolExecutor  # lazy: only a run with new bots probes them

    from ..match import FaultPolicy, MatchSpec, SeatSpec  # lazy: playing (test_lean_imports' PLAYING)
    from ..match.probe import probe_bot  # lazy: playing (test_lean_imports' PLAYING)

    def one(name: str) -> Probe:
        others = [SeatSpec.builtin("greedy" if i % 2 else "random") for i in range(1, config.players)]
        spec = MatchSpec(f"probe-{name}", (config.seat_spec(name, sandbox_mode), *others), config.rules,
                         seed=seed, time=config.time,
                         faults=FaultPolicy(max_strikes=config.faults.max_strikes, strict=config.faults.strict,
                                            unstartable_forfeits=True))
        return probe_bot(spec, 0, deeper=DEEPER)

    before = set(threading.enumerate())
    try:
        with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(names)))) as pool:
            return dict(zip(names, pool.map(one, names)))
    finally:
        _threads_gone(before)


def _threads_gone(before: set[threading.Thread], seconds: float = 5.0) -> None:
    """Wait for the threads the probes left (a bot watchdog winding down)
    to end: the run then forks its workers, which it does only from a
    process with one thread (``executors.forked.can_fork``)."""
    deadline = time.monotonic() + seconds
    for thread in set(threading.enumerate()) - before:
        thread.join(max(0.0, deadline - time.monotonic()))


def timed_line(config: TournamentConfig, timed: Mapping[str, Probe], seconds: float) -> str:
    """The line a run prints once it has timed its bots: the estimate, and
    the bots that make it long."""
    slow = []
    for name, probe in timed.items():
        if probe.missed_start:
            slow.append(f"{name} sent no 'ready' within its {config.time.startup_seconds:g} s start-up")
        elif not probe.ready:
            slow.append(f"{name} failed its start")
        elif probe.timeouts:
            slow.append(f"{name} timed out {probe.timeouts} of {probe.decisions + probe.timeouts} decisions")
        elif _slow(config, probe):
            slow.append(_slow_words(config, name, probe.decision_seconds / max(1, probe.decisions)))
    why = f" ({'; '.join(slow)})" if slow else ""
    return f"timed each bot's start and first decisions: estimated {seconds / 60:.1f} min{why}"


def _slow_words(config: TournamentConfig, name: str, mean: float) -> str:
    limit = config.time.per_decision_seconds
    words = f"{name} took {mean:.2f} s a decision"
    if mean >= NEAR_SHARE * limit:
        words += (f", {mean / limit:.0%} of its {limit:g} s limit: on a busy machine it can time out "
                  f"and the run end sooner")
    return words


def time_bots(config: TournamentConfig, todo: Sequence[ScheduleEntry], stored: Sequence[StoredMatch],
              jobs: int | None, sandbox_mode: str, echo: Callable[[str], None]) -> None:
    """The bot programs that no stored match has timed, timed now (their
    start and first decisions: ``probe_bots``), and the estimate said again
    from what they took; those that cannot start are left out."""

    unstartable = {name for name, _ in bot_problems(config)}
    names = [name for name in unmeasured(config, todo, stored) if name not in unstartable]
    if not names:
        return
    jobs = job_count(config.jobs) if jobs is None else jobs
    timed = probe_bots(config, names, sandbox_mode, jobs, seed=secrets.randbits(63))
    echo(timed_line(config, timed, run_seconds(config, todo, jobs, stored, timed)))
