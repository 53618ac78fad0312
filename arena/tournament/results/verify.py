"""``arena verify RESULTS``: every stored result re-derived from its record,
and every match the tournament should hold stored.

A published table is only as good as the database behind it, and that
database may have been copied, merged from a cluster, restored from a backup
or edited by hand.  So each stored match is played again by the rules engine
from what was stored, without any bot:

- its deals from its stored seed (``Game.seeded``, as the match was played),
  so the cards follow from the seed and from nothing else;
- its recorded actions, each of which must be legal where it stands;
- then the replay's events must be the record's, the match must be over, and
  its totals, hand scores, hand winners and places (a forfeited seat last)
  must be the stored ones, with a seat forfeited exactly where the record has
  a forfeiting fault.

The timing a match stores is held to what its record re-derives: the
record's trace lists each seat's decisions with their times (to the
microsecond), so a seat's count of timed decisions, their mean, 95th
percentile and longest are the stored ones, and the match cannot have
lasted less than all of them together, as one decision is asked at a time;
the CPU a bot was caught using between its turns is the trace's.  A seat's
timeouts are not held to the record's timeout faults: a bot that stalls
while the arena writes it an error notice is faulted for a timeout at its
next request without one being counted.  When the match started is kept
nowhere else, and records older than the trace have nothing to hold these
to.

A table missing a match is as wrong as one with a changed total, and the
leaderboard would not say so: it ranks what it finds.  So every match the
tournament should hold must be stored.  For a schedule fixed in advance
(round robin, gauntlet) that is every match of ``build_schedule``, with
``--rerun``'s new deals (``redeal``); each stored match must also have the
seed and the seats the schedule gives it.  A tournament played in rounds
(``settle:``, Swiss) is decided as it goes, so only the rounds it played
are expected: every round up to the last one with a stored (or failed)
match, in full.  A round robin's rounds are deterministic
(``round_entries`` without an assessment), and so are a Swiss tournament's
first ``deals`` rounds, played before anything is assessed; a later Swiss
round's tables come from the assessment of the rounds before, which is not
redone here: the run stored the decision of each round (its tables) before
playing it, and those give every match of the round, with its seats and
seed.  In a database an older arena wrote, without decisions, a later
Swiss round's tables are known by their match ids (``sNNNN-tTT-rR``) only:
numbered from 0 without a gap, each stored in every rotation.

A match recorded as failed (an arena error) is not a result but one the
next run retries, as the leaderboard's note says: it is named as failed,
not as missing.  The store keeps no record of a run's end, only what it
holds (``standings.summary.unfinished_size``): a run stopped part-way and a match
taken out of the database look alike, so the summary says the tournament
is not finished and that running it again plays what is missing.

The matches are replayed by worker processes (``--jobs``, by default one a
usable CPU; ``parallel.in_workers``, as ``arena report`` writes its replays),
each match's problems in the matches' order, so the output is the same on
one core as on many.

Also SQLite's own integrity and the store's consistency checks
(``ResultStore.verify``).  Each problem is one line naming the match, in the
words of the engine where it refuses an action; ``arena verify`` escapes
each line, as everything read back from a results database is, and names
at most ``SHOWN_ABSENT`` absent matches, then how many more.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...match.spec import forfeit_places
from ...process.stats import DecisionStats
from ...shanghai.actions import action_from_json
from ...shanghai.errors import ShanghaiError
from ...shanghai.game import Game
from ...shanghai.ruleset import Ruleset
from ...words import plural
from ..config.model import GAUNTLET, ROUND_ROBIN, SWISS, BotConfig, Settle, TournamentConfig
from ..pairing.decision import RoundDecision
from ..pairing.rounds import match_budget, round_entries
from ..pairing.schedule import ScheduleEntry, build_schedule, redeal
from ..pairing.seating import ROTATE
from .database import FailedMatch, ResultStore, StoreError
from .parallel import in_workers, usable_cpus
from .rows import StoredMatch
from .setaside import times_set_aside

__all__ = ["SHOWN_ABSENT", "Verified", "verify_results", "verify_match"]

SHOWN_ABSENT = 20        # absent matches named one by one; then one line counts the rest

# A trace keeps each decision's time in milliseconds to three decimals: half
# a microsecond off at most, and a float's own error besides.
_TRACE_TOLERANCE = 1e-6


@dataclass(frozen=True)
class Verified:
    """What ``verify_results`` went through: matches replayed, the problems
    found, and one line per match the tournament should hold that is not
    stored as a result (``absent``: ``failed`` of them recorded as failed,
    ``missing`` not stored at all).  ``scheduled``: the size of a schedule
    fixed in advance; ``rounds``: the rounds of one played in rounds
    (None: not known, and completeness not checked)."""

    matches: int
    problems: tuple[str, ...]
    absent: tuple[str, ...] = ()
    missing: int = 0
    failed: int = 0
    scheduled: int | None = None
    rounds: int | None = None

    @property
    def ok(self) -> bool:
        return not self.problems and not self.absent

    def lines(self, shown: int = SHOWN_ABSENT) -> list[str]:
        """The problems, then the first ``shown`` absent matches and a line counting the rest."""
        rest = len(self.absent) - shown
        more = [f"and {plural(rest, 'more match', 'more matches')} not stored as results"] if rest > 0 else []
        return [*self.problems, *self.absent[:shown], *more]

    def summary(self, results: str) -> str:
        """The last line: all is well, or how many problems and why matches are absent."""
        replayed = plural(self.matches, "stored match", "stored matches")
        if self.ok:
            expected = (f", and the schedule's {plural(self.scheduled, 'match', 'matches')} are all stored"
                        if self.scheduled is not None else
                        f", and every match of its {plural(self.rounds, 'round')} is stored"
                        if self.rounds else "")
            return f"{replayed} of {results} replayed: every stored result follows from its record{expected}"
        line = f"{plural(len(self.problems) + len(self.absent), 'problem')} in {results} ({replayed} replayed)"
        if self.missing:
            are, them = ("is", "it") if self.missing == 1 else ("are", "them")
            of = (f"{self.missing} of the schedule's {self.scheduled} matches" if self.scheduled is not None
                  else f"{plural(self.missing, 'match', 'matches')} of the rounds it played")
            line += (f"; {of} {are} not stored: the tournament is not finished (a run stopped part-way, or "
                     f"matches were taken out of the database); running it again plays {them}")
        if self.failed:
            them = "it" if self.failed == 1 else "them"
            line += f"; {plural(self.failed, 'match', 'matches')} failed with an arena error: running it again " \
                    f"retries {them}"
        return line


def verify_results(store: ResultStore, progress: Callable[[int, int], None] | None = None,
                   jobs: int | None = None) -> Verified:
    """Replay every stored match of ``store`` and look for the absent ones (see
    the module); ``progress(done, total)`` after each match.  ``jobs``:
    processes replaying the matches (None: the usable CPUs); the problems
    come in the matches' order however many there are."""
    rules = _tournament_rules(store)
    matches = store.matches()
    # The workers replay the matches while this process checks the database and the schedule.
    checked = in_workers(store, _check, [(m, rules) for m in matches], usable_cpus() if jobs is None else jobs)
    try:
        problems = [f"database: {p}" for p in store.verify()]
        failures = store.failures()
        expected = _expected_or_problem(store, {m.match_id for m in matches} | {f.match_id for f in failures},
                                        problems)
        problems += _off_schedule(expected, matches)
        for done, found in enumerate(checked, 1):
            problems += found
            if progress is not None:
                progress(done, len(matches))
    finally:
        checked.close()
    absent, missing, failed = _absent(expected, {m.match_id for m in matches}, failures)
    return Verified(len(matches), tuple(problems), tuple(absent), missing, failed, expected.scheduled,
                    expected.rounds)


