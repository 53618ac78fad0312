"""``run_match``: one match, start to finish, as a plain function."""

from __future__ import annotations

import dataclasses
import logging
import os
import random
import time
from collections.abc import Mapping
from typing import Any, NamedTuple

from ..players.base import Player
from ..players.registry import make_player
from ..process import BotStartupError
from ..protocol import PROTOCOL_VERSION, TimeLimits
from ..protocol.encoder import MatchEncoder, encode_start
from ..shanghai.game import Game
from .pool import BotPool
from .seats import LocalSeat, RemoteSeat, UnstartableSeat
from .spec import CRASH, MatchResult, MatchSpec, SeatStats, forfeit_places

LOG = logging.getLogger(__name__)

# Test-only: a comma-separated list of match ids whose run_match raises an
# InjectedFailure once the bots are running, so tests can check, through the
# real CLI and in worker processes (which inherit the environment), how a
# tournament survives an arena bug. Unset, it changes nothing.
TEST_FAIL_ENV = "ARENA_TEST_FAIL_MATCH"


class InjectedFailure(RuntimeError):
    """The arena-side error raised on request of ARENA_TEST_FAIL_MATCH (tests only)."""


def seat_label(seat: int, name: str) -> str:
    """What the log lines of a seat's process call it: which seat, for when
    several seats run one program (``arena play bot bot``), whose names are
    the same; the name bots are told, pool keys and results keep ``name``."""
    return f"seat {seat} ({name})"


def _injected_failure(match_id: str) -> None:
    wanted = os.environ.get(TEST_FAIL_ENV)
    if wanted and match_id in wanted.split(","):
        raise InjectedFailure(f"{TEST_FAIL_ENV} asked match {match_id} to fail")

Seat = LocalSeat | RemoteSeat | UnstartableSeat


def run_match(spec: MatchSpec, pool: BotPool | None = None, *,
              players: Mapping[int, Player] | None = None) -> MatchResult:
    """Play one match and return its result.

    Bot processes come from ``pool`` (and go back to it) when one is given;
    otherwise they are started for this match and closed at its end.  No bot
    process started here outlives the call unless it went back to ``pool``,
    whatever happens (exceptions and KeyboardInterrupt included).

    Raises ``BotStartupError`` if a bot program cannot be executed at all
    (a configuration error, not a move of the bot; with
    ``FaultPolicy.unstartable_forfeits`` its seat is forfeited), ``ShanghaiError`` for a
    bad ruleset or deal plan, ``ValueError`` for an unknown built-in player.

    ``players`` gives in-process players for some built-in seats instead of
    the registry's (``arena check`` scripts its opponents so).
    """
    t_wall = time.perf_counter()
    rules = spec.ruleset()
    n = len(spec.seats)
    # The game first: a bad deal plan or ruleset fails before any process starts.
    game = Game.seeded(rules, n, spec.seed, spec.deal)
    active = pool if pool is not None else BotPool()
    seats: list[Seat] = []
    # Off-turn CPU a kept process had been caught using before this match:
    # its clock runs for the life of the process, the record is per match.
    caught_before: dict[int, float] = {}
    try:
        seats = _local_seats(spec, players, seats)
        t_start = time.perf_counter()
        seats = _start_bots(spec, game, active, seats, caught_before)
        startup = time.perf_counter() - t_start
        _injected_failure(spec.match_id)

        while (d := game.decision()) is not None:
            seats[d.seat].decide(game, d)

        ending = _tell_the_end(spec, game, seats)
        wall = time.perf_counter() - t_wall
        for seat in seats:
            if isinstance(seat, RemoteSeat):
                active.release(seat.handle, keep=seat.usable)
    except BaseException:
        # Whatever went wrong (a bug, Ctrl-C): this match's processes die now.
        for seat in seats:
            if isinstance(seat, RemoteSeat):
                active.discard(seat.handle)
        raise
    finally:
        if pool is None:
            active.close()
    return _result(spec, game, seats, ending, caught_before, wall, startup)


