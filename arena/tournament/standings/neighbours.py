"""The neighbour effect: how a bot fared seated directly after another.

Play goes left, so the bot in seat ``s + 1`` (mod the table size ``k``)
sees the discards of the bot in seat ``s`` first and has the first right to
buy them (:mod:`arena.tournament.pairing.seating`).  For each ordered pair
``(a, b)`` that shared a table of 3 or more seats, this compares ``b``'s
mean place in the matches it sat directly after ``a`` with its mean place
in their other matches together.  A table of 2 seats puts each bot directly
after the other in every match, so it says nothing about neighbours and is
left out.

The counts show the balance: ``seating: balanced`` seats ``b`` directly
after ``a`` in ``1 / (k - 1)`` of their matches together (the *fair*
share), ``seating: rotate`` always after the same bot, so there most pairs
have no matches on one side and no difference.

The field's figure is the mean absolute difference over the pairs, each
weighted by ``n1 n2 / (n1 + n2)`` (the inverse of its variance, up to the
spread of places); and beside it what chance alone would give with the same
counts: ``sqrt(2 / pi)`` standard errors of each difference, from ``b``'s
pooled spread of places within the two sides.  With few matches a mean
absolute difference is never near 0, so it is the gap between the two that
says neighbours matter.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field

from ..results.database import StoredMatch
from .formats import FORMATS, Column, format_table, name_cell, tabulate, terminal_json

NEIGHBOUR_TITLE = "Neighbours (row's mean place directly after column, minus with column elsewhere)"

__all__ = ["NeighbourStat", "NeighbourSummary", "neighbour_effect", "neighbour_summary", "format_neighbours",
           "neighbour_note", "NEIGHBOUR_COLUMNS", "NEIGHBOUR_TITLE"]


@dataclass(frozen=True)
class NeighbourStat:
    """How ``bot`` fared seated directly after ``before``, in the matches both played (3+ seats)."""
    before: str
    bot: str
    shared: int                     # matches with both at the table
    after: int                      # of them, ``bot`` in the seat after ``before``'s
    fair: float                     # what a perfect balance gives: 1 / (k - 1) of each shared match
    place_after: float | None       # ``bot``'s mean place in the ``after`` matches
    place_elsewhere: float | None   # in the other ``shared - after``

    @property
    def difference(self) -> float | None:
        """``place_after - place_elsewhere``: below 0, ``bot`` did better directly after ``before``."""
        if self.place_after is None or self.place_elsewhere is None:
            return None
        return self.place_after - self.place_elsewhere

    @property
    def off(self) -> float:
        """How far ``after`` is from the fair share: 0 in a perfect balance."""
        return self.after - self.fair


@dataclass(frozen=True)
class NeighbourSummary:
    """The neighbour effect of the field in one figure, and how balanced the seatings were."""
    pairs: int                      # ordered pairs that shared a table of 3+ seats
    measured: int                   # of them, seated both directly after and elsewhere (3+ matches)
    effect: float | None            # weighted mean |difference|, in places
    chance: float | None            # what it would be by chance alone, with the same counts
    imbalance: float | None         # the largest |after - fair| over the pairs, in matches
    two_seats: bool = False         # every match had 2 seats: nothing to show


@dataclass
class _Pair:
    after: list[int] = field(default_factory=list)       # ``b``'s places directly after ``a``
    elsewhere: list[int] = field(default_factory=list)   # and in their other matches together
    fair: float = 0.0


def _pairs(matches: Iterable[StoredMatch]) -> tuple[dict[tuple[str, str], _Pair], bool]:
    """Per ordered pair (before, bot): the bot's places on either side; and
    whether any match had 3 or more seats."""
    pairs: dict[tuple[str, str], _Pair] = {}
    wide = False
    for m in matches:
        k = len(m.bots)
        if k < 3:
            continue
        wide = True
        for i, a in enumerate(m.bots):
            for j, b in enumerate(m.bots):
                if i == j:
                    continue
                p = pairs.setdefault((a, b), _Pair())
                (p.after if j == (i + 1) % k else p.elsewhere).append(m.places[j])
                p.fair += 1 / (k - 1)
    return pairs, wide


def _mean(values: Sequence[int]) -> float | None:
    return sum(values) / len(values) if values else None


def _ordered(keys: Iterable[tuple[str, str]], order: Sequence[str] | None) -> list[tuple[str, str]]:
    """By the bot whose place is measured, then the one before it: in
    ``order`` (the leaderboard's), names not in it after, by name."""
    rank = {b: i for i, b in enumerate(order or ())}
    return sorted(keys, key=lambda p: (rank.get(p[1], len(rank)), p[1], rank.get(p[0], len(rank)), p[0]))


def neighbour_effect(matches: Iterable[StoredMatch], order: Sequence[str] | None = None) -> list[NeighbourStat]:
    """Every ordered pair that shared a table of 3 or more seats, by bot
    (in ``order``, else by name), then the bot before it."""
    pairs, _ = _pairs(matches)
    return [NeighbourStat(before=a, bot=b, shared=len(p.after) + len(p.elsewhere), after=len(p.after),
                          fair=p.fair, place_after=_mean(p.after), place_elsewhere=_mean(p.elsewhere))
            for a, b in _ordered(pairs, order) for p in (pairs[a, b],)]


def _chance(p: _Pair) -> tuple[float, float] | None:
    """(weight, the expected |difference| by chance) of a pair measured on
    both sides, with at least 3 matches for a spread; None otherwise."""
    n1, n2 = len(p.after), len(p.elsewhere)
    if n1 == 0 or n2 == 0 or n1 + n2 < 3:
        return None
    m1, m2 = sum(p.after) / n1, sum(p.elsewhere) / n2
    pooled = (sum((x - m1) ** 2 for x in p.after) + sum((x - m2) ** 2 for x in p.elsewhere)) / (n1 + n2 - 2)
    return n1 * n2 / (n1 + n2), math.sqrt(2 / math.pi) * math.sqrt(pooled * (1 / n1 + 1 / n2))


def neighbour_summary(matches: Sequence[StoredMatch]) -> NeighbourSummary:
    """The field's neighbour effect against chance, and the balance of the counts."""
    pairs, wide = _pairs(matches)
    total = effect = chance = 0.0
    measured = 0
    for p in pairs.values():
        got = _chance(p)
        if got is None:
            continue
        weight, expected = got
        measured += 1
        total += weight
        effect += weight * abs(sum(p.after) / len(p.after) - sum(p.elsewhere) / len(p.elsewhere))
        chance += weight * expected
    return NeighbourSummary(
        pairs=len(pairs), measured=measured, effect=effect / total if total else None,
        chance=chance / total if total else None,
        imbalance=max((abs(len(p.after) - p.fair) for p in pairs.values()), default=None),
        two_seats=bool(matches) and not wide)


# -- formatting ------------------------------------------------------------------

NEIGHBOUR_COLUMNS = (
    Column("bot", "Bot"),
    Column("before", "Directly after"),
    Column("shared", "Together"),
    Column("after", "After"),
    Column("fair", "Fair", 2, 2),
    Column("place_after", "Place after", 3, 2),
    Column("place_elsewhere", "Place elsewhere", 3, 2),
    Column("difference", "Difference", 3, 2),
)

TWO_SEATS = ("Every table had 2 seats: each bot sat directly after the other in every match, "
             "so there is no neighbour effect to show.")

CELL_NOTE = ("Cell: the row bot's mean place sitting directly after the column bot minus its mean place in "
             "their other matches together (below 0: better right after it), and (matches directly after / "
             "together).")


def _number(value: float) -> str:
    return f"{round(value, 2):g}"


def neighbour_note(summary: NeighbourSummary) -> str:
    """The field's figure and the balance, in one line (the trivial case's line for 2 seats)."""
    if summary.two_seats:
        return TWO_SEATS
    if not summary.pairs or summary.imbalance is None:
        return "No match at a table of 3 or more seats is stored: no neighbours to compare."
    if summary.effect is None or summary.chance is None:
        effect = ("Neighbour effect: not measurable, no pair sat both directly after and elsewhere in 3 or "
                  "more matches (as when a bot always sits after the same one, seating: rotate).")
    else:
        effect = (f"Neighbour effect: {summary.effect:.2f} places (mean |difference| over {summary.measured} "
                  f"pairs, weighted by their counts), against about {summary.chance:.2f} by chance alone.")
    if summary.imbalance < 0.005:
        return f"{effect} Balance: exact, every pair sat directly after 1/(k-1) of its matches together."
    return (f"{effect} Balance: every pair sat directly after within {_number(summary.imbalance)} matches of "
            f"its fair share, 1/(k-1) of its matches together.")


def _cell(stat: NeighbourStat | None) -> str:
    if stat is None:
        return "-"
    diff = stat.difference
    return ("-" if diff is None else f"{diff:+.2f}") + f" ({stat.after}/{stat.shared})"


def _matrix(stats: Sequence[NeighbourStat], fmt: str, order: Sequence[str] | None) -> str:
    by_pair = {(s.bot, s.before): s for s in stats}
    names = [b for b, _ in _ordered({(n, n) for s in stats for n in (s.bot, s.before)}, order)]
    table = [[name_cell(b, fmt), *("-" if a == b else _cell(by_pair.get((b, a))) for a in names)]
             for b in names]
    return tabulate(table, headers=["after", *(name_cell(n, fmt) for n in names)],
                    tablefmt="simple" if fmt == "plain" else "github",
                    disable_numparse=True, colalign=["left"] + ["right"] * len(names))


def _summary_json(summary: NeighbourSummary) -> dict[str, object]:
    out = asdict(summary)
    for key, digits in (("effect", 3), ("chance", 3), ("imbalance", 2)):
        if out[key] is not None:
            out[key] = round(out[key], digits)
    return out


def format_neighbours(matches: Sequence[StoredMatch], fmt: str = "plain",
                      order: Sequence[str] | None = None) -> str:
    """csv: one row per ordered pair; json: ``{"summary": ..., "pairs": [...]}``;
    plain/markdown: a matrix (row: the bot measured, column: the bot it sat
    after), the cell note and the field's line, or only the line for tables of 2."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    stats = neighbour_effect(matches, order)
    if fmt == "csv":
        return format_table(NEIGHBOUR_COLUMNS, stats, fmt)
    summary = neighbour_summary(matches)
    if fmt == "json":
        return terminal_json({"summary": _summary_json(summary),
                              "pairs": json.loads(format_table(NEIGHBOUR_COLUMNS, stats, fmt))})
    if summary.two_seats or not stats:
        return neighbour_note(summary)
    return f"{_matrix(stats, fmt, order)}\n\n{CELL_NOTE}\n{neighbour_note(summary)}"
