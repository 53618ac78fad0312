"""What the report shows, read from a results database: JSON-ready values only.

The leaderboard, head-to-head, seat and neighbour tables are the ones ``arena
leaderboard`` prints (same functions, same numbers).  Decision times come from
each match record's trace (one time per decision); records written before
traces existed give their per-match mean instead.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

# The package, not its ``fit``: arena.ranking gives fit on first use (PEP 562).
# ``arena show --html`` loads this module and fits nothing; numpy and the fit
# would add 0.2-0.4 s and 13 MB to it (measured, -X importtime and ru_maxrss).
from .. import ranking
from ..match.spec import first_fault_line
from ..tournament.results.database import FAULT_KINDS, ResultStore, StoredMatch, StoreError
from ..tournament.standings.leaderboard import (
    LeaderboardRow,
    _confidence,
    _Fixed,
    _rating,
    _seed,
    head_to_head,
    leaderboard,
    seat_effect,
)
from ..tournament.standings.neighbours import CELL_NOTE, neighbour_effect, neighbour_note, neighbour_summary
from ..tournament.standings.ratings import duplicate_group, rated_games
from ..tournament.standings.summary import unfinished_size
from .replay import ReplayError, build_replay
from .traces import BotTimes, stored_times

__all__ = ["ReportData", "BotSection", "Digest", "Digests", "collect", "replay_and_digest", "GRADEBOOK_COLUMNS", "gradebook_rows"]

HISTORY_POINTS = 24         # points of the ratings over the tournament, at most (the last: every match)
TIMES_PER_BOT = 2000        # decision times per bot in the chart, at most (evenly spaced order statistics)
SLOWEST = 5
REFUSED_SHOWN = 10
REFUSED = ("illegal", "malformed", "wrong_id")     # faults with a reply the arena refused
FAILED_SHOWN = 10           # kinds of crash and timeout shown per bot (each with its count)


@dataclass
class BotSection:
    """One bot's diagnostics, for a student."""
    bot: str
    matches: int
    mean_place: float | None
    score_per_hand: float | None
    forfeits: int
    faults_by_kind: dict[str, int]
    places: dict[int, int]                              # place -> matches it did not forfeit
    opponents: list[dict[str, Any]]                     # one per opponent: played, ahead, behind, tied, share
    caught: list[str] = field(default_factory=list)     # matches where it was caught computing between turns
    off_turn_cpu: float = 0.0                           # CPU seconds it used between turns in them
    slowest: list[dict[str, Any]] = field(default_factory=list)    # match_id, decision, kind, ms, hand
    refused: list[dict[str, Any]] = field(default_factory=list)    # fault, match_id, decision, hand, detail, reply, request
    # Crashes and timeouts (no reply to quote), one entry per distinct reason:
    # count, matches, and its first occurrence as in ``refused``.
    failures: list[dict[str, Any]] = field(default_factory=list)
    first_fault: str = ""           # its first fault, as one line for a grade book ("" if none)


@dataclass
class ReportData:
    name: str
    created: str
    rating_unit: str
    confidence: float
    leaderboard: list[dict[str, Any]]
    head_to_head: dict[str, dict[str, dict[str, Any]]]       # bot -> opponent -> cell
    seats: list[dict[str, Any]]
    history: list[dict[str, Any]]
    times: list[dict[str, Any]]
    times_note: str
    faults: dict[str, dict[str, int]]                       # bot -> kind -> count
    matches: list[dict[str, Any]]
    failed: list[dict[str, Any]]
    bots: list[BotSection]
    order: list[str]                                        # bots, best first
    scheduled: int | None = None                            # matches scheduled, when not all are played yet
    # cells: bot -> the bot it sat directly after -> counts and mean places; summary; line: the field's figure
    neighbours: dict[str, Any] = field(default_factory=dict)


