"""The fault summary that ends ``arena run``: per bot, what went wrong in this run.

Counted from the results as they come (``FaultTally.add``), so it covers the
matches this run played, not those an earlier run stored.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ...match import FAULT_KINDS, MatchResult
from ...match.spec import first_fault_line
from ...words import plural

__all__ = ["FaultTally"]


# Each fault kind as a counted noun: "7 crashes", "1 illegal move".
FAULT_NOUNS: dict[str, tuple[str, str | None]] = {
    "crash": ("crash", "crashes"),
    "illegal": ("illegal move", None),
    "malformed": ("malformed reply", "malformed replies"),
    "timeout": ("timeout", None),
    "wrong_id": ("reply with a wrong id", "replies with a wrong id"),
}


@dataclass
class FaultTally:
    """Faults by bot and kind, forfeits, ignored lines and failed matches of one run."""

    faults: dict[str, Counter[str]] = field(default_factory=dict)
    forfeits: Counter[str] = field(default_factory=Counter)
    ignored: Counter[str] = field(default_factory=Counter)
    caught: Counter[str] = field(default_factory=Counter)     # matches caught computing between turns
    # bot -> (schedule index, its first fault there as one line): the earliest
    # match in the schedule, as `arena show RESULTS` finds it, whatever order
    # parallel matches finish in
    first: dict[str, tuple[int, str]] = field(default_factory=dict)
    failed: int = 0
    unstartable: int = 0     # of those, failed because a bot's program could not be started

    def add(self, bots: tuple[str, ...] | list[str], result: MatchResult, match_id: str = "",
            index: int = 0) -> None:
        for f in result.faults:
            bot = bots[f.seat]
            self.faults.setdefault(bot, Counter())[f.kind] += 1
            if bot not in self.first or index < self.first[bot][0]:
                self.first[bot] = (index, first_fault_line(match_id, f.kind, f.hand, f.decision, f.decision_kind,
                                                           f.request_id, f.detail))
        for seat, lost in enumerate(result.forfeited):
            if lost:
                self.forfeits[bots[seat]] += 1
        for w in result.warnings:
            self.ignored[bots[w.seat]] += w.count
        for seat, cpu in enumerate(result.off_turn_cpu):
            if cpu is not None:
                self.caught[bots[seat]] += 1

    def lines(self) -> list[str]:
        """``Faults this run: none``, or a heading and one line per bot that had
        any; then, in a section of their own, the bots caught computing
        between their turns: being caught is no fault (docs/PROTOCOL.md), so
        it is never listed as one."""
        bots = sorted(set(self.faults) | set(self.forfeits) | set(self.ignored))
        if not bots and not self.failed:
            out = ["Faults this run: none"]
        else:
            out = ["Faults this run (each bot's first, to tell its author; `arena show RESULTS MATCH` "
                   "has the details):"]
        for bot in bots:
            kinds = self.faults.get(bot, Counter())
            parts = [plural(kinds[k], *FAULT_NOUNS.get(k, (k, None))) for k in FAULT_KINDS if kinds[k]]
            if self.forfeits[bot]:
                parts.append(f"forfeited {plural(self.forfeits[bot], 'match', 'matches')}")
            if self.ignored[bot]:
                parts.append(plural(self.ignored[bot], "ignored line"))
            first = f"; first: {self.first[bot][1]}" if bot in self.first else ""
            out.append(f"  {bot}: {', '.join(parts)}{first}")
        if self.failed > self.unstartable:
            out.append(f"  arena errors: {plural(self.failed - self.unstartable, 'match', 'matches')} failed "
                       f"(not a bot's fault; logs/errors.log)")
        if self.unstartable:
            # Not the arena's either: the file names a program that cannot run (since the run began).
            out.append(f"  {plural(self.unstartable, 'match', 'matches')} failed because a bot's program could "
                       f"not be started (the lines above say which and why): fix it and run again, or run with "
                       f"--forfeit-unstartable to have that bot forfeit its matches instead")
        caught = sorted(bot for bot, n in self.caught.items() if n)
        if caught:
            # The words of `arena show RESULTS`, which lists the matches.
            out.append("CPU used between their turns, measured (no fault: each was stopped between its turns "
                       "from then on; `arena show RESULTS` lists the matches):")
            out += [f"  {bot}: in {plural(self.caught[bot], 'match', 'matches')}" for bot in caught]
        return out