def _local_seats(spec: MatchSpec, players: Mapping[int, Player] | None, seats: list[Seat]) -> list[Seat]:
    """Appends the built-in seats to ``seats`` (bots' seats come later, from
    ``_start_bots``) and returns it."""
    for i, seat_spec in enumerate(spec.seats):
        if seat_spec.player is not None:
            # Seeded from the match seed and the seat: the same match replays.
            player = (players[i] if players and i in players
                      else make_player(seat_spec.player, random.Random(f"{spec.seed}/{i}")))
            seats.append(LocalSeat(i, player))
    return seats


class _Ending(NamedTuple):
    totals: list[int]
    places: list[int]
    forfeited: list[bool]
    stderr_ends: dict[int, int | None]  # per bot seat: where its stderr for the match ends


def _tell_the_end(spec: MatchSpec, game: Game, seats: list[Seat]) -> _Ending:
    """The final standings, told to each bot, and where each bot's stderr
    for this match ends."""
    totals = list(game.totals)
    forfeited = [seat.forfeited for seat in seats]
    places = forfeit_places(totals, forfeited)
    for seat in seats:
        if isinstance(seat, RemoteSeat):
            seat.finish(game, spec.told_match_id(), totals, places, forfeited)
    # Taken while each log is still open: a process closed after the match
    # (no pool) has no log to mark any more.
    stderr_ends = {seat.seat: seat.proc.stderr_mark(drain=True)
                   for seat in seats if isinstance(seat, RemoteSeat)}
    return _Ending(totals, places, forfeited, stderr_ends)


def _result(spec: MatchSpec, game: Game, seats: list[Seat], ending: _Ending,
            caught_before: dict[int, float], wall: float, startup: float) -> MatchResult:
    totals, places, forfeited, stderr_ends = ending
    faults = sorted((f for s in seats for f in s.faults),
                    key=lambda f: (-1 if f.decision is None else f.decision, f.seat))
    logs = tuple(spec.stderr_log(i) if s.is_bot else None for i, s in enumerate(seats))
    record = game.to_record()
    # What the viewer and the report need beyond the game: per-seat decision
    # traces (times, request ids, stderr offsets) and the faults with the line
    # that caused them (the store's fault rows keep only the reason).
    off_turn = [_off_turn_cpu(seat, caught_before) for seat in seats]
    record["trace"] = [_seat_trace(seat, stderr_ends.get(seat.seat), cpu) for seat, cpu in zip(seats, off_turn)]
    record["faults"] = [dataclasses.asdict(f) for f in faults]
    return MatchResult(
        match_id=spec.match_id,
        names=tuple(s.name for s in spec.seats),
        totals=tuple(totals),
        places=tuple(places),
        hand_scores=tuple(tuple(h) for h in game.hand_scores),
        winners=tuple(game.winners),
        forfeited=tuple(forfeited),
        faults=tuple(faults),
        stats=tuple(SeatStats.of(s.stats) for s in seats),
        # Every bot seat's log path, although a log is only created by the
        # bot's first byte on stderr: a bot may write after 'end' or as it
        # quits, after this result is made (a pooled process quits when its
        # worker ends), and its bytes still go to this log.
        stderr_logs=logs,
        record=record,
        wall_seconds=wall,
        startup_seconds=startup,
        bot_names=tuple(s.bot_name if isinstance(s, RemoteSeat) else None for s in seats),
        pids=tuple(s.pid if isinstance(s, RemoteSeat) else None for s in seats),
        reused=tuple(s.reused if isinstance(s, RemoteSeat) else False for s in seats),
        protocols=tuple(s.protocol if isinstance(s, RemoteSeat) and s.bot_name is not None else None
                        for s in seats),
        warnings=tuple(s.ignored for s in seats if isinstance(s, RemoteSeat) and s.ignored is not None),
        off_turn_cpu=tuple(off_turn),
    )