def _history(matches: Sequence[StoredMatch], bots: Sequence[str], unit: str,
             final: Sequence[LeaderboardRow]) -> list[dict[str, Any]]:
    """The batch fit of the first N matches (schedule order), at up to
    HISTORY_POINTS values of N evenly spaced, the last being every match.

    Each fit starts from the one before it (the outcomes they share keep
    their messages), which takes it to the same tolerance in fewer sweeps;
    the last point is the leaderboard's own fit (``final``), so the chart ends
    on the table's numbers.  No bootstrap: the chart's band is mu +- 2 sigma."""
    ordered = sorted(matches, key=lambda m: m.schedule_index)
    if not ordered:
        return []
    steps = min(HISTORY_POINTS, len(ordered))
    cuts = sorted({round(len(ordered) * (i + 1) / steps) for i in range(steps)})
    out: list[dict[str, Any]] = []

    def add(n: int, ratings: Iterable[tuple[str, float, float]]) -> None:
        out.extend({"matches": n, "bot": bot, "rating": round(mu, 3),
                    "low": round(mu - 2 * sigma, 3), "high": round(mu + 2 * sigma, 3)} for bot, mu, sigma in ratings)

    # The games once, in schedule order; a prefix of the matches is a prefix of them.
    games: list[ranking.Game] = []
    ends = []
    for m in ordered:
        games += rated_games([m], unit)
        ends.append(len(games))
    kept = [(n, ends[n - 1]) for n in cuts[:-1] if ends[n - 1] > 0]     # a prefix without a game has no point
    # lazy: numpy; arena show --html loads this module and fits nothing (see above)
    from ..ranking.history import fit_prefixes

    for (n, _), (_, fitted) in zip(kept, fit_prefixes(games, [g for _, g in kept], bots)):
        add(n, ((bot, r.mu, r.sigma) for bot, r in fitted.ratings.items()))
    # The leaderboard's rows are in rank order; the fits' are by name.
    add(cuts[-1], sorted((r.bot, r.rating, r.sigma) for r in final))
    return out


@dataclass(frozen=True)
class Digest:
    """What the report's sections read of one match's record and replay,
    small enough to come back from the worker process that wrote its page
    (so a report decodes each record and replays each match once)."""
    # Per seat: (ms, decision) of its trace, None where it has none; the whole
    # field None once ``Digests`` has folded it into its bots' times.
    times: list[list[tuple[float, int]] | None] | None
    # Of the decisions a row may name (each seat's SLOWEST, those with a fault),
    # or of all when made for the report itself: kind, hand, step, request id, built-in.
    decisions: dict[int, tuple[str, int, int, int | None, bool]]
    count: int                                      # decisions in the match
    steps: int
    faults: list[dict[str, Any]]                    # the replay's
    quoted: dict[int, dict[str, Any]]               # a decision with a fault: its request and stderr


def _trace_times(record: dict[str, Any], seats: int) -> list[list[tuple[float, int]] | None]:
    trace = record.get("trace")
    out: list[list[tuple[float, int]] | None] = []
    for s in range(seats):
        entries = trace[s]["decisions"] if isinstance(trace, list) and s < len(trace) else None
        out.append(None if entries is None else [(d[2], d[0]) for d in entries if d[2] is not None])
    return out


def _decision_times(store: ResultStore, matches: Sequence[StoredMatch],
                    digests: dict[str, Digest | None]) -> tuple[dict[str, BotTimes], bool]:
    """Per bot: its decision times (``BotTimes``); and whether some matches
    had no trace (their per-match mean stands in).  What ``Digests`` has
    folded already, of the same matches in the same order, is taken as it is."""
    out: dict[str, BotTimes] = {}
    fallback, start = False, 0
    if isinstance(digests, Digests) and _same(digests.matches, matches, digests.folded):
        out, fallback, start = digests.times, digests.fallback, digests.folded
    for m in matches[start:]:
        fallback |= _fold_times(out, m, _match_times(store, m, digests.get(m.match_id)))
    return out, fallback


def _same(these: Sequence[StoredMatch], those: Sequence[StoredMatch], count: int) -> bool:
    return len(those) >= count and all(a.match_id == b.match_id for a, b in zip(these[:count], those[:count]))


def _match_times(store: ResultStore, m: StoredMatch, digest: Digest | None) -> list[list[tuple[float, int]] | None]:
    """Per seat of ``m``: its (ms, decision) pairs, None where it has no trace."""
    if digest is not None and digest.times is not None:
        return digest.times
    if (stored := stored_times(store, m.match_id, len(m.bots))) is not None:
        return stored
    try:
        record = store.record(m.match_id)
    except StoreError:
        record = {}         # damaged: its per-match mean stands in
    return _trace_times(record, len(m.bots))