def _expected_or_problem(store: ResultStore, known: set[str], problems: list[str]) -> _Expected:
    """``_expected``, or nothing expected and a line in ``problems`` saying why."""
    try:
        return _expected(store, known)
    except (ValueError, TypeError, ArithmeticError) as exc:     # a description edited beyond what a file allows
        problems.append(f"database: the tournament's schedule does not follow from its stored description "
                        f"({type(exc).__name__}: {exc})")
        return _Expected()


def _check(store: ResultStore, job: tuple[StoredMatch, Mapping[str, Any] | None]) -> list[str]:
    """The problems of one stored match, each naming it (in a worker: with its own connection)."""
    m, rules = job
    try:
        record = store.record(m.match_id)
    except StoreError as err:
        return [f"match {m.match_id}: {err}"]
    return [f"match {m.match_id}: {p}" for p in verify_match(m, record, rules)]


def verify_match(m: StoredMatch, record: Mapping[str, Any], rules: Mapping[str, Any] | None = None) -> list[str]:
    """The problems of one stored match against its record (none: it replays to
    its results); ``rules``: the tournament's, which the match must have been dealt under."""
    problems = _other_rules(record, rules)
    try:
        game = _replay(m, record)
    except _Refused as err:
        return [*problems, str(err), *_timing(m, record)]
    return [*problems, *_differences(m, record, game), *_timing(m, record)]