def _off_turn_cpu(seat: Seat, caught_before: dict[int, float]) -> float | None:
    """CPU seconds the seat's bot was seen using between its turns in this
    match, or for a kept process while it waited in the pool for this match,
    if its process was caught at it (then 0.0 is a kept process caught
    earlier and stopped between its turns throughout this one).  Charged
    once each: the matches of a process add up to its ``off_turn_seconds``."""
    if not isinstance(seat, RemoteSeat):
        return None
    total = seat.proc.off_turn_seconds
    if total is None:
        return None
    seat.handle.off_turn_charged = total
    before = caught_before.get(seat.seat, 0.0) if seat.reused else 0.0
    return round(max(0.0, total - before), 3)


def _seat_trace(seat: Seat, stderr_end: int | None, off_turn: float | None) -> dict[str, Any]:
    out: dict[str, Any] = {"decisions": seat.trace}
    if isinstance(seat, RemoteSeat):
        out["protocol"] = seat.protocol
        out["stderr_end"] = stderr_end
        if off_turn is not None:      # only then: the records of other bots stay as they were
            out["off_turn_cpu"] = off_turn
    return out


def _start_bots(spec: MatchSpec, game: Game, pool: BotPool, local: list[Seat],
                caught_before: dict[int, float]) -> list[Seat]:
    """All seats in order, bot processes started and past their handshake.

    Every process is spawned before the first handshake, so the bots'
    start-ups (interpreters, imports) run in parallel.  ``local`` is extended
    in place as seats are made, so the caller can clean up after an error,
    and ``caught_before`` with the off-turn CPU of each kept process so far.
    """
    by_index: dict[int, Seat] = {seat.seat: seat for seat in local}
    encoder = MatchEncoder(game)
    for i, seat_spec in enumerate(spec.seats):
        if seat_spec.bot is not None:
            try:
                handle, reused = pool.acquire(seat_spec.bot, name=seat_spec.name,
                                              stderr_log=spec.stderr_log(i), time_control=spec.time,
                                              deal=spec.deal_key, label=seat_label(i, seat_spec.name))
            except BotStartupError as err:
                if not spec.faults.unstartable_forfeits:
                    raise
                by_index[i] = UnstartableSeat(i, game, err.detail)
                continue
            if reused:
                caught_before[i] = handle.off_turn_charged
            remote = RemoteSeat(i, handle, spec.faults, reused, encoder)
            by_index[i] = remote
            local.append(remote)
    seats = [by_index[i] for i in range(len(spec.seats))]
    tc = spec.time
    limits = TimeLimits(tc.startup_seconds, tc.per_decision_seconds, tc.bank_seconds)
    rules = game.rules.to_mapping()
    told, match = spec.told_names(), spec.told_match_id()     # names hidden if anonymous
    for i, seat in enumerate(seats):
        if isinstance(seat, RemoteSeat):
            msg = encode_start(match, i, told, rules, limits, PROTOCOL_VERSION)
            seats[i] = _handshake(spec, game, pool, seat, msg, local)
    return seats


def _handshake(spec: MatchSpec, game: Game, pool: BotPool, seat: RemoteSeat,
               msg: bytes, local: list[Seat]) -> RemoteSeat:
    """The seat after its handshake (a new one if a kept process was gone)."""
    failure = seat.handshake(msg)
    if failure is not None and seat.reused and failure[0] == CRASH:
        # A kept process that exited after the last 'end' (or while we were
        # sending 'start'): replace it silently, once.
        i = seat.seat
        LOG.debug("seat %d: reused process gone (%s), starting a new one", i, failure[1])
        pool.discard(seat.handle)
        bot = spec.seats[i].bot
        assert bot is not None
        handle = pool.start(bot, name=spec.seats[i].name, stderr_log=spec.stderr_log(i),
                            time_control=spec.time, deal=spec.deal_key,
                            label=seat_label(i, spec.seats[i].name))
        seat = RemoteSeat(i, handle, spec.faults, False, seat.encoder)
        local.append(seat)
        failure = seat.handshake(msg)
    if failure is not None:
        seat.handshake_fault(game, failure)
        pool.discard(seat.handle)
    return seat