def _fold_times(out: dict[str, BotTimes], m: StoredMatch, times: list[list[tuple[float, int]] | None]) -> bool:
    """``m``'s decision times added to its bots'; whether a seat had none (its mean stands in)."""
    fallback = False
    for s, bot in enumerate(m.bots):
        entries = times[s]
        if entries is None:
            fallback = True
            mean = m.decision_stats[s].get("mean")
            if mean is not None:
                out.setdefault(bot, BotTimes(SLOWEST)).add_mean(mean * 1000)
            continue
        out.setdefault(bot, BotTimes(SLOWEST)).add(m.match_id, entries)
    return fallback


class Digests(dict[str, "Digest | None"]):
    """The digests of the report's matches by match id, as ``write_replays``
    hands them over (None: a page that could not be made), in the order of
    ``matches``.  Each one's decision times are folded into its bots'
    ``BotTimes`` as soon as every match before it has come, and then dropped:
    kept whole until the sections were built, they took about 130 KB a match,
    2.9 GB of peak memory for the report of 20,000 matches."""

    def __init__(self, store: ResultStore, matches: Sequence[StoredMatch]) -> None:
        super().__init__()
        self.store, self.matches = store, list(matches)
        self.folded = 0                         # matches[:folded] are in ``times``
        self.times: dict[str, BotTimes] = {}
        self.fallback = False

    def __setitem__(self, match_id: str, digest: Digest | None) -> None:
        super().__setitem__(match_id, digest)
        while self.folded < len(self.matches) and (m := self.matches[self.folded]).match_id in self:
            kept = self.get(m.match_id)
            self.fallback |= _fold_times(self.times, m, _match_times(self.store, m, kept))
            if kept is not None and kept.times is not None:
                super().__setitem__(m.match_id, dataclasses.replace(kept, times=None))
            self.folded += 1


def _digest(m: StoredMatch, record: dict[str, Any], replay: dict[str, Any], *, every: bool = False) -> Digest:
    """``every``: all decisions, not only those a row may name (a bot's
    slowest of the report are among its slowest of each match, in the same
    order: ``sorted`` is stable)."""
    steps = replay["steps"]
    decisions = replay["decisions"]
    times = _trace_times(record, len(m.bots))
    faulty = {f["decision"] for f in replay["faults"]} | {f["decision"] for f in m.faults}
    named = set(range(len(decisions))) if every else faulty.union(
        *({k for _, k in sorted(seat, key=lambda t: -t[0])[:SLOWEST]} for seat in times if seat))
    return Digest(
        times=times,
        decisions={k: (decisions[k]["kind"], steps[decisions[k]["step"]]["e"]["hand"] if decisions[k]["step"] >= 0
                       else 1, decisions[k]["step"], decisions[k]["id"], decisions[k]["builtin"])
                   for k in named if isinstance(k, int) and 0 <= k < len(decisions)},
        count=len(decisions), steps=len(steps), faults=replay["faults"],
        quoted={k: {"request": decisions[k]["request"], "stderr": decisions[k]["stderr"]}
                for k in faulty if isinstance(k, int) and 0 <= k < len(decisions)})


def _replay(store: ResultStore, match_id: str, back: str | None) -> tuple[StoredMatch, dict[str, Any], dict[str, Any]]:
    m = store.match(match_id)
    record = m.record if m.record is not None else store.record(match_id)
    faults = record.get("faults") if isinstance(record.get("faults"), list) else m.faults
    data = build_replay(record, m.bots, title=match_id, stderr_logs=m.stderr_logs, faults=faults,
                        places=m.places, back_link=back)
    return m, record, data


def stored_replay(store: ResultStore, match_id: str, cache: dict[str, dict[str, Any]] | None = None,
                  back: str | None = None) -> dict[str, Any]:
    """The replay data of a stored match (``cache``: made once for the
    sections and the replay file).  StoreError or ReplayError if it cannot be made."""
    if cache is not None and match_id in cache:
        return cache[match_id]
    data = _replay(store, match_id, back)[2]
    if cache is not None:
        cache[match_id] = data
    return data