def _other_rules(record: Mapping[str, Any], rules: Mapping[str, Any] | None) -> list[str]:
    """The problem if the record's rules are readable and not the tournament's (``_replay``
    says what is wrong with rules that cannot be read)."""
    events = record.get("events")
    start = events[0] if isinstance(events, list) and events and isinstance(events[0], dict) else {}
    try:
        played = Ruleset.from_mapping(start.get("rules") or {}).to_mapping()
    except (ShanghaiError, TypeError, ValueError, AttributeError):
        return []
    if rules is None or played == rules:
        return []
    differ = sorted(k for k in {*rules, *played} if rules.get(k) != played.get(k))
    return [f"it was played under other rules than the tournament's ({', '.join(differ)})"]


@dataclass(frozen=True)
class _Expected:
    """The matches the stored tournament should hold, as far as what is stored
    tells: ``entries`` (by match id, in schedule order) with their seeds and
    seats; for the Swiss rounds decided from an assessment, the stored match
    ids that are of them (``loose``) and a line for each gap among them."""

    entries: Mapping[str, ScheduleEntry] = field(default_factory=dict)
    scheduled: int | None = None       # a schedule fixed in advance: its size
    rounds: int | None = None          # played in rounds: how many were played
    round_of: Mapping[str, int] = field(default_factory=dict)     # of each entry, then
    set_aside: Mapping[str, int] = field(default_factory=dict)
    loose: frozenset[str] = frozenset()
    gaps: tuple[str, ...] = ()


def _expected(store: ResultStore, known: set[str]) -> _Expected:
    """What ``store`` should hold; ``known``: the ids of its stored and failed
    matches, which tell which rounds were played."""
    config = _stored_config(store)
    if config is None or config.seed is None:
        return _Expected()
    if config.settle is None and config.format != SWISS:
        set_aside = times_set_aside(Path(store.path))
        entries = redeal(build_schedule(config), set_aside, config.seed)
        return _Expected(_by_id(entries), scheduled=len(entries), set_aside=set_aside)
    decided = _decided_rounds(config, store.decisions(), known)
    if decided is not None:
        return decided
    if config.format == SWISS:
        return _swiss_rounds(config, known)
    # Round r is deal r, whatever the assessment: as many rounds as the stored
    # (and failed) matches are of, within the budget no run goes beyond.
    rounds: list[list[ScheduleEntry]] = []
    left, budget, size, played = set(known), match_budget(config), 0, 0
    while left:
        entries = round_entries(config, len(rounds), None, size)
        if not entries or size + len(entries) > budget:
            break
        rounds.append(entries)
        size += len(entries)
        if left & {e.match_id for e in entries}:
            left -= {e.match_id for e in entries}
            played = len(rounds)
    return _Expected(_by_id([e for r in rounds[:played] for e in r]), rounds=played,
                     round_of={e.match_id: r for r, entries in enumerate(rounds[:played]) for e in entries})


def _decided_rounds(config: TournamentConfig, decisions: Mapping[int, RoundDecision],
                    known: set[str]) -> _Expected | None:
    """The rounds a settling run stored its decisions of (None: none stored,
    as by an arena before they were): every round up to the last one
    ``known`` has a match of, each with the tables, seats and seeds its
    decision gives, so a later Swiss round is checked as fully as a round
    robin's (its last table, its seats).  A round is decided before it is
    played, so the last decision may be of a round a stopped run never began."""
    rounds: list[list[ScheduleEntry]] = []
    start = 0
    while _played_decision(decisions, len(rounds)):
        decision = decisions[len(rounds)]
        if decision.start_index != start:
            break       # not what this run stored: the rounds from here are not known
        seated = [e.seats for r in rounds for e in r]
        rounds.append(round_entries(config, len(rounds), None, start, seated, decision.tables or None))
        start += len(rounds[-1])
    if not rounds:
        return None
    played = max((r + 1 for r, entries in enumerate(rounds) if known & {e.match_id for e in entries}), default=0)
    entries = [e for r in rounds[:played] for e in r]
    return _Expected(_by_id(entries), rounds=played,
                     round_of={e.match_id: r for r, es in enumerate(rounds[:played]) for e in es})


