"""The arena's one escaping of text for a terminal (``process.errors.escaped``)
and the forms built on it: a table cell and an excerpt escape tabs too, a
line of stderr keeps them."""

from __future__ import annotations

from arena.check.report import FAIL, CheckReport
from arena.process.errors import escaped, escaped_lines, excerpt
from arena.tournament.standings.leaderboard import cell_text

TEXT = "a\tb\x1b[2J\r\u202ec\nd\x85 \u00e9\u2660"
ESCAPED = "a\\tb\\x1b[2J\\r\\u202ec\\nd\\x85 \u00e9\u2660"     # readable non-ASCII kept as it is


def test_a_line_keeps_its_tabs_a_cell_and_an_excerpt_do_not() -> None:
    assert escaped(TEXT) == ESCAPED.replace("\\t", "\t")
    assert escaped(TEXT, tabs=False) == cell_text(TEXT) == excerpt(TEXT) == ESCAPED
    assert escaped_lines("x\ty\n\x1bz") == "x\ty\n\\x1bz"
    assert escaped("plain \u00e9") == cell_text("plain \u00e9") == "plain \u00e9"


def test_the_check_report_escapes_what_the_bot_wrote_and_keeps_its_tabs() -> None:
    report = CheckReport(bot="b")
    report.add("move", FAIL, "refused", reply="go\x1b[2J\tdown\u202e")
    text = "\n".join(report.lines())
    assert "go\\x1b[2J\tdown\\u202e" in text and "\x1b" not in text and "\u202e" not in text
