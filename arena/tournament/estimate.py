"""How long a run will take: the estimate ``arena run`` prints before it starts.

A match takes the engine's time plus, for each seat of a bot program, what
that bot spends: its decisions, and the time limits it runs into.  A bot
that times out costs its per-decision limit at each timeout (until its
strikes forfeit it), and one that never says 'ready' its start-up limit at
each match (a forfeited bot's next match starts a new process).  Those
limits, not the engine, make a class's run long: a flat guess per match
was 9 to 14 times short on classes whose slow or unflushed bots timed out.

So each figure is measured where it can be:

- from the matches already stored in the same results folder (a resumed
  run, a ``--rerun``): each bot's time per match, its timeouts and missed
  start-ups at the limits that cost them, and the rest of a match's time
  (the engine, the pipes, a busy machine) as it was;
- else the engine and the decisions a seat makes from one match of the
  built-in players at the tournament's table, timed here (a few tenths of
  a second), with a bot program's decision at ``PROGRAM_DECISION`` and its
  start at ``PROGRAM_START``.

The sum is spread over the jobs (``pairing.schedule.estimate_seconds``).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..match.spec import TIMEOUT
from .config.model import TournamentConfig
from .executors.cpus import job_count
from .pairing.schedule import ScheduleEntry, estimate_seconds
from .results.rows import StoredMatch

if TYPE_CHECKING:
    from ..match.probe import Probe

# A bot program's decision, pipes and JSON included, and its start (an
# interpreter, once per process: shared by the matches a process plays),
# where no stored match says otherwise: the shipped Python bots' mean
# decision is about 2 ms, and such a bot starts in 0.1-0.3 s.
PROGRAM_DECISION = 0.003
PROGRAM_START = 0.05


@dataclass(frozen=True)
class MatchCosts:
    """Seconds a match takes: ``base`` for the table (engine, pipes), and
    ``bots[name]`` more for each seat of a bot program ``name``; a bot not
    named costs ``default`` (a program) or nothing (a built-in player)."""

    base: float
    bots: Mapping[str, float]
    default: float
    programs: frozenset[str]
    default_decisions: float = 0.0      # the decisions a seat makes in a match, as measured

    def seat(self, name: str) -> float:
        if name in self.bots:
            return self.bots[name]
        return self.default if name in self.programs else 0.0

    def match(self, entry: ScheduleEntry) -> float:
        return self.base + sum(self.seat(name) for name in entry.seats)


def seat_seconds(stats: Mapping[str, object], faults: Sequence[Mapping[str, object]], config: TournamentConfig) -> float:
    """What one stored seat cost its match: its answered decisions as timed,
    and each timeout at the limit it ran into (a missed start-up at the
    start-up limit, a decision at the per-decision limit, the bank once)."""
    count, mean = stats.get("count") or 0, stats.get("mean") or 0.0
    assert isinstance(count, int) and isinstance(mean, float | int)
    limits = config.time
    missed_start = sum(1 for f in faults if f.get("kind") == TIMEOUT and f.get("decision") is None)
    timeouts = stats.get("timeouts") or 0
    assert isinstance(timeouts, int)
    bank = (limits.bank_seconds or 0.0) if timeouts else 0.0
    return count * mean + timeouts * limits.per_decision_seconds + bank + missed_start * limits.startup_seconds


def stored_costs(config: TournamentConfig, stored: Sequence[StoredMatch]) -> MatchCosts | None:
    """``MatchCosts`` as the stored matches played: None if there are none."""
    if not stored:
        return None
    programs = frozenset(b.name for b in config.bots if b.command is not None)
    per_bot: dict[str, list[float]] = {}
    rest: list[float] = []
    decisions: list[int] = []
    for m in stored:
        spent = 0.0
        for seat, name in enumerate(m.bots):
            if name not in programs or seat >= len(m.decision_stats):
                continue
            faults = [f for f in m.faults if f.get("seat") == seat]
            cost = seat_seconds(m.decision_stats[seat], faults, config)
            per_bot.setdefault(name, []).append(cost)
            if not m.forfeited[seat]:
                decisions.append(int(m.decision_stats[seat].get("count") or 0))
            spent += cost
        rest.append(max(0.0, m.duration_seconds - spent))
    # A forfeited seat's count says when it was forfeited, not how long a match is.
    typical = sum(decisions) / len(decisions) if decisions else probe(config)[1]
    return MatchCosts(base=sum(rest) / len(rest), bots={n: sum(c) / len(c) for n, c in per_bot.items()},
                      default=typical * PROGRAM_DECISION + PROGRAM_START, programs=programs,
                      default_decisions=typical)


def probe(config: TournamentConfig, seed: int = 0) -> tuple[float, float]:
    """One match of built-in players (greedy and random in turn) at the
    tournament's table and rules, timed: (its seconds, the decisions a seat
    made on average)."""
    import random

    from ..players.registry import make_player  # the engine: only when nothing stored says
    from ..shanghai.actions import BUY, DRAW
    from ..shanghai.game import Game

    game = Game.seeded(config.rules, config.players, seed)
    players = [make_player("greedy" if i % 2 == 0 else "random", random.Random(seed + i))
               for i in range(config.players)]
    started = time.perf_counter()
    decisions = 0
    while (d := game.decision()) is not None:
        decisions += 1
        player, view = players[d.seat], game.view(d.seat)
        action = player.draw(view) if d.kind == DRAW else player.buy(view) if d.kind == BUY else player.play(view)
        game.apply(action, d.seat)
    return time.perf_counter() - started, decisions / config.players


def probed_costs(config: TournamentConfig, seed: int = 0) -> MatchCosts:
    """``MatchCosts`` from ``probe``: the engine's time for the table, and
    each bot program's decisions at ``PROGRAM_DECISION``."""
    seconds, decisions = probe(config, seed)
    programs = frozenset(b.name for b in config.bots if b.command is not None)
    return MatchCosts(base=seconds, bots={}, default=decisions * PROGRAM_DECISION + PROGRAM_START,
                      programs=programs, default_decisions=decisions)