def _played_decision(decisions: Mapping[int, RoundDecision], round_no: int) -> bool:
    """Whether round ``round_no`` was decided and is played (not the stop)."""
    decision = decisions.get(round_no)
    return decision is not None and decision.stop is None


_SWISS_ID = re.compile(r"s(\d+)-t(\d+)-r(\d+)")


def _swiss_rounds(config: TournamentConfig, known: set[str]) -> _Expected:
    """The rounds of a Swiss tournament up to the last one ``known`` has a
    match of: the first ``deals`` in full (``round_entries`` without an
    assessment, as they were played), the later ones by their match ids."""
    played: dict[int, dict[int, set[int]]] = {}
    for mid in known:
        hit = _SWISS_ID.fullmatch(mid)
        if hit is not None and int(hit[3]) < config.players:
            played.setdefault(int(hit[1]), {}).setdefault(int(hit[2]), set()).add(int(hit[3]))
    if not played:
        return _Expected(rounds=0)
    last = max(played)
    entries: list[ScheduleEntry] = []
    round_of: dict[str, int] = {}
    for r in range(min(config.deals, last + 1)):
        dealt = round_entries(config, r, None, len(entries), [e.seats for e in entries])
        round_of.update((e.match_id, r) for e in dealt)
        entries += dealt
    gaps: list[str] = []
    for r in range(config.deals, last + 1):
        gaps += _swiss_gaps(r, played.get(r, {}), config.players, last)
    loose = frozenset(mid for mid in known if (hit := _SWISS_ID.fullmatch(mid)) is not None
                      and int(hit[1]) >= config.deals and int(hit[3]) < config.players)
    return _Expected(_by_id(entries), rounds=last + 1, round_of=round_of, loose=loose, gaps=tuple(gaps))


def _swiss_gaps(round_no: int, tables: Mapping[int, set[int]], players: int, last: int) -> list[str]:
    """A line for each match a Swiss round decided from an assessment lacks:
    its tables are numbered from 0, each played in every rotation."""
    if not tables:
        return [f"round {round_no}: missing: none of its matches is stored, yet round {last}'s are"]
    top = max(tables)
    out = []
    for t in range(top + 1):
        for rotation in range(players):
            mid = f"s{round_no:04d}-t{t:02d}-r{rotation}"
            if t not in tables:
                out.append(f"match {mid}: missing: round {round_no} stores tables up to {top} but not table {t}")
            elif rotation not in tables[t]:
                out.append(f"match {mid}: missing: round {round_no} stores table {t} in other rotations "
                           f"but not in this one")
    return out


def _by_id(entries: Sequence[ScheduleEntry]) -> dict[str, ScheduleEntry]:
    return {e.match_id: e for e in entries}


def _off_schedule(expected: _Expected, matches: list[StoredMatch]) -> list[str]:
    """Each stored match that is not the tournament's schedule's: another seed
    (the schedule's follow from the tournament seed, ``schedule.derive_seed``,
    and ``redeal`` after a ``--rerun``) or other bots in its seats.  A Swiss
    round decided from an assessment is held to its match ids only."""
    if expected.scheduled is None and expected.rounds is None:
        return []                       # the tournament's description is not readable
    problems = []
    for m in matches:
        entry = expected.entries.get(m.match_id)
        if entry is None:
            if m.match_id not in expected.loose:
                problems.append(f"match {m.match_id}: not in the tournament's schedule")
        elif entry.seed != m.seed:
            problems.append(f"match {m.match_id}: stored with seed {m.seed}; the tournament's seed deals it "
                            f"from {entry.seed}")
        elif list(entry.seats) != list(m.bots):
            problems.append(f"match {m.match_id}: stored with {', '.join(m.bots)} in its seats; the schedule "
                            f"seats {', '.join(entry.seats)}")
    return problems


