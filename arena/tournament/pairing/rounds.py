"""Tournaments played in rounds until the order is settled (``settle:``, ``format: swiss``).

A round is one duplicate deal at each of its tables, every table played in
every rotation.  In a round robin a round is every table (round ``r`` is
deal ``r``, with the same match ids and seeds as ``deals: r + 1`` would
give); in a Swiss tournament the tables of a round are chosen by
:mod:`arena.ranking.matchmaking` from the results of the rounds before.

After the first ``deals`` rounds, and after each round from then on, the
leaderboard is assessed (a Swiss round's tables come from it).  The run
stops once every adjacent pair is separated, or when the next round would
exceed the budget.

Looking again and again until a difference shows up would find one by
chance in the end: two equal bots, checked after each of 10 rounds at 95 %,
were "separated" in 17 % of simulated runs.  So the stopping rule splits the
error over at most ``STOP_LOOKS`` looks (Bonferroni): it looks when the
matches have grown by a tenth of the budget since its last look, each time
at ``1 - (1 - confidence) / STOP_LOOKS`` (99.5 % for 95 %).  A tied pair
then stops a run by chance at most 5 % of the time, and the table shown at
the end, at the plain confidence, separates everything the rule did.

Every decision depends only on the stored results of earlier rounds and the
tournament seed, so a resumed run plays exactly the rounds an uninterrupted
one would.  Each is also stored as it is made (:func:`decide` gives the
``RoundDecision``: the round's tables, whether the rule stopped, its next
look, and the summary of the assessment it read), and a resumed run replays
the stored ones instead of assessing every stored round again (each
assessment is a bootstrap of all the games so far: re-assessing a long run
took minutes before its first new match).  The decisions are read, not
recomputed, so a resumed run plays the same rounds even if an assessment
were to come out differently in its last bits.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...ranking.matchmaking import cover, windows
from ..config.model import MAX_MATCHES, SWISS, Settle, TournamentConfig
from .decision import RoundDecision
from .schedule import ScheduleEntry, derive_seed, table_offsets
from .seating import BALANCED, NeighbourBalance, seatings

if TYPE_CHECKING:  # numpy loads when the rounds are assessed, not with the tournament runner
    from ...ranking import Assessment

__all__ = [
    "LOOK_SCREEN", "PAIRING_REPLICAS", "PAIRING_TOLERANCE", "STOP_LOOKS", "StopRule", "stop_confidence", "pairs_to_settle",
    "swiss_round_tables", "swiss_tables", "check_rounds", "decide", "first_rounds", "match_budget", "round_assessment",
    "round_entries", "round_size_hint", "round_tables",
]


STOP_LOOKS = 10
#: Bootstrap replicas of a Swiss round's assessment, unless its look might
#: stop the run: the round's tables need only which neighbours are in doubt,
#: and assessing every round of a few tables with the full replicas was most
#: of a Swiss match's CPU (benchmarks/rounds_cost.py; 50 replicas still
#: left a 12-bot Swiss match at 1.52 times a round robin's, against 1.5).
PAIRING_REPLICAS = 40
#: A look is assessed again with the full replicas when every adjacent
#: margin of the quick one is at least this share of what the stop needs.
#: The quick replicas are the full ones' first ``PAIRING_REPLICAS`` (same
#: seed), whose spread is off by about 1/sqrt(2 * 40) = 11 %: a margin below
#: 0.72 of the stop's cannot reach it in full but by a 2.5-sigma fluke.
LOOK_SCREEN = 0.72
#: Solver tolerance of those quick replicas (the full ones': the default),
#: and a tenth of it, of the fit they start from.  At 3e-3 every pair's
#: spread over the replicas is within 2.5 % of its exact value (12-bot Swiss
#: run, 140-460 matches), well inside the 11 % of drawing 40 replicas, and
#: it takes a Swiss round's assessment from 23 sweeps to 15-18 (38 at the
#: full replicas' tolerance).
PAIRING_TOLERANCE = 3e-3


def stop_confidence(confidence: float) -> float:
    """The level of each look of the stopping rule."""
    return 1.0 - (1.0 - confidence) / STOP_LOOKS


def pairs_to_settle(assessment: Assessment, confidence: float) -> int:
    """The adjacent pairs the stopping rule has yet to tell apart (at its own level)."""
    return sum(not s for s in assessment.separated_at(stop_confidence(confidence)))


@dataclass
class StopRule:
    """When a settling run stops: at a look, when every adjacent pair is
    separated at ``stop_confidence``; a look comes once the matches have grown
    by a ``STOP_LOOKS``-th of the budget since the last one."""

    budget: int
    confidence: float
    next_look: int = 0

    def settled(self, matches: int, assessment: Assessment) -> bool:
        """Whether the run stops, given the assessment of its first ``matches`` matches."""
        if matches < self.next_look:
            return False
        if all(assessment.separated_at(stop_confidence(self.confidence))):
            return True
        self.next_look = matches + -(-self.budget // STOP_LOOKS)
        return False


def round_assessment(config: TournamentConfig, matches: int, rule: StopRule,
                     assess_with: Callable[[int | None, float | None], Assessment]) -> Assessment:
    """The assessment a round is decided from, after ``matches`` matches;
    ``assess_with(replicas, tolerance)`` assesses the rounds before (None,
    None: the full replicas).  A round robin's round is assessed in full.  A
    Swiss round first with ``PAIRING_REPLICAS`` solved to
    ``PAIRING_TOLERANCE``, which chooses its tables, and in full only when
    ``rule`` looks and the quick margins come near the stop."""
    if config.format != SWISS:
        return assess_with(None, None)
    quick = assess_with(PAIRING_REPLICAS, PAIRING_TOLERANCE)
    if matches < rule.next_look:
        return quick
    needed = quick.needed(stop_confidence((config.settle or Settle()).confidence))
    if all(m >= LOOK_SCREEN * needed for m in quick.margins):
        return assess_with(None, None)
    return quick


def match_budget(config: TournamentConfig) -> int:
    """``settle.max_matches``, or a default: ten deal rounds of a round robin;
    for Swiss, as many matches as one deal round of a round robin (at least
    50 per bot)."""
    settle = config.settle or Settle()
    if settle.max_matches is not None:
        return settle.max_matches
    k, n = config.players, len(config.bots)
    one_round = math.comb(n, k) * k
    if config.format == SWISS:
        return min(MAX_MATCHES, max(one_round, 50 * n))
    return min(MAX_MATCHES, 10 * one_round)


def round_size_hint(config: TournamentConfig) -> int:
    """The number of matches of the first round (for messages and estimates)."""
    k, n = config.players, len(config.bots)
    if config.format == SWISS:
        return math.ceil(n / k) * k
    return math.comb(n, k) * k


def check_rounds(config: TournamentConfig) -> None:
    """``ConfigError`` when the first rounds cannot fit in the budget."""
    first = round_size_hint(config) * config.deals
    budget = match_budget(config)
    if first > budget:
        k, n = config.players, len(config.bots)
        what = (f"the first {config.deals} round(s) of a {config.format.replace('_', ' ')} of {n} bots "
                f"at tables of {k} take {first:,} matches, more than the budget of {budget:,}")
        way_out = ("raise settle.max_matches" if config.format == SWISS else
                   "raise settle.max_matches, use 'format: swiss', or use fewer deals")
        raise config.error("settle", f"{what}: {way_out}")


def first_rounds(config: TournamentConfig) -> list[ScheduleEntry]:
    """The rounds played before anything is assessed (``deals`` of them)."""
    entries: list[ScheduleEntry] = []
    for r in range(config.deals):
        entries += round_entries(config, r, None, len(entries), [e.seats for e in entries])
    return entries


def round_entries(config: TournamentConfig, round_no: int, assessment: Assessment | None,
                  start_index: int, earlier: Sequence[Sequence[str]] = (),
                  tables: Sequence[tuple[str, ...]] | None = None) -> list[ScheduleEntry]:
    """The matches of round ``round_no``; indices continue from ``start_index``.
    ``assessment`` is of every round before (None before any); ``earlier``
    the seats of every match of the rounds before, in schedule order, whose
    neighbours a Swiss round's seating evens out (a round robin's rounds are
    balanced by their tables' fixed offsets, and need not be told);
    ``tables``, those a stored decision gives, are played instead of
    choosing them from ``assessment``."""
    if config.format == SWISS:
        return _swiss_round(config, round_no, assessment, start_index, earlier, tables)
    return _round_robin_round(config, round_no, start_index)


def decide(config: TournamentConfig, round_no: int, start_index: int, matches: int,
           assessment: Assessment | None, rule: StopRule) -> RoundDecision:
    """What is decided before round ``round_no`` from ``assessment`` (of the
    first ``matches`` matches; None for the first ``deals`` rounds): whether
    ``rule`` stops the run (its ``next_look`` moves on), else, for Swiss, the
    round's tables."""
    looked = assessment is not None and matches >= rule.next_look
    stop = "settled" if assessment is not None and rule.settled(matches, assessment) else None
    tables = round_tables(config, round_no, assessment) if stop is None and config.format == SWISS else []
    summary = None if assessment is None else {
        "order": assessment.order, "margins": assessment.margins, "groups": assessment.groups,
        "unsettled": assessment.unsettled, "replicas": assessment.replicas, "looked": looked,
        "to_settle": pairs_to_settle(assessment, (config.settle or Settle()).confidence),
        "leader_mu": assessment.rows[assessment.order[0]].mu}
    return RoundDecision(round_no, start_index, matches, rule.next_look, stop, tuple(tables), summary)


