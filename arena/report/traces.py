"""Each seat's decision times from a match record's trace, without decoding
the rest; and each bot's, in a size that does not grow with the tournament.

The report charts every decision's time, so it reads the trace of every
record: about 30 KB of a 170 KB record of a four-seat match.  Decoded as a
whole by the json module, a record took 8 ms (1,000 matches: 8 CPU-s of
the report); msgspec, told the trace's shape, skips the events and actions
and builds one small object per decision: 0.7 ms.  A record whose trace
does not have that shape (or that is kept in a file, or damaged) is read as
before, whole (``data._trace_times``), so what it gives is the same.
"""

from __future__ import annotations

from collections import Counter
from operator import itemgetter
from typing import Any

import msgspec

from ..tournament.results.database import ResultStore

__all__ = ["BotTimes", "Times", "stored_times"]

Times = list[list[tuple[float, int]] | None]     # per seat: (ms, decision) of its trace; None: no trace


class _Decision(msgspec.Struct, array_like=True, gc=False):
    index: Any                  # Any: what json.loads gives, int or float alike
    request_id: Any
    ms: Any
    stderr: Any = None


class _Seat(msgspec.Struct, gc=False):
    decisions: list[_Decision] | None       # no default: a seat without the key is read the old way


class _Record(msgspec.Struct, gc=False):
    trace: list[_Seat] | None = None


_DECODER = msgspec.json.Decoder(_Record)


def stored_times(store: ResultStore, match_id: str, seats: int) -> Times | None:
    """The decision times of each seat of ``match_id``, as ``data._trace_times``
    gives them from the whole record; None when the record is not one this
    reads (the caller then reads it whole)."""
    raw = store.record_bytes(match_id)
    if raw is None:
        return None
    try:
        trace = _DECODER.decode(raw).trace
    except msgspec.MsgspecError:
        return None
    out: Times = []
    for s in range(seats):
        entries = trace[s].decisions if trace is not None and s < len(trace) else None
        out.append(None if entries is None else [(d.ms, d.index) for d in entries if d.ms is not None])
    return out


class BotTimes:
    """One bot's decision times, kept in a size that does not grow with the
    tournament's: how often each time occurs (times are kept to the
    microsecond, so a few thousand distinct ones; the chart's order
    statistics need no more) and its ``slowest`` decisions so far, as
    (ms, match id, decision), slowest first, the earlier first among equal
    times.  A list of every decision held 120 bytes each: 140 MB at 1,000
    four-seat matches."""

    def __init__(self, slowest: int) -> None:
        self.counts: Counter[Any] = Counter()
        self.slowest: list[tuple[Any, str, int]] = []
        self._keep = slowest

    def add(self, match_id: str, entries: list[tuple[Any, int]]) -> None:
        """A seat's (ms, decision) of one match, in order."""
        self.counts.update(map(itemgetter(0), entries))
        if not entries or (len(self.slowest) == self._keep and max(map(itemgetter(0), entries)) <= self.slowest[-1][0]):
            return          # none slower than the slowest kept (an equal time: the earlier stays)
        # The slowest of all: the slowest so far, then this match's (sorted is stable).
        mine = sorted((e for e in entries if e[1] >= 0), key=lambda e: -e[0])[:self._keep]
        if mine and (len(self.slowest) < self._keep or mine[0][0] > self.slowest[-1][0]):
            merged = self.slowest + [(ms, match_id, k) for ms, k in mine]
            self.slowest = sorted(merged, key=lambda t: -t[0])[:self._keep]

    def add_mean(self, ms: Any) -> None:
        """A match without a trace: its mean time stands in (not a decision a row can name)."""
        self.counts[ms] += 1

    def spread(self, k: int) -> list[Any]:
        """At most ``k`` evenly spaced order statistics of every time: all of
        them sorted if they are no more, else the ``round(i * (N - 1) / (k - 1))``-th."""
        values = sorted(self.counts)
        total = sum(self.counts.values())
        if total <= k:
            return [v for v in values for _ in range(self.counts[v])]
        wanted = [round(i * (total - 1) / (k - 1)) for i in range(k)]
        out, seen, at = [], 0, 0
        for v in values:
            seen += self.counts[v]
            while at < len(wanted) and wanted[at] < seen:
                out.append(v)
                at += 1
        return out