def _absent(expected: _Expected, stored: set[str], failures: Sequence[FailedMatch]) -> tuple[list[str], int, int]:
    """A line per match ``expected`` that is not stored, in schedule order,
    and how many are missing and failed.  Every failure not stored since is
    one, expected or not: a failed match is not a result."""
    failed = [f for f in failures if f.match_id not in stored]
    lines: list[tuple[int, str]] = [
        (f.schedule_index, f"match {f.match_id}: failed with an arena error and not stored as a result "
                           f"({f.reason}); running the tournament again retries it") for f in failed]
    failed_ids = {f.match_id for f in failed}
    for e in expected.entries.values():
        if e.match_id not in stored and e.match_id not in failed_ids:
            where = (f"round {expected.round_of[e.match_id]}" if e.match_id in expected.round_of
                     else "the schedule")
            again = ("; --rerun set it aside and no run has played it again yet"
                     if expected.set_aside.get(e.match_id) else "")
            lines.append((e.index, f"match {e.match_id}: missing: {where} gives it "
                                   f"(seats {', '.join(e.seats)}; seed {e.seed}) but it is not stored{again}"))
    lines.sort(key=lambda x: x[0])
    gaps = list(expected.gaps)
    return [line for _, line in lines] + gaps, len(lines) - len(failed) + len(gaps), len(failed)


def _stored_config(store: ResultStore) -> TournamentConfig | None:
    """The stored tournament as far as its matches follow from it (bots in
    order, players, format, challengers, deals, duplicate deals, settle,
    seed), for the schedule's functions; None when that is not readable."""
    tournament = store.tournament()
    try:
        c, seed = (tournament or {})["config"], (tournament or {})["seed"]
        if c["format"] not in (ROUND_ROBIN, GAUNTLET, SWISS) or not isinstance(seed, int):
            return None
        settle = c.get("settle")
        return TournamentConfig(Path(store.path), Path(store.path).parent, str(c["name"]),
                                tuple(BotConfig(str(b["name"]), builtin="stored") for b in c["bots"]),
                                players=int(c["players"]), format=c["format"],
                                challengers=tuple(c.get("challengers") or ()), deals=int(c["deals"]),
                                settle=None if settle is None else Settle(**{
                                    k: settle[k] for k in ("confidence", "max_matches", "max_minutes")
                                    if k in settle}),
                                duplicate=bool(c.get("duplicate", True)),
                                # results stored before 'seating' existed were seated by rotation
                                seating=str(c.get("seating", ROTATE)), seed=seed)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _tournament_rules(store: ResultStore) -> dict[str, Any] | None:
    """The stored tournament's rules, as a match's record gives them (None: not stored)."""
    tournament = store.tournament()
    try:
        return Ruleset.from_mapping((tournament or {})["config"]["rules"]).to_mapping()
    except (KeyError, TypeError, ValueError, ShanghaiError):
        return None


class _Refused(Exception):
    """The record cannot be replayed at all; the message says where."""


def _replay(m: StoredMatch, record: Mapping[str, Any]) -> Game:
    events, actions = record.get("events"), record.get("actions")
    if not isinstance(events, list) or not events or not isinstance(actions, list):
        raise _Refused("the record has no events or no actions")
    start = events[0]
    if not isinstance(start, dict) or start.get("type") != "match_start":
        raise _Refused("the record does not start with a match_start event")
    if start.get("players") != len(m.bots) or start.get("seed") != m.seed:
        raise _Refused(f"the record is of a match of {start.get('players')} seats dealt from seed "
                       f"{start.get('seed')}, the stored one of {len(m.bots)} seats from seed {m.seed}")
    try:
        game = Game.seeded(Ruleset.from_mapping(start.get("rules") or {}), len(m.bots), m.seed)
    except (ShanghaiError, TypeError, ValueError) as exc:
        raise _Refused(f"its rules cannot be read ({exc})") from None
    for k, entry in enumerate(actions):
        try:
            seat = entry["seat"]
            game.apply(action_from_json(entry["action"]), seat=seat)
        except (KeyError, TypeError) as exc:
            raise _Refused(f"action {k} is not an action ({type(exc).__name__}: {exc})") from None
        except ShanghaiError as exc:
            raise _Refused(f"action {k} (seat {entry.get('seat')}) is refused by the rules: {exc}") from None
    return game


