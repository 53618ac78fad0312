"""What the league's page shows, read from its results and register.

The ratings are fitted to every stored match, retired versions' included
(their games tell about their opponents), with 95 % bootstrap intervals
over duplicate deals, as ``arena leaderboard`` fits a tournament's.  The
current leaderboard lists the playing versions, one per author, and each
one's rank range among them (1 + the playing versions clearly better, N -
those clearly worse).  A playing version is in its **placement** until it has
played ``placement_matches`` matches and its range is at most ``max_width``
ranks wide, and **active** from then on.
"""

from __future__ import annotations

import hashlib
import heapq
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from typing import Any

from ..ranking import rank_ranges
from ..ranking.counted import Counted
from ..tournament.results.database import ResultStore, StoredMatch
from ..tournament.standings.leaderboard import LeaderboardRow, RowTally, league_bootstrap_seed
from ..tournament.standings.ratings import games_of
from .config import LeagueConfig
from .register import BUILD_OUTPUT, PLAYING, SUBMITTED, Register, Version

__all__ = ["Board", "board", "state_key"]

CONFIDENCE = 0.95
RECENT = 20          # matches listed under "recent matches"
HOUR = timedelta(hours=1)


@dataclass
class Board:
    """Everything the page shows, made of plain values."""

    name: str
    leaderboard: list[dict[str, Any]] = field(default_factory=list)
    authors: list[dict[str, Any]] = field(default_factory=list)
    recent: list[dict[str, Any]] = field(default_factory=list)
    health: dict[str, Any] = field(default_factory=dict)


def state_key(store: ResultStore | None, register: Register) -> str:
    """Changes whenever what the page shows may have: a match stored or
    failed, a version added, checked or retired.  Cheap: counts, not reads."""
    matches = 0 if store is None else len(store)
    failures = 0 if store is None else len(store.failures())
    versions = ",".join(f"{v.name}:{v.status}" for v in register.versions())
    return hashlib.sha256(f"{matches}/{failures}/{versions}".encode()).hexdigest()[:16]


def board(config: LeagueConfig, store: ResultStore | None, register: Register,
          now: datetime | None = None) -> Board:
    now = now or datetime.now(timezone.utc)
    versions = register.versions()
    seen = _Seen(now)
    if store is not None:
        for m in store.iter_matches():          # a batch at a time, none kept (``_Seen``)
            seen.add(m)
    out = Board(config.name)
    rows = _fitted(seen, versions, league_bootstrap_seed(config.secret))
    playing = [v for v in versions if v.status == PLAYING]
    out.leaderboard = _current(rows, playing, config)
    out.authors = _authors(versions, rows)
    out.recent = [entry for _, _, entry in sorted(seen.recent, reverse=True)]
    out.health = _health(seen, versions, store)
    return out


class _Seen:
    """What the page shows of the stored matches, read once each and let go:
    the games as the fit reads them (``Counted``), each version's counts
    (``RowTally``), the newest ``RECENT``, the last hour's.  The page held
    every match before, and every hand as a ``Game``: 145 MB at 500
    versions, growing with the league (benchmarks/league.py --only d)."""

    def __init__(self, now: datetime) -> None:
        self.counted = Counted()
        self.tally = RowTally()
        self.since = (now - HOUR).isoformat(timespec="seconds")
        self.recent: list[tuple[str, str, dict[str, Any]]] = []      # a heap, the oldest of them first
        self.matches = self.last_hour = 0
        self.faults: Counter[str] = Counter()
        self.last_match: str | None = None

    def add(self, m: StoredMatch) -> None:
        self.counted.add(games_of(m.match_id, m.deal, m.bots, m.places, m.forfeited, m.hand_scores))
        self.tally.add(m)
        self.matches += 1
        if m.started_at >= self.since:
            self.last_hour += 1
            self.faults.update(f["kind"] for f in m.faults)
        self.last_match = max(self.last_match or m.started_at, m.started_at)
        key = (m.started_at, m.match_id)
        if len(self.recent) < RECENT or key > self.recent[0][:2]:
            entry = {"match_id": m.match_id, "started_at": m.started_at, "faults": len(m.faults),
                     "seats": [{"bot": b, "place": p, "total": t, "forfeited": f}
                               for b, p, t, f in sorted(zip(m.bots, m.places, m.totals, m.forfeited),
                                                        key=lambda s: s[1])]}
            (heapq.heappush if len(self.recent) < RECENT else heapq.heapreplace)(self.recent, (*key, entry))


