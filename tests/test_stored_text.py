"""A results database is a file: hand-edited, or from elsewhere, its bot names,
match ids and reasons may hold anything.  Every command that prints them
shows them inert: no terminal escape, no RTL override, no newline reaches the
terminal, a csv row stays one line, a markdown row keeps its cells, and the
JSON still gives the exact text back to a parser.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
import sqlite3
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main

HOSTILE = "ev\x1b[2Jil\u202e\nx|y\r\x85"          # ESC, RTL override, newline, a pipe, CR, NEL
BAD_ID = "t9\x1b[31m\u202e\nz"
REASON = "boom\x1b]0;pwned\x07\u202e\nsecond line"
RAW = ("\x1b", "\r", "\u202e", "\x07", "\x85")


def cli(*args: str) -> object:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def assert_inert(text: str) -> None:
    found = [c for c in RAW if c in text]
    assert not found, f"raw {found!r} reached the terminal:\n{text!r}"
    assert "\nx|y" not in text and "il\u202e" not in text


def three_builtins(tmp: Path) -> Path:
    """The results of a short tournament of bots g, r and p (built-in players), to hand-edit."""
    (tmp / "t.yaml").write_text("name: names\nbots:\n  - {name: g, builtin: greedy}\n"
                                "  - {name: r, builtin: random}\n  - {name: p, builtin: passive}\n"
                                "players: 3\nrules: {contracts: [2S3]}\nseed: 4\n")
    done = cli("run", str(tmp / "t.yaml"), "--out", str(tmp / "out"), "--jobs", "1", "-q")
    assert done.exit_code == 0, done.output
    return tmp / "out"


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = three_builtins(tmp_path_factory.mktemp("hostile"))
    with sqlite3.connect(out / "results.sqlite") as db:    # what a hand edit can do
        for match_id, blob in db.execute("SELECT match_id, record FROM matches").fetchall():
            record = json.loads(zlib.decompress(blob))
            deal = next(e for e in record["events"] if e["type"] == "deal")
            deal["upcard"] = "5H\x1b[2J\u202e"                     # a card the account shows
            db.execute("UPDATE matches SET record = ? WHERE match_id = ?",
                       (zlib.compress(json.dumps(record).encode()), match_id))
        db.execute("UPDATE bots SET name = ? WHERE name = 'r'", (HOSTILE,))
        db.execute("UPDATE seats SET bot = ? WHERE bot = 'r'", (HOSTILE,))
        db.execute("INSERT INTO failed_matches VALUES (?, 99, ?, ?, ?, 1, '2026-01-01T00:00:00+00:00')",
                   (BAD_ID, json.dumps([HOSTILE, "g", "p"]), REASON, "logs/\x1b[8merrors.log"))
    return out


@pytest.mark.parametrize("command", ["leaderboard", "matches"])
def test_plain_and_markdown_tables_show_stored_text_escaped(results: Path, command: str) -> None:
    for fmt in ("plain", "markdown"):
        extra = ["--section", "leaderboard", "--section", "head_to_head"] if command == "leaderboard" else []
        done = cli(command, str(results), "--format", fmt, *extra)
        assert done.exit_code == 0, done.output
        assert_inert(done.output)
        assert "ev\\x1b[2Jil\\u202e\\nx" in done.stdout            # readable, as escapes
        if fmt == "markdown":
            for block in done.stdout.split("\n\n"):
                table = [line for line in block.splitlines() if line.startswith("|")]
                cells = {line.replace("\\|", "").count("|") for line in table}
                assert len(cells) <= 1, table                      # the pipe in the name ends no cell


@pytest.mark.parametrize("command", ["leaderboard", "matches"])
def test_csv_keeps_one_row_per_line_and_json_the_exact_text(results: Path, command: str) -> None:
    done = cli(command, str(results), "--format", "csv")
    assert done.exit_code == 0, done.output
    assert_inert(done.output)
    rows = list(csv.reader(io.StringIO(done.stdout)))
    assert len(rows) == len(done.stdout.splitlines())             # no field runs over two lines
    assert {len(r) for r in rows} == {len(rows[0])}
    done = cli(command, str(results), "--format", "json")
    assert done.exit_code == 0, done.output
    assert_inert(done.output)
    data = json.loads(done.stdout)
    if command == "leaderboard":
        assert HOSTILE in [r["bot"] for r in data["leaderboard"]]
    else:
        failed = next(m for m in data if m["status"] == "error")
        assert (failed["match_id"], failed["reason"], failed["bots"][0]) == (BAD_ID, REASON, HOSTILE)


def test_show_and_errors_name_stored_text_escaped(results: Path) -> None:
    listed = json.loads(cli("matches", str(results), "--format", "json").stdout)
    played = next(m["match_id"] for m in listed if m["status"] == "ok" and HOSTILE in m["bots"])
    for args in (["show", str(results), played], ["show", str(results), played, "-v"],
                 ["show", str(results), BAD_ID], ["matches", str(results), "--bot", "nobody"]):
        done = cli(*args)
        assert_inert(done.output)
        assert "ev\\x1b[2Jil" in done.output or "boom\\x1b]0;pwned" in done.output, (args, done.output)
    for args in (["show", str(results)], ["show", str(results), "--json"]):     # the tournament's summary
        assert_inert(cli(*args).output)
    decisions = [cli("show", str(results), played, "--decision", str(k)).output for k in range(6)]
    for text in decisions:
        assert_inert(text)
    assert any("ev\\x1b[2Jil" in text for text in decisions), decisions   # each seat decides in turn
    shown = cli("show", str(results), played, "--json")
    assert_inert(shown.stdout)
    assert HOSTILE in json.loads(shown.stdout)["bots"]


def test_the_grade_book_keeps_one_row_per_line(results: Path, tmp_path: Path) -> None:
    done = cli("report", str(results), "--out", str(tmp_path / "report"), "--no-replays")
    assert done.exit_code == 0, done.output
    assert_inert(done.output)
    text = (tmp_path / "report" / "gradebook.csv").read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text)))
    assert len(rows) == len(text.splitlines()) == 4 and {len(r) for r in rows} == {len(rows[0])}
    assert any(r[0].startswith("ev\\x1b[2Jil") for r in rows), rows


BIDI = ("\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069",
        "\u200e", "\u200f", "\u061c")


def page_text(html: str) -> str:
    """The page without its <script> elements (the charts' library is not the stored text)."""
    return re.sub(r"<script\b.*?</script>", "", html, flags=re.S)


def test_the_report_and_a_replay_show_bidi_controls_as_escapes(results: Path, tmp_path: Path) -> None:
    done = cli("report", str(results), "--out", str(tmp_path / "report"))
    assert done.exit_code == 0, done.output
    index = (tmp_path / "report" / "index.html").read_bytes().decode("utf-8")     # its CRs kept
    text = page_text(index)
    assert not [c for c in BIDI if c in text], "a raw bidi control reached the report"
    assert "il\\u202e" in text and "pwned\\x07\\u202e" in text                  # a name and a reason
    assert "t9\\x1b[31m\\u202e" in text                                         # a failed match's id
    # ESC, BEL, CR, NEL: escaped too, so two names cannot look alike; newlines stay.
    assert not [c for c in "\x1b\x07\r\x85" if c in text], "a raw control character reached the report"
    shown = html.escape("ev\\x1b[2Jil\\u202e\nx|y\\r\\x85")
    assert f"<bdi>{shown}</bdi>" in text                                        # in a match's result
    charts = json.loads(re.search(r'<script type="application/json" id="charts">(.*?)</script>',
                                  index, re.S).group(1))
    names = {p["bot"] for spec in charts.values() for data in spec["datasets"].values() for p in data}
    assert "ev\\x1b[2Jil\\u202e\nx|y\\r\\x85" in names and not [c for n in names for c in BIDI if c in n]
    replay = next((tmp_path / "report" / "replays").glob("*.html")).read_text(encoding="utf-8")
    assert not [c for c in BIDI if c in replay]                                 # its script included
    assert "il\\u202e" in page_text(replay)                                      # the scores' header