def replay_and_digest(store: ResultStore, match_id: str, back: str | None) -> tuple[dict[str, Any], Digest | None]:
    """The replay data of a stored match and its ``Digest`` (None if its
    trace is malformed: the report reads it again, and says so there).
    StoreError or ReplayError if the replay cannot be made."""
    m, record, data = _replay(store, match_id, back)
    try:
        return data, _digest(m, record, data)
    except (KeyError, IndexError, TypeError):
        return data, None


def _deals_shared(matches: Sequence[StoredMatch]) -> dict[tuple[str, str], int]:
    """Per pair of bots, the duplicate deals they played together: the votes
    the head-to-head sign test has at most (``head_to_head``: one per deal;
    15 matches may be 5 deals: 5 votes, too few for 5 %)."""
    groups: dict[tuple[str, str], set[str]] = {}
    for m in matches:
        group = duplicate_group(m.match_id, m.deal)
        for a in m.bots:
            for b in m.bots:
                if a != b:
                    groups.setdefault((a, b), set()).add(group)
    return {pair: len(g) for pair, g in groups.items()}


def collect(store: ResultStore, rating: str | None = None,
            cache: dict[str, dict[str, Any]] | None = None, *, history: bool = True,
            shown: str | None = None, digests: dict[str, Digest | None] | None = None) -> ReportData:
    """Everything the report shows, from ``store``; the replays it had to make go into ``cache``
    (if one is given: a replay is a few MB).
    ``digests``: of the matches whose pages were written first (``writers``):
    their records are not read again, their matches not replayed again; the
    digests of the replays made here are added to it.
    ``history``: False leaves the ratings over the tournament out (a fit per
    point of the chart; one bot's page has no charts).  ``shown``: only this
    bot's section is shown (``--bot``), so only its rows get the requests and
    hands that take replays of their matches; the others' counts, for the
    grade book, are the same."""
    tournament = store.tournament() or {}
    matches = store.matches()
    bots = store.bots()
    unit = rating or _rating(store)
    level = _confidence(store)
    fixed = _Fixed(matches, bots, _seed(store), unit)
    rows = leaderboard(fixed, level)
    order = [r.bot for r in rows]
    h2h: dict[str, dict[str, dict[str, Any]]] = {}
    deals = _deals_shared(matches)
    for e in head_to_head(matches):
        h2h.setdefault(e.bot, {})[e.opponent] = {
            "played": e.played, "ahead": e.ahead, "behind": e.behind, "tied": e.tied,
            "share": e.share, "significant": e.significant, "p_value": e.p_value,
            "deals": deals.get((e.bot, e.opponent), 0)}
    # One bot's page shows its own times only: the records of the other matches need not be read.
    digests = {} if digests is None else digests
    times, fallback = _decision_times(store, matches if shown is None else [m for m in matches if shown in m.bots],
                                      digests)
    time_points = [{"bot": b, "ms": max(ms, 0.001)}      # a log scale has no 0
                   for b in order for ms in (times[b].spread(TIMES_PER_BOT) if b in times else [])]
    note = ("one point per decision" if not fallback
            else "matches stored without a decision trace count once each, with their mean time")
    faults: dict[str, dict[str, int]] = {b: {k: 0 for k in FAULT_KINDS} for b in order}
    for f in store.faults():
        faults.setdefault(f["bot"], {k: 0 for k in FAULT_KINDS})[f["kind"]] += 1
    match_rows = [{
        "match_id": m.match_id, "index": m.schedule_index, "deal": m.deal, "table": m.table, "rotation": m.rotation,
        "seats": [{"bot": b, "total": m.totals[s], "place": m.places[s], "forfeited": m.forfeited[s],
                   "caught": m.caught[s]} for s, b in enumerate(m.bots)],
        "faults": len(m.faults), "seconds": m.duration_seconds} for m in matches]
    sections = [_bot_section(b, matches, h2h.get(b, {}), faults.get(b, {}), times.get(b, BotTimes(SLOWEST)), store, cache,
                             digests, detail=shown is None or b == shown)
                for b in order]
    return ReportData(
        name=tournament.get("name", "tournament"), created=tournament.get("created", ""), rating_unit=unit,
        confidence=level, leaderboard=[asdict(r) for r in rows], head_to_head=h2h,
        seats=[asdict(s) for s in seat_effect(matches)],
        history=_history(matches, order, unit, rows) if history else [],
        times=time_points, times_note=note, faults=faults, matches=match_rows,
        failed=[{"match_id": f.match_id, "reason": f.reason, "bots": list(f.bots)} for f in store.failures()],
        bots=sections, order=order, scheduled=unfinished_size(store), neighbours=_neighbours(matches))