def _round_robin_round(config: TournamentConfig, deal: int, start_index: int) -> list[ScheduleEntry]:
    # The same ids and seeds as schedule.iter_schedule, in deal-major order.
    assert config.seed is not None
    k = config.players
    tables = list(itertools.combinations(config.bot_names, k))
    width = max(3, len(str(max(len(tables) - 1, 0))))
    offsets = table_offsets(config)
    entries: list[ScheduleEntry] = []
    for t, bots in enumerate(tables):
        deal_seed = derive_seed(config.seed, t, deal)
        for rotation, seats in enumerate(seatings(bots, offsets[t] + deal, config.seating)):
            seed = deal_seed if config.duplicate else derive_seed(config.seed, t, deal, rotation)
            entries.append(ScheduleEntry(start_index + len(entries), f"t{t:0{width}d}-r{rotation}-d{deal}",
                                         t, rotation, deal, tuple(seats), seed))
    return entries


def swiss_tables(assessment: Assessment, confidence: float, k: int) -> list[tuple[str, ...]]:
    """The tables of a Swiss round: around every adjacent pair not separated
    at the stopping rule's level (the run goes on until they are), or, when
    every pair is but the rule has not looked yet, around the least separated
    pair, so that a round is never empty."""
    strict = assessment.separated_at(stop_confidence(confidence))
    tables = windows(assessment.order, strict, k)
    if not tables and assessment.margins:
        weakest = min(range(len(assessment.margins)), key=lambda i: (assessment.margins[i], i))
        tables = windows(assessment.order, [i != weakest for i in range(len(strict))], k)
    return tables


