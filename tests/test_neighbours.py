"""The neighbour effect (arena.tournament.standings.neighbours): how a bot placed
seated directly after another, on hand-made matches whose every number is
worked out here by hand; and its formats, the case of 2 seats, and names
from the database escaped."""

from __future__ import annotations

import csv
import io
import json
import math
from fractions import Fraction as F
from pathlib import Path

import pytest

from arena.tournament.results.database import ResultStore, StoredMatch
from arena.tournament.standings.leaderboard import report
from arena.tournament.standings.neighbours import (
    TWO_SEATS,
    format_neighbours,
    neighbour_effect,
    neighbour_note,
    neighbour_summary,
)


def mk(i: int, bots: list[str], places: list[int]) -> StoredMatch:
    totals = [10 * p for p in places]
    return StoredMatch(match_id=f"m{i}", schedule_index=i, table=0, rotation=i, deal=0, seed=i, bots=bots,
                       totals=totals, places=places, forfeited=[False] * len(bots), hand_scores=[totals],
                       hand_winners=[None], faults=[])


# The bot in seat s + 1 (mod k) sits directly after the bot in seat s:
#   m0 [A B C]: A->B, B->C, C->A     m1 [A C B]: A->C, C->B, B->A     m2 [B A C]: B->A, A->C, C->B
#   m3 [A B D]: A->B, B->D, D->A     m4 [C D]: 2 seats, left out     m5 [A B E D]: A->B, B->E, E->D, D->A
# So C and D never share a counted table, and A and E, opposite in m5, never sit next to each other.
MATCHES = [
    mk(0, ["A", "B", "C"], [1, 2, 3]),
    mk(1, ["A", "C", "B"], [2, 1, 3]),
    mk(2, ["B", "A", "C"], [3, 1, 2]),
    mk(3, ["A", "B", "D"], [2, 1, 3]),
    mk(4, ["C", "D"], [1, 2]),
    mk(5, ["A", "B", "E", "D"], [4, 1, 2, 3]),
]

# (before, bot): together, directly after, the fair share (1/2 of each table of 3, 1/3 of the table of 4),
# the bot's places directly after and elsewhere.
EXPECTED = {
    ("A", "B"): (5, 3, F(7, 3), [2, 1, 1], [3, 3]),     # after: m0 m3 m5; elsewhere: m1 m2
    ("B", "A"): (5, 2, F(7, 3), [2, 1], [1, 2, 4]),     # after: m1 m2; elsewhere: m0 m3 m5
    ("A", "C"): (3, 2, F(3, 2), [1, 2], [3]),
    ("C", "A"): (3, 1, F(3, 2), [1], [2, 1]),
    ("B", "C"): (3, 1, F(3, 2), [3], [1, 2]),
    ("C", "B"): (3, 2, F(3, 2), [3, 3], [2]),
    ("A", "D"): (2, 0, F(5, 6), [], [3, 3]),            # never directly after A
    ("D", "A"): (2, 2, F(5, 6), [2, 4], []),            # always
    ("B", "D"): (2, 1, F(5, 6), [3], [3]),
    ("D", "B"): (2, 0, F(5, 6), [], [1, 1]),
    ("A", "E"): (1, 0, F(1, 3), [], [2]),
    ("E", "A"): (1, 0, F(1, 3), [], [4]),
    ("B", "E"): (1, 1, F(1, 3), [2], []),
    ("E", "B"): (1, 0, F(1, 3), [], [1]),
    ("D", "E"): (1, 0, F(1, 3), [], [2]),
    ("E", "D"): (1, 1, F(1, 3), [3], []),
}


def mean(values: list[int]) -> float | None:
    return sum(values) / len(values) if values else None


def test_each_pair_by_hand() -> None:
    got = {(s.before, s.bot): s for s in neighbour_effect(MATCHES)}
    assert set(got) == set(EXPECTED)        # C and D met only at a table of 2
    for pair, (shared, after, fair, places_after, places_elsewhere) in EXPECTED.items():
        s = got[pair]
        assert (s.shared, s.after) == (shared, after), pair
        assert s.fair == pytest.approx(float(fair)), pair
        assert s.place_after == mean(places_after) and s.place_elsewhere == mean(places_elsewhere), pair
    assert got["A", "B"].difference == pytest.approx(4 / 3 - 3)
    assert got["B", "A"].difference == pytest.approx(1.5 - 7 / 3)
    assert got["A", "D"].place_after is None and got["A", "D"].difference is None
    assert got["A", "E"].after == 0 and got["E", "A"].after == 0        # never next to each other
    assert got["D", "A"].off == pytest.approx(2 - 5 / 6)


