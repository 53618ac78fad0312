"""``arena show RESULTS`` without a match: what an organiser checks before
publishing a table.  Per bot: its matches, forfeits, faults by kind, and the
matches in which it was caught computing between its turns (``process.confine.turns``:
not a fault, but it took the CPU from the bot whose turn it was)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ...match.spec import first_fault_line
from ...process.errors import escaped
from ...words import plural
from ..pairing.schedule import stored_schedule_size
from ..results.database import FAULT_KINDS, ResultStore
from .faults import FAULT_NOUNS

__all__ = ["BotRecord", "bot_records", "summary_json", "summary_lines", "unfinished_size"]

LISTED = 5      # match ids listed per line, at most


@dataclass
class BotRecord:
    """One bot's conduct over the stored matches."""

    bot: str
    matches: int = 0
    forfeited: list[str] = field(default_factory=list)     # match ids
    faults: Counter[str] = field(default_factory=Counter)  # kind -> count
    caught: list[str] = field(default_factory=list)        # match ids
    first_fault: str = ""                                  # its first fault, where and why (first_fault_line)
    off_turn_cpu: float = 0.0                              # CPU seconds between turns, in those matches


def bot_records(store: ResultStore) -> list[BotRecord]:
    """Every bot of the database (by name), from its stored matches."""
    records = {b: BotRecord(b) for b in store.bots()}
    for m in store.matches():
        for seat, bot in enumerate(m.bots):
            r = records.setdefault(bot, BotRecord(bot))
            r.matches += 1
            if m.forfeited[seat]:
                r.forfeited.append(m.match_id)
            cpu = m.off_turn_cpu[seat]
            if cpu is not None:
                r.caught.append(m.match_id)
                r.off_turn_cpu += cpu
        for f in m.faults:
            r = records[m.bots[f["seat"]]]
            r.faults[f["kind"]] += 1
            if not r.first_fault:
                r.first_fault = first_fault_line(m.match_id, f["kind"], f["hand"], f["decision"],
                                                 f["decision_kind"], f["request_id"], f["detail"])
    return sorted(records.values(), key=lambda r: r.bot)


def _listed(ids: list[str]) -> str:
    shown = ", ".join(escaped(i) for i in ids[:LISTED])
    return shown + (f" and {len(ids) - LISTED} more" if len(ids) > LISTED else "")


def summary_lines(name: str, records: list[BotRecord], matches: int, failed: int) -> list[str]:
    """The summary as text: bots caught between turns, forfeits, faults."""
    out = [f"Tournament {escaped(name)}: {plural(matches, 'match', 'matches')} stored "
           f"(`arena matches RESULTS` lists them)"]
    if failed:
        out.append(f"  {plural(failed, 'match', 'matches')} failed with an arena error (not a bot's fault; "
                   f"running the tournament again retries them)")
    caught = [r for r in records if r.caught]
    if caught:
        out.append("CPU used between their turns, measured (no fault: each was stopped between its "
                   "turns from then on):")
        for r in caught:
            out.append(f"  {escaped(r.bot)}: in {len(r.caught)} of {plural(r.matches, 'match', 'matches')}, "
                       f"{r.off_turn_cpu:.3f} s of CPU between turns; {_listed(r.caught)}")
    else:
        out.append("CPU used between their turns: none measured")
    lost = [r for r in records if r.forfeited]
    if lost:
        out.append("Forfeits (the seat ranks last in the match, tied with any other seat that forfeited):")
        out += [f"  {escaped(r.bot)}: {len(r.forfeited)} of {plural(r.matches, 'match', 'matches')}; "
                f"{_listed(r.forfeited)}" for r in lost]
    else:
        out.append("Forfeits: none")
    faulty = [r for r in records if r.faults]
    if faulty:
        out.append("Faults (each bot's first, to tell its author; `arena show RESULTS MATCH` has the details):")
        for r in faulty:
            parts = [plural(r.faults[k], *FAULT_NOUNS.get(k, (k, None))) for k in FAULT_KINDS if r.faults[k]]
            out.append(f"  {escaped(r.bot)}: {', '.join(parts)}; first: {escaped(r.first_fault)}")
    else:
        out.append("Faults: none")
    return out


def summary_json(name: str, records: list[BotRecord], matches: int, failed: int) -> dict[str, Any]:
    return {
        "tournament": name,
        "matches": matches,
        "failed_matches": failed,
        "bots": [{"bot": r.bot, "matches": r.matches, "forfeited": r.forfeited,
                  "faults": {k: r.faults[k] for k in FAULT_KINDS}, "first_fault": r.first_fault or None,
                  "caught": r.caught, "off_turn_cpu": round(r.off_turn_cpu, 3)} for r in records],
    }


def unfinished_size(store: ResultStore) -> int | None:
    """The scheduled number of matches of the tournament in ``store`` while
    fewer are stored or failed (a run stopped part-way); None once all are,
    or when its run decides how many it plays."""
    tournament = store.tournament()
    expected = None if tournament is None else stored_schedule_size(tournament["config"])
    if expected is None or len(store) + len(store.failures()) >= expected:
        return None
    return expected