def swiss_round_tables(assessment: Assessment, confidence: float, k: int,
                       balance: Sequence[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """The tables of a Swiss round after the first: ``balance`` (a random
    cover of the field) and the windows of :func:`swiss_tables` not already
    among them.

    Windows alone make each bot meet only its neighbours, and then a bot's
    rating depends on the path the run took (TrueSkill's model is only
    approximately right for this game), which the bootstrap, resampling the
    deals of the tables played, cannot see: 95 % intervals held the mu of
    other Swiss runs in only 73-79 % of cases at 12 bots.  A random cover in
    every round makes every bot meet a spread of the field throughout: 90-94 %
    then, at the price of more matches to settle (about 1,200 instead of
    720-960 at 12 bots; docs/RANKING.md, "Swiss rounds").
    """
    tables = list(balance)
    tables += [t for t in swiss_tables(assessment, confidence, k) if t not in tables]
    return tables


SWISS_ORDERS = 8      # table orders a Swiss table's seating is chosen among, besides its own


def _swiss_seating(config: TournamentConfig, neighbours: NeighbourBalance, round_no: int, t: int,
                   bots: tuple[str, ...]) -> tuple[Sequence[str], int]:
    """The table order and block of a Swiss table: its own order and
    ``SWISS_ORDERS`` shuffles of it, drawn from the tournament seed, so a
    resumed run chooses as the first did."""
    if config.seating != BALANCED:
        return bots, 0
    assert config.seed is not None
    rng = random.Random(derive_seed(config.seed, "swiss-seating", round_no, t))
    return neighbours.choose_order([bots, *(rng.sample(bots, len(bots)) for _ in range(SWISS_ORDERS))])


def round_tables(config: TournamentConfig, round_no: int, assessment: Assessment | None) -> list[tuple[str, ...]]:
    """The tables of Swiss round ``round_no``, ``assessment`` being of the rounds before."""
    assert config.seed is not None
    k = config.players
    # Every round has a random cover of the field (see swiss_round_tables).
    rng = random.Random(derive_seed(config.seed, "swiss-cover", round_no))
    balance = cover(config.bot_names, k, rng)
    if assessment is None or round_no < config.deals:
        return balance
    return swiss_round_tables(assessment, (config.settle or Settle()).confidence, k, balance)


def _swiss_round(config: TournamentConfig, round_no: int, assessment: Assessment | None, start_index: int,
                 earlier: Sequence[Sequence[str]], tables: Sequence[tuple[str, ...]] | None = None,
                 ) -> list[ScheduleEntry]:
    assert config.seed is not None
    k = config.players
    if tables is None:
        tables = round_tables(config, round_no, assessment)
    # Tables change from round to round: each one's block is chosen to even
    # out who sat after whom in every round before (their seats) and this one.
    neighbours = NeighbourBalance(k, config.seating)
    neighbours.add_seated(earlier)
    entries: list[ScheduleEntry] = []
    for t, bots in enumerate(tables):
        deal_seed = derive_seed(config.seed, "swiss", round_no, t)
        order, block = _swiss_seating(config, neighbours, round_no, t, bots)
        for rotation, seats in enumerate(seatings(order, block, config.seating)):
            seed = deal_seed if config.duplicate else derive_seed(config.seed, "swiss", round_no, t, rotation)
            entries.append(ScheduleEntry(start_index + len(entries), f"s{round_no:04d}-t{t:02d}-r{rotation}",
                                         t, rotation, round_no, tuple(seats), seed))
    return entries
