"""CSV output is opened in spreadsheets: a text cell starting with ``=``,
``+``, ``-``, ``@``, a tab or a CR is guarded with a leading quote so it is
never run as a formula; numbers (negative ones too) stay numbers."""

from __future__ import annotations

import csv
import io
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_stored_text import three_builtins

from arena.cli import main
from arena.tournament.standings.leaderboard import Column, csv_cell, format_table

# What a hand-edited (or foreign) results database can call the bots.
NAMES = {"g": "=HYPERLINK(\"http://x\",\"y\")", "r": "@SUM(A1)", "p": "-2+3"}


def cli(*args: str) -> object:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def rows_of(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_a_text_cell_is_guarded_and_a_negative_number_is_not() -> None:
    columns = (Column("bot", "Bot"), Column("rating", "Rating", 3), Column("note", "Note"))
    rows = [{"bot": "=1+1", "rating": -1.5, "note": "-1.5"}, {"bot": "+A1", "rating": 2.0, "note": "\tx"},
            {"bot": "@x", "rating": -0.25, "note": "\r=1"}, {"bot": "plain", "rating": 0.0, "note": None}]
    got = rows_of(format_table(columns, rows, "csv", get=dict.get))
    assert got == [["bot", "rating", "note"], ["'=1+1", "-1.5", "'-1.5"], ["'+A1", "2.0", "'\\tx"],
                   ["'@x", "-0.25", "'\\r=1"], ["plain", "0.0", ""]]
    assert (csv_cell(-3), csv_cell(-1.5), csv_cell("a-b"), csv_cell("")) == (-3, -1.5, "a-b", "")


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = three_builtins(tmp_path_factory.mktemp("formulas"))
    with sqlite3.connect(out / "results.sqlite") as db:
        for old, new in NAMES.items():
            db.execute("UPDATE bots SET name = ? WHERE name = ?", (new, old))
            db.execute("UPDATE seats SET bot = ? WHERE bot = ?", (new, old))
    return out


def assert_guarded(rows: list[list[str]]) -> None:
    cells = [c for r in rows for c in r]
    assert not [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r")], cells
    assert not [c for c in cells if c.startswith("-") and not _number(c)], cells


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("section", ["leaderboard", "head_to_head"])
def test_leaderboard_csv_guards_the_names(results: Path, section: str) -> None:
    done = cli("leaderboard", str(results), "--format", "csv", "--section", section)
    assert done.exit_code == 0, done.output
    rows = rows_of(done.stdout)
    assert_guarded(rows)
    assert {"'" + n for n in NAMES.values()} <= {c for r in rows for c in r}


def test_matches_csv_and_the_grade_book_guard_the_names(results: Path, tmp_path: Path) -> None:
    done = cli("matches", str(results), "--format", "csv")
    assert done.exit_code == 0, done.output
    assert_guarded(rows_of(done.stdout))
    done = cli("report", str(results), "--out", str(tmp_path / "report"), "--no-replays")
    assert done.exit_code == 0, done.output
    rows = rows_of((tmp_path / "report" / "gradebook.csv").read_text(encoding="utf-8"))
    assert_guarded(rows)
    assert sorted(r[0] for r in rows[1:]) == sorted("'" + n for n in NAMES.values())