def test_the_field_figure_by_hand() -> None:
    summary = neighbour_summary(MATCHES)
    assert summary.pairs == 16 and not summary.two_seats
    assert summary.imbalance == pytest.approx(7 / 6)       # D before A: 2 of a fair 5/6
    # Measured: both sides seen and 3 or more matches.  Weight n1 n2 / (n1 + n2); |difference|;
    # pooled variance of the places within the two sides (sum of squares / (n - 2)):
    #   A,B: 6/5, 5/3, (2/3 + 0) / 3        B,A: 6/5, 5/6, (1/2 + 14/3) / 3
    #   A,C: 2/3, 3/2, 1/2   C,A: 2/3, 1/2, 1/2   B,C: 2/3, 3/2, 1/2   C,B: 2/3, 1, 0
    measured = [(F(6, 5), F(5, 3), F(2, 9), 3, 2), (F(6, 5), F(5, 6), F(31, 18), 2, 3),
                (F(2, 3), F(3, 2), F(1, 2), 2, 1), (F(2, 3), F(1, 2), F(1, 2), 1, 2),
                (F(2, 3), F(3, 2), F(1, 2), 1, 2), (F(2, 3), F(1), F(0), 2, 1)]
    assert summary.measured == 6
    total = sum(w for w, *_ in measured)
    assert total == F(76, 15)
    assert summary.effect == pytest.approx(float(sum(w * d for w, d, *_ in measured) / total))
    assert summary.effect == pytest.approx(float(F(45, 38)))
    chance = sum(float(w) * math.sqrt(2 / math.pi) * math.sqrt(float(v) * (1 / n1 + 1 / n2))
                 for w, _, v, n1, n2 in measured) / float(total)
    assert summary.chance == pytest.approx(chance)
    line = neighbour_note(summary)
    assert f"{summary.effect:.2f} places" in line and f"about {summary.chance:.2f} by chance" in line
    assert "within 1.17 matches of its fair share" in line and "over 6 pairs" in line


def test_formats() -> None:
    order = ["B", "A", "C", "D", "E"]
    plain = format_neighbours(MATCHES, "plain", order=order)
    rows = {line.split()[0]: line.split()[1:] for line in plain.splitlines()[2:7]}
    assert plain.splitlines()[0].split() == ["after", *order]
    # row: the bot measured; column: the bot it sat directly after
    assert " ".join(rows["B"]) == "- -1.67 (3/5) +1.00 (2/3) - (0/2) - (0/1)"
    assert " ".join(rows["A"]) == "-0.83 (2/5) - -0.50 (1/3) - (2/2) - (0/1)"     # D: never elsewhere
    assert " ".join(rows["D"]) == "+0.00 (1/2) - (0/2) - - - (1/1)"      # A: never after; C: only at 2 seats
    assert "Cell: the row bot's mean place" in plain and neighbour_note(neighbour_summary(MATCHES)) in plain
    md = format_neighbours(MATCHES, "markdown", order=order)
    assert md.startswith("| after   |") and "| -1.67 (3/5) |" in md
    table = list(csv.DictReader(io.StringIO(format_neighbours(MATCHES, "csv", order=order))))
    assert [(r["bot"], r["before"]) for r in table[:4]] == [("B", "A"), ("B", "C"), ("B", "D"), ("B", "E")]
    ab = table[0]
    assert ab == {"bot": "B", "before": "A", "shared": "5", "after": "3", "fair": "2.33", "place_after": "1.333",
                  "place_elsewhere": "3.0", "difference": "-1.667"}
    assert next(r for r in table if (r["before"], r["bot"]) == ("A", "D"))["place_after"] == ""
    js = json.loads(format_neighbours(MATCHES, "json", order=order))
    assert js["summary"]["measured"] == 6 and js["summary"]["imbalance"] == 1.17 and len(js["pairs"]) == 16
    assert js["pairs"][0]["difference"] == -1.667
    with pytest.raises(ValueError, match="unknown format"):
        format_neighbours(MATCHES, "html")


def test_two_seats_is_one_line() -> None:
    two = [mk(0, ["A", "B"], [1, 2]), mk(1, ["B", "A"], [1, 2])]
    summary = neighbour_summary(two)
    assert summary.two_seats and summary.pairs == 0
    for fmt in ("plain", "markdown"):
        assert format_neighbours(two, fmt) == TWO_SEATS
    assert format_neighbours(two, "csv").splitlines() == [
        "bot,before,shared,after,fair,place_after,place_elsewhere,difference"]
    assert json.loads(format_neighbours(two, "json")) == {
        "summary": {"pairs": 0, "measured": 0, "effect": None, "chance": None, "imbalance": None,
                    "two_seats": True}, "pairs": []}
    assert "no match at a table of 3" in format_neighbours([], "plain").lower()


def test_rotated_seats_say_it_is_not_measurable() -> None:
    rotated = [mk(r, [["A", "B", "C"][(s - r) % 3] for s in range(3)], [1, 2, 3]) for r in range(3)]
    summary = neighbour_summary(rotated)
    assert summary.effect is None and summary.imbalance == pytest.approx(1.5)
    assert "not measurable" in neighbour_note(summary)
    assert "- (3/3)" in format_neighbours(rotated, "plain") and "- (0/3)" in format_neighbours(rotated, "plain")


def test_names_from_the_database_are_escaped(tmp_path: Path) -> None:
    evil = "=e\x1b[2J|\u202ex\n"
    matches = [mk(i, [["A", "B", evil][(s - i) % 3] for s in range(3)], [1, 2, 3]) for i in range(3)]
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.init_tournament("t", {}, bots=["A", "B", evil])
        for m in matches:
            store.add_match(m)
        for fmt in ("plain", "markdown", "csv", "json"):
            text = report(store, fmt, sections=["neighbours"])
            assert "\x1b" not in text and "\u202e" not in text, fmt
        assert len(report(store, "csv", sections=["neighbours"]).splitlines()) == 1 + 6
        assert "=e\\x1b[2J\\|\\u202ex\\n" in report(store, "markdown", sections=["neighbours"])
        assert "'=e\\x1b[2J|\\u202ex\\n" in report(store, "csv", sections=["neighbours"])
        assert json.loads(report(store, "json", sections=["neighbours"]))["neighbours"]["pairs"][0]["bot"] in (
            "A", "B", evil)
        plain = report(store, "plain", sections=["neighbours"])
        assert plain.startswith("Neighbours (row's mean place directly after column")
        assert len([line for line in plain.splitlines() if "\\x1b" in line]) == 2   # its row and its column