def _differences(m: StoredMatch, record: Mapping[str, Any], game: Game) -> Iterator[str]:
    if not game.over:
        yield f"the match is not over after its {len(game.actions)} recorded actions"
    replayed = json.loads(json.dumps([e.to_json() for e in game.log]))
    recorded = record["events"]
    if replayed != recorded:
        at = next((i for i, (a, b) in enumerate(zip(replayed, recorded)) if a != b), min(len(replayed), len(recorded)))
        yield (f"its recorded events differ from the replay's from event {at} "
               f"({_kind(recorded, at)} recorded, {_kind(replayed, at)} replayed)")
    forfeited = _forfeits(record, len(m.bots))
    stored = {"totals": m.totals, "hand scores": m.hand_scores, "hand winners": m.hand_winners,
              "forfeited seats": m.forfeited, "places": m.places}
    derived = {"totals": list(game.totals), "hand scores": [list(h) for h in game.hand_scores],
               "hand winners": list(game.winners), "forfeited seats": forfeited,
               "places": forfeit_places(list(game.totals), forfeited)}
    for what, value in stored.items():
        if _plain(value) != _plain(derived[what]):
            yield f"stored {what} {_plain(value)}, the replay gives {_plain(derived[what])}"


def _forfeits(record: Mapping[str, Any], seats: int) -> list[bool]:
    """Per seat: whether the record has a fault that forfeited it."""
    out = [False] * seats
    for f in record.get("faults") or []:
        seat = f.get("seat") if isinstance(f, dict) else None
        if isinstance(seat, int) and 0 <= seat < seats and f.get("forfeit"):
            out[seat] = True
    return out


def _kind(events: list[Any], i: int) -> str:
    if i >= len(events):
        return "nothing"
    e = events[i]
    return repr(e.get("type")) if isinstance(e, dict) else "not an event"


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value))


def _timing(m: StoredMatch, record: Mapping[str, Any]) -> Iterator[str]:
    """The stored timing the record's trace re-derives and does not give: per
    seat its timed decisions (count, mean, 95th percentile, longest) and the
    CPU it was caught using between its turns; the match's duration, at least
    all decisions together.  Nothing for a record without a trace (older ones)."""
    trace = record.get("trace")
    if not isinstance(trace, list) or len(trace) != len(m.bots):
        return
    together, timed = 0.0, 0
    for seat, (t, stats, cpu) in enumerate(zip(trace, m.decision_stats, m.off_turn_cpu)):
        times = _decision_times(t)
        if times is None:
            continue
        together, timed = together + math.fsum(times), timed + len(times)
        who = f"seat {seat} ({m.bots[seat]})"
        for what, stored, derived in _time_stats(stats, times):
            if not _near(stored, derived, 0 if what == "decisions" else _TRACE_TOLERANCE):
                yield f"{who}: stored {what} {_seconds(stored)}, its record's decision times give {_seconds(derived)}"
        traced = t.get("off_turn_cpu")
        if not _near(cpu, traced if isinstance(traced, (int, float)) else None, _TRACE_TOLERANCE):
            yield (f"{who}: stored CPU used between its turns {_seconds(cpu)}, its record gives "
                   f"{_seconds(traced)}")
    if m.duration_seconds < together - _TRACE_TOLERANCE * timed:
        yield (f"stored duration {m.duration_seconds:.6f} s, less than its recorded decisions took together "
               f"({together:.6f} s): one decision is asked at a time")


def _decision_times(seat_trace: Any) -> list[float] | None:
    """The seconds of each decision a seat answered in time, from its trace
    (``[index, request id, milliseconds or None, stderr offset]`` each); None
    when the trace does not read so."""
    decisions = seat_trace.get("decisions") if isinstance(seat_trace, dict) else None
    if not isinstance(decisions, list):
        return None
    try:
        return [d[2] / 1000 for d in decisions if d[2] is not None]
    except (TypeError, KeyError, IndexError):
        return None


def _time_stats(stats: Mapping[str, Any], times: list[float]) -> list[tuple[str, Any, Any]]:
    """(what, stored, derived) of each statistic a seat stores of its decision
    times, derived by ``DecisionStats`` as the match did."""
    derived = DecisionStats(times=times)
    return [("decisions", stats.get("count"), derived.count),
            ("mean decision time", stats.get("mean"), derived.mean),
            ("95th percentile decision time", stats.get("p95"), derived.p95),
            ("longest decision time", stats.get("max"), derived.max)]


def _near(stored: Any, derived: Any, tolerance: float) -> bool:
    if stored is None or derived is None:
        return stored is None and derived is None
    try:
        return abs(float(stored) - float(derived)) <= tolerance
    except (TypeError, ValueError):
        return False


def _seconds(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return f"{value:.6f} s" if isinstance(value, float) else repr(value)
