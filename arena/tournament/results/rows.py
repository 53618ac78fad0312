"""One match as the results database stores it.

``StoredMatch`` (a completed match) is the store's own input and output type
(see :mod:`arena.tournament.results.database` for the SQLite database itself), together
with the keys its statistics and faults keep and ``StoreError``, the one-line,
user-facing error raised by the store and by :meth:`StoredMatch.validate`.
``FailedMatch`` is a match that stopped on an arena-side error: it has no
result, only the reason, and is played again by the next run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ...process.errors import EXCERPT_CHARS, escaped, excerpt

__all__ = ["FAULT_KINDS", "STAT_KEYS", "FAULT_KEYS", "FailedMatch", "StoreError", "StoredMatch",
           "faults_with_record", "forfeit_adjusted"]

FAULT_KINDS = ("timeout", "crash", "malformed", "wrong_id", "illegal")
STAT_KEYS = ("count", "mean", "p95", "max", "timeouts")
FAULT_KEYS = ("seat", "kind", "hand", "decision", "decision_kind", "detail", "excerpt", "request_id")


class StoreError(Exception):
    """A one-line, user-facing problem with a results database."""


def forfeit_adjusted(places: Sequence[int], forfeited: Sequence[bool]) -> list[int]:
    """``places`` with every forfeited seat in the last place (the number of
    seats), as ``arena.match.forfeit_places`` gives them: earlier versions
    ordered forfeited seats among themselves by their totals, which after a
    forfeit are the arena's stand-in moves.  The places of the seats that
    finished stay as they are (every version computed them alike)."""
    last = len(places)
    return [last if f else p for p, f in zip(places, forfeited)]


def _quoted(line: Any) -> str | None:
    """A fault's offending line as stored: one line of printable text, bounded
    (``excerpt``'s form, which the match already gives; anything else is made so)."""
    if line is None:
        return None
    text = line if isinstance(line, str) else line.decode("utf-8", "replace") if isinstance(line, bytes) else str(line)
    if text.isprintable() and len(text) <= EXCERPT_CHARS + 3:
        return text
    return excerpt(text)


def _empty_stats() -> dict[str, Any]:
    return {"count": 0, "mean": None, "p95": None, "max": None, "timeouts": 0}


@dataclass(frozen=True)
class StoredMatch:
    """One completed match, as stored (the store's own input type).

    Lists are per seat in seat order unless said otherwise. ``places`` are
    forfeit-adjusted: the seats that finished by total, equal totals sharing a
    place (competition ranking: 1, 1, 3), and every forfeited seat in the last
    place, the number of seats (``forfeit_adjusted``; a match every seat
    forfeited is a draw in which all lost). ``hand_scores[h][s]`` is the score of
    seat ``s`` in hand ``h + 1``; ``hand_winners[h]`` the seat that went out, or
    None. Decision-time statistics are in seconds.

    The event log is given as ``record`` (a JSON-ready dict, stored compressed
    in the database) and/or ``record_path`` (a JSON file kept elsewhere).
    ``ResultStore.matches`` returns matches without their record (``record`` is
    None) to stay light; ``ResultStore.match`` and ``ResultStore.record`` load it.

    Construction normalises a little so that a round trip through the store
    compares equal: tuples become lists, ``forfeited`` becomes bools, the
    places of forfeited seats the shared last place (results stored by
    earlier versions ordered them by their stand-in totals), missing
    ``decision_stats`` / ``stderr_logs`` become empty statistics / None per
    seat, statistics keep only :data:`STAT_KEYS` (so ``DecisionStats.as_dict()``
    may be passed as is) and faults only :data:`FAULT_KEYS`, a fault's
    ``excerpt`` (the line the bot wrote) escaped and bounded as
    ``arena.process.errors.excerpt`` makes it: never raw bytes of a bot, and
    its ``detail`` one line of printable text.
    """

    match_id: str
    schedule_index: int
    table: int
    rotation: int
    deal: int
    seed: int
    bots: list[str]
    totals: list[int]
    places: list[int]
    forfeited: list[bool]
    hand_scores: list[list[int]]
    hand_winners: list[int | None]
    faults: list[dict[str, Any]] = field(default_factory=list)
    decision_stats: list[dict[str, Any]] = field(default_factory=list)
    stderr_logs: list[str | None] = field(default_factory=list)
    # CPU seconds a seat's bot used between its turns, if it was caught at it
    # (process.confine.turns; schema 4), else None.
    off_turn_cpu: list[float | None] = field(default_factory=list)
    record: dict[str, Any] | None = None
    record_path: str | None = None
    duration_seconds: float = 0.0
    started_at: str = ""

    def __post_init__(self) -> None:
        n = len(self.bots)
        put = lambda name, value: object.__setattr__(self, name, value)  # noqa: E731
        put("bots", list(self.bots))
        put("totals", list(self.totals))
        put("forfeited", [bool(f) for f in self.forfeited])
        # Lists of different lengths are left for validate() to name.
        put("places", forfeit_adjusted(self.places, self.forfeited) if len(self.places) == len(self.forfeited)
            else list(self.places))
        put("hand_scores", [list(row) for row in self.hand_scores])
        put("hand_winners", list(self.hand_winners))
        faults = [{k: dict(f).get(k) for k in FAULT_KEYS} for f in self.faults]
        for f in faults:
            f["excerpt"] = _quoted(f["excerpt"])
            if isinstance(f["detail"], str):
                f["detail"] = escaped(f["detail"]).replace("\t", " ")
        put("faults", faults)
        stats = list(self.decision_stats) or [_empty_stats() for _ in range(n)]
        put("decision_stats", [{k: dict(s).get(k, 0 if k in ("count", "timeouts") else None)
                                for k in STAT_KEYS} for s in stats])
        put("stderr_logs", [None if p is None else str(p) for p in self.stderr_logs] or [None] * n)
        put("off_turn_cpu", [None if c is None else float(c) for c in self.off_turn_cpu] or [None] * n)
        if self.record_path is not None:
            put("record_path", str(self.record_path))

    @property
    def players(self) -> int:
        return len(self.bots)

    @property
    def hands(self) -> int:
        return len(self.hand_scores)

    def own_hands(self, seat: int) -> int:
        """The hands ``seat``'s bot played itself, from the first: all of them,
        or for a forfeited seat those before the hand it forfeited in (its last
        fault's; none if that is not known), as the arena played the rest for
        it with stand-in moves.  What the bot scored and won is read from these."""
        if not self.forfeited[seat]:
            return len(self.hand_scores)
        lost = [f["hand"] for f in self.faults if f["seat"] == seat and isinstance(f["hand"], int)]
        return max(0, max(lost) - 1) if lost else 0

    @property
    def caught(self) -> list[bool]:
        """Per seat: its bot was caught computing between its turns."""
        return [c is not None for c in self.off_turn_cpu]

    def validate(self) -> None:
        """Raise StoreError (one line) if the match is not self-consistent."""
        def bad(msg: str) -> StoreError:
            return StoreError(f"match {self.match_id!r}: {msg}")

        if not isinstance(self.match_id, str) or not self.match_id:
            raise bad("match_id must be a non-empty string")
        n = len(self.bots)
        if n < 1:
            raise bad("no bots")
        if len(set(self.bots)) != n:
            raise bad(f"a bot appears twice in one match: {self.bots}")
        for name in ("totals", "places", "forfeited", "decision_stats", "stderr_logs", "off_turn_cpu"):
            if len(getattr(self, name)) != n:
                raise bad(f"{name} has {len(getattr(self, name))} entries for {n} seats")
        if len(self.hand_winners) != len(self.hand_scores):
            raise bad(f"{len(self.hand_winners)} hand winners for {len(self.hand_scores)} hands")
        for h, row in enumerate(self.hand_scores, start=1):
            if len(row) != n:
                raise bad(f"hand {h} has {len(row)} scores for {n} seats")
        for h, w in enumerate(self.hand_winners, start=1):
            if w is not None and not (isinstance(w, int) and 0 <= w < n):
                raise bad(f"hand {h} winner {w!r} is not a seat")
        for f in self.faults:
            if not (isinstance(f["seat"], int) and 0 <= f["seat"] < n):
                raise bad(f"fault seat {f['seat']!r} is not a seat")



@dataclass(frozen=True)
class FailedMatch:
    """A scheduled match whose last attempt raised an arena-side error.

    Not a result: rankings ignore it, and the next run of the tournament plays
    it again (a success then replaces this row). ``reason`` is one line
    (``"ZeroDivisionError: division by zero"``); the traceback is in the file
    ``log_path`` names, if it could be written. ``attempts`` counts the failed
    attempts so far.
    """

    match_id: str
    schedule_index: int
    bots: tuple[str, ...]
    reason: str
    log_path: str | None = None
    attempts: int = 1
    failed_at: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "bots", tuple(self.bots))