def _neighbours(matches: Sequence[StoredMatch]) -> dict[str, Any]:
    """The neighbours section: the numbers ``arena leaderboard --section neighbours`` shows."""
    cells: dict[str, dict[str, dict[str, Any]]] = {}
    for s in neighbour_effect(matches):
        cells.setdefault(s.bot, {})[s.before] = {**asdict(s), "difference": s.difference}
    summary = neighbour_summary(matches)
    return {"cells": cells, "summary": asdict(summary), "line": neighbour_note(summary), "cell_note": CELL_NOTE}


def _bot_section(bot: str, matches: Sequence[StoredMatch], h2h: dict[str, dict[str, Any]],
                 faults: dict[str, int], times: BotTimes, store: ResultStore,
                 cache: dict[str, dict[str, Any]] | None, digests: dict[str, Digest | None], *,
                 detail: bool = True) -> BotSection:
    mine = [(m, m.bots.index(bot)) for m in matches if bot in m.bots]
    # What the bot scored itself: not the arena's stand-in moves after a forfeit.
    hands = sum(m.own_hands(s) for m, s in mine)
    score = sum(row[s] for m, s in mine for row in m.hand_scores[:m.own_hands(s)])
    # Forfeits get a row of their own, apart from the last places played for.
    places = Counter(m.places[s] for m, s in mine if not m.forfeited[s])
    section = BotSection(
        bot=bot, matches=len(mine),
        mean_place=sum(m.places[s] for m, s in mine) / len(mine) if mine else None,
        score_per_hand=score / hands if hands else None,
        forfeits=sum(1 for m, s in mine if m.forfeited[s]),
        faults_by_kind=dict(faults), places=dict(sorted(places.items())),
        opponents=[{"opponent": o, **cell} for o, cell in sorted(h2h.items())],
        caught=[m.match_id for m, s in mine if m.caught[s]],
        off_turn_cpu=round(sum(m.off_turn_cpu[s] or 0.0 for m, s in mine), 3))
    section.slowest = [{"match_id": mid, "decision": k, "ms": ms} for ms, mid, k in times.slowest]
    refused = [(m, s, f) for m, s in mine for f in m.faults if f["seat"] == s and f["kind"] in REFUSED]
    section.refused = [{"fault": f["kind"], "match_id": m.match_id, "decision": f["decision"], "hand": f["hand"],
                        "decision_kind": f["decision_kind"], "detail": f["detail"], "reply": f["excerpt"],
                        "request_id": f["request_id"]} for m, s, f in refused[:REFUSED_SHOWN]]
    section.failures = _failures(mine)
    first = next(((m, f) for m, s in mine for f in m.faults if f["seat"] == s), None)
    if first is not None:
        m, f = first
        section.first_fault = first_fault_line(m.match_id, f["kind"], f["hand"], f["decision"],
                                               f["decision_kind"], f["request_id"], f["detail"])
    if detail:
        _add_requests(section, store, {m.match_id: m for m, _ in mine}, cache, digests)
    return section


def _failures(mine: Sequence[tuple[StoredMatch, int]]) -> list[dict[str, Any]]:
    """The bot's crashes and timeouts, one entry per kind and reason (a bot
    that crashes the same way in every match is one entry, with its count),
    in the order they first happened."""
    groups: dict[tuple[Any, ...], dict[str, Any]] = {}
    for m, s in mine:
        for f in m.faults:
            if f["seat"] != s or f["kind"] in REFUSED:
                continue
            key = (f["kind"], f["detail"], f["decision"] is None)
            entry = groups.get(key)
            if entry is None:
                if len(groups) == FAILED_SHOWN:
                    continue
                entry = groups[key] = {
                    "fault": f["kind"], "count": 0, "in_matches": set(), "match_id": m.match_id,
                    "decision": f["decision"], "hand": f["hand"], "decision_kind": f["decision_kind"],
                    "detail": f["detail"], "request_id": f["request_id"]}
            entry["count"] += 1
            entry["in_matches"].add(m.match_id)
    out = list(groups.values())
    for entry in out:
        entry["matches"] = len(entry.pop("in_matches"))
    return out