def _rows(matches: list[StoredMatch], versions: list[Version], seed: int) -> dict[str, LeaderboardRow]:
    """The leaderboard of every version that played, by name (of a list of matches: benchmarks)."""
    seen = _Seen(datetime.now(timezone.utc))
    for m in matches:
        seen.add(m)
    return _fitted(seen, versions, seed)


def _fitted(seen: _Seen, versions: list[Version], seed: int) -> dict[str, LeaderboardRow]:
    """The leaderboard of every version that played, by name."""
    if not seen.counted.players:
        return {}
    # lazy: arena.ranking.confidence loads numpy (tests/test_lean_imports.py REPORTING)
    from ..ranking.confidence import assess_counted

    assessment = assess_counted(seen.counted, (), CONFIDENCE, seed=seed)
    rows = {r.bot: r for r in seen.tally.rows(assessment)}
    separated = assessment.pair_separated()
    # Each row's rank range among the playing versions only (retired ones are not in the race).
    playing = {v.name for v in versions if v.status == PLAYING}
    index = [i for i, name in enumerate(assessment.order) if name in playing]
    ranges = rank_ranges([[separated[i][j] for j in index] for i in index])
    for (first, last), i in zip(ranges, index):
        name = assessment.order[i]
        rows[name] = _with_ranks(rows[name], first, last)
    return rows


def _with_ranks(row: LeaderboardRow, first: int, last: int) -> LeaderboardRow:
    return replace(row, rank=first, ranks=str(first) if first == last else f"{first}-{last}")


def _current(rows: dict[str, LeaderboardRow], playing: list[Version], config: LeagueConfig) -> list[dict[str, Any]]:
    placement = config.matchmaking
    out = []
    for v in playing:
        row = rows.get(v.name)
        first, last = _span(row.ranks) if row is not None else (1, len(playing))
        matches = row.matches if row is not None else 0
        placed = matches >= placement.placement_matches and last - first + 1 <= placement.max_width
        out.append({"version": v.name, "author": v.author, "rating": None if row is None else row.rating,
                    "low": None if row is None else row.low, "high": None if row is None else row.high,
                    "ranks": f"{first}" if first == last else f"{first}-{last}", "matches": matches,
                    "mean_place": None if row is None else row.mean_place,
                    "faults": 0 if row is None else row.faults, "stage": "active" if placed else "placement"})
    out.sort(key=lambda r: (r["rating"] is None, -float(r["rating"] or 0.0), str(r["version"])))
    for i, r in enumerate(out, start=1):
        r["position"] = i
    return out


def _span(ranks: str) -> tuple[int, int]:
    first, _, last = ranks.partition("-")
    return int(first), int(last or first)


def _authors(versions: list[Version], rows: dict[str, LeaderboardRow]) -> list[dict[str, Any]]:
    """Each author's versions, newest first, with the rating each earned, and
    why a refused one was refused, but not its build's output: on a public page
    a compiler's errors would show the author's source (its author sees them
    on ``/mine``)."""
    by_author: dict[str, list[dict[str, Any]]] = {}
    for v in versions:
        row = rows.get(v.name)
        by_author.setdefault(v.author, []).append({
            "version": v.name, "status": v.status, "submitted_at": v.submitted_at,
            "reasons": [r for r in v.reasons if not r.startswith(BUILD_OUTPUT)],
            "rating": None if row is None else row.rating, "low": None if row is None else row.low,
            "high": None if row is None else row.high, "matches": 0 if row is None else row.matches})
    return [{"author": a, "versions": list(reversed(vs))} for a, vs in sorted(by_author.items())]


def _health(seen: _Seen, versions: list[Version], store: ResultStore | None) -> dict[str, Any]:
    return {"matches": seen.matches, "matches_last_hour": seen.last_hour,
            "queue": sum(1 for v in versions if v.status == SUBMITTED),
            "failed": 0 if store is None else len(store.failures()),
            "faults_last_hour": sum(seen.faults.values()),
            "fault_kinds": ", ".join(f"{n} {k}" for k, n in sorted(seen.faults.items())) or "none",
            "last_match": seen.last_match}
