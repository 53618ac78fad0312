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
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from typing import Any

from ..ranking import rank_ranges
from ..tournament.results.database import ResultStore, StoredMatch
from ..tournament.standings.leaderboard import LeaderboardRow, leaderboard_rows, league_bootstrap_seed
from ..tournament.standings.ratings import assess_matches
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
    matches = [] if store is None else store.matches()
    out = Board(config.name)
    rows = _rows(matches, versions, league_bootstrap_seed(config.seed))
    playing = [v for v in versions if v.status == PLAYING]
    out.leaderboard = _current(rows, playing, config)
    out.authors = _authors(versions, rows)
    out.recent = [{"match_id": m.match_id, "started_at": m.started_at, "faults": len(m.faults),
                   "seats": [{"bot": b, "place": p, "total": t, "forfeited": f}
                             for b, p, t, f in sorted(zip(m.bots, m.places, m.totals, m.forfeited),
                                                      key=lambda s: s[1])]}
                  for m in sorted(matches, key=lambda m: (m.started_at, m.match_id), reverse=True)[:RECENT]]
    out.health = _health(matches, versions, store, now)
    return out


def _rows(matches: list[StoredMatch], versions: list[Version], seed: int) -> dict[str, LeaderboardRow]:
    """The leaderboard of every version that played, by name."""
    names = sorted({b for m in matches for b in m.bots})
    if not names:
        return {}
    assessment = assess_matches(matches, names, CONFIDENCE, seed=seed)
    rows = {r.bot: r for r in leaderboard_rows(matches, assessment)}
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


def _health(matches: list[StoredMatch], versions: list[Version], store: ResultStore | None,
            now: datetime) -> dict[str, Any]:
    since = (now - HOUR).isoformat(timespec="seconds")
    last_hour = [m for m in matches if m.started_at >= since]
    faults: Counter[str] = Counter(f["kind"] for m in last_hour for f in m.faults)
    return {"matches": len(matches), "matches_last_hour": len(last_hour),
            "queue": sum(1 for v in versions if v.status == SUBMITTED),
            "failed": 0 if store is None else len(store.failures()),
            "faults_last_hour": sum(faults.values()),
            "fault_kinds": ", ".join(f"{n} {k}" for k, n in sorted(faults.items())) or "none",
            "last_match": max((m.started_at for m in matches), default=None)}