def _add_requests(section: BotSection, store: ResultStore, matches: dict[str, StoredMatch],
                  cache: dict[str, dict[str, Any]] | None, digests: dict[str, Digest | None]) -> None:
    """The request of each refused reply shown (and the reply, the request id
    if the database has none), and the hand and kind of each slow decision:
    from the digests of those matches' replays, made here if need be."""
    wanted = {e["match_id"] for e in section.refused + section.slowest + section.failures}
    for mid in sorted(wanted):
        m = matches[mid]
        digest = digests.get(mid)
        if digest is None:
            try:
                replay = stored_replay(store, mid, cache, back="../index.html")
                digest = _digest(m, m.record or {}, replay, every=True)
            except (ReplayError, StoreError):
                continue        # a damaged record: the rows stay, without request and hand
            # Another bot's rows may name this match too: its digest (of every
            # decision) serves them, a few KB where a replay kept is a few MB.
            digests[mid] = digest
        shown = {(f["decision"], f["seat"]): f for f in digest.faults}
        seat = m.bots.index(section.bot)
        for e in section.failures:
            if e["match_id"] == mid and e["decision"] is None:     # at start-up: what it wrote then
                e["stderr"] = (shown.get((None, seat)) or {}).get("stderr")
        for e in section.refused + section.slowest + section.failures:
            k = e["decision"]
            if e["match_id"] != mid or not isinstance(k, int) or not 0 <= k < digest.count:
                continue
            named = digest.decisions.get(k)
            if named is None:       # not among those a row may name: cannot happen, see _digest
                continue
            kind, hand, step, request_id, builtin = named
            e["kind"] = kind
            e["hand"] = hand
            e["step"] = min(step + 1, digest.steps - 1)
            if e.get("request_id") is None and not builtin:
                e["request_id"] = request_id
            if any(e is x for x in section.refused + section.failures):
                fault = shown.get((k, seat)) or {}
                quoted = digest.quoted.get(k) or {}
                e["request"] = quoted.get("request")
                e["reply"] = e.get("reply") or fault.get("reply")
                e["stderr"] = quoted.get("stderr")
                e["step"] = fault.get("step", e["step"])


# ranks: the leaderboard's range ("2-3") of ranks the bot could hold (1 + the bots
# clearly better than it to N - the bots clearly worse, each pair compared on its own);
# apart_from_next: whether that pair test tells it from the bot rated next below it
# (empty for the last): ranges that overlap may still be told apart;
# caught: the matches in which the bot was caught computing between its turns;
# first_fault: its first fault, where and why (what to tell its author first).
GRADEBOOK_COLUMNS = ("bot", "rank", "ranks", "apart_from_next", "rating", "matches", "mean_place", "score_per_hand",
                     *(f"faults_{k}" for k in FAULT_KINDS), "faults", "forfeits", "caught", "first_fault")


def gradebook_rows(data: ReportData) -> Iterable[list[Any]]:
    """One row per bot, in leaderboard order: GRADEBOOK_COLUMNS."""
    by_bot = {r["bot"]: r for r in data.leaderboard}
    for section in data.bots:
        r = by_bot[section.bot]
        kinds = [section.faults_by_kind.get(k, 0) for k in FAULT_KINDS]
        apart = r.get("apart_from_next")
        yield [section.bot, r["rank"], r["ranks"], "" if apart is None else "yes" if apart else "no",
               round(r["rating"], 2), section.matches,
               None if section.mean_place is None else round(section.mean_place, 3),
               None if section.score_per_hand is None else round(section.score_per_hand, 2),
               *kinds, sum(kinds), section.forfeits, len(section.caught), section.first_fault]