def faults_with_record(faults: list[dict[str, Any]], record: dict[str, Any]) -> list[dict[str, Any]]:
    """A match's fault rows, each with its ``excerpt`` and ``request_id``: a
    database of schema 2 stored neither, but the match record holds the
    faults with their lines, and its trace the request id of each decision.
    Entries of the record that do not read as such are passed over (it is a
    file: it may be older, or damaged)."""
    lines: dict[tuple[Any, Any], Any] = {}
    for f in record.get("faults") or []:
        if isinstance(f, dict):
            lines.setdefault((f.get("seat"), f.get("decision")), f.get("excerpt"))
    ids: dict[tuple[Any, Any], Any] = {}
    trace = record.get("trace")
    for seat, t in enumerate(trace if isinstance(trace, list) else []):
        for d in (t.get("decisions") or []) if isinstance(t, dict) else []:
            if isinstance(d, list) and len(d) >= 2:
                ids[(seat, d[0])] = d[1]
    out = []
    for f in faults:
        key = (f.get("seat"), f.get("decision"))
        g = dict(f)
        if g.get("excerpt") is None:
            g["excerpt"] = _quoted(lines.get(key))
        if g.get("request_id") is None and f.get("decision") is not None:
            rid = ids.get(key)
            g["request_id"] = rid if isinstance(rid, int) and not isinstance(rid, bool) else None
        out.append(g)
    return out