def unmeasured(config: TournamentConfig, entries: Sequence[ScheduleEntry], stored: Sequence[StoredMatch]) -> list[str]:
    """The bot programs that play in ``entries`` and in none of ``stored``:
    what the estimate guesses unless they are timed (``probe_bots``)."""
    seen = {name for m in stored for name in m.bots}
    playing = {name for e in entries for name in e.seats}
    return [b.name for b in config.bots if b.command is not None and b.name in playing and b.name not in seen]


def run_seconds(config: TournamentConfig, entries: Sequence[ScheduleEntry], jobs: int,
                stored: Sequence[StoredMatch] = (), timed: Mapping[str, Probe] | None = None) -> float:
    """The wall time of playing ``entries`` with ``jobs`` in parallel; bots
    ``timed`` by ``probe_bots`` cost what their probe says."""
    if not entries:
        return 0.0
    costs = stored_costs(config, stored) or probed_costs(config, entries[0].seed)
    if timed:
        decisions = costs.default_decisions
        costs = replace(costs, bots={**costs.bots, **{name: probe_seconds(config, probe, decisions)
                                                      for name, probe in timed.items()}})
    return estimate_seconds(entries, costs.match, jobs)


# Of a healthy bot's start, the share a match pays: a process plays several
# matches (a forfeited one is killed, and its next match starts a new one).
START_SHARE = 0.25


def probe_seconds(config: TournamentConfig, probe: Probe, decisions: float) -> float:
    """What a seat of a bot costs a match, from its probe: a missed start its
    start-up limit; timeouts the per-decision limit each, at the rate seen,
    until its strikes forfeit it; answered decisions their mean time; a
    forfeited bot's start every match, a healthy one's a share of it."""
    limits = config.time
    if not probe.ready:
        return limits.startup_seconds if probe.missed_start else probe.startup_seconds
    asked = probe.decisions + probe.timeouts
    mean = probe.decision_seconds / probe.decisions if probe.decisions else 0.0
    if not probe.timeouts:
        return decisions * mean + START_SHARE * probe.startup_seconds
    rate = probe.timeouts / asked
    strikes = 1 if config.faults.strict else config.faults.max_strikes
    played = min(decisions, strikes / rate)           # decisions until forfeited, if ever
    each = rate * limits.per_decision_seconds + (1 - rate) * mean
    return played * each + (limits.bank_seconds or 0.0) + probe.startup_seconds


def probe_bots(config: TournamentConfig, names: Sequence[str], sandbox_mode: str, jobs: int,
               seed: int) -> dict[str, Probe]:
    """Each of ``names`` started as the run starts it (its sandbox, what it
    must not see) at a table of built-in players, on a deal of ``seed`` (not
    one of the tournament's), and timed (``match.probe``), ``jobs`` at a time."""
    from concurrent.futures import ThreadPoolExecutor

    from ..match import FaultPolicy, MatchSpec, SeatSpec
    from ..match.probe import probe_bot

    def one(name: str) -> Probe:
        others = [SeatSpec.builtin("greedy" if i % 2 else "random") for i in range(1, config.players)]
        spec = MatchSpec(f"probe-{name}", (config.seat_spec(name, sandbox_mode), *others), config.rules,
                         seed=seed, time=config.time,
                         faults=FaultPolicy(max_strikes=config.faults.max_strikes, strict=config.faults.strict,
                                            unstartable_forfeits=True))
        return probe_bot(spec, 0)

    with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(names)))) as pool:
        return dict(zip(names, pool.map(one, names)))


def timed_line(config: TournamentConfig, timed: Mapping[str, Probe], seconds: float) -> str:
    """The line a run prints once it has timed its bots: the estimate, and
    the bots that make it long."""
    slow = []
    for name, probe in timed.items():
        if probe.missed_start:
            slow.append(f"{name} sent no 'ready' within its {config.time.startup_seconds:g} s start-up")
        elif probe.timeouts:
            slow.append(f"{name} timed out {probe.timeouts} of {probe.decisions + probe.timeouts} decisions")
        elif probe.decisions and probe.decision_seconds / probe.decisions > 0.1 * config.time.per_decision_seconds:
            slow.append(f"{name} took {probe.decision_seconds / probe.decisions:.2f} s a decision")
    why = f" ({'; '.join(slow)})" if slow else ""
    return f"timed each bot's start and first decisions: estimated {seconds / 60:.1f} min{why}"


def time_bots(config: TournamentConfig, todo: Sequence[ScheduleEntry], stored: Sequence[StoredMatch],
              jobs: int | None, sandbox_mode: str, echo: Callable[[str], None]) -> None:
    """The bot programs that no stored match has timed, timed now (their
    start and first decisions: ``estimate.probe_bots``), and the estimate
    said again from what they took; those that cannot start are left out."""
    from .preflight import bot_problems

    unstartable = {name for name, _ in bot_problems(config)}
    names = [name for name in unmeasured(config, todo, stored) if name not in unstartable]
    if not names:
        return
    jobs = job_count(config.jobs) if jobs is None else jobs
    timed = probe_bots(config, names, sandbox_mode, jobs, seed=secrets.randbits(63))
    echo(timed_line(config, timed, run_seconds(config, todo, jobs, stored, timed)))
