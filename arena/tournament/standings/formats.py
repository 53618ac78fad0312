"""Tables as every command prints them: plain, markdown, csv and json, with
what is read back from a results database escaped (a hostile name cannot
move the cursor, split a csv row or run as a spreadsheet formula)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ...process.errors import escaped
from ..config.model import OUTPUT_FORMATS

__all__ = ["FORMATS", "Column", "cell_text", "csv_cell", "FORMULA_STARTS", "terminal_json", "tabulate",
           "format_table", "name_cell"]

FORMATS = OUTPUT_FORMATS


@dataclass(frozen=True)
class Column:
    key: str                 # JSON / CSV key
    header: str              # plain / markdown header
    digits: int | None = None  # round floats: JSON/CSV to ``digits``, text to ``text_digits``
    text_digits: int | None = None


def _rounded(value: Any, col: Column) -> Any:
    if isinstance(value, float) and col.digits is not None:
        return round(value, col.digits)
    return value


def cell_text(text: str) -> str:
    """``text`` as one inert line for a table cell: every character that is
    not printable (a newline, a tab, ESC, U+202E) written as its Python
    escape (``escaped`` with tabs escaped too: a tab would break the columns)."""
    return escaped(text, tabs=False)


# A spreadsheet runs a cell starting with one of these as a formula ("=HYPERLINK(...)").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """``value`` for a CSV cell: a number as it is (a rating of -1.5 stays a
    number), None empty, text one inert line (``cell_text``) with a quote in
    front if a spreadsheet would take it for a formula: a bot's name is
    anyone's text, and an organiser opens the file in a spreadsheet."""
    if value is None:
        return ""
    if not isinstance(value, str):
        return value
    text = cell_text(value)
    return "'" + text if value.startswith(FORMULA_STARTS) else text


def name_cell(text: str, fmt: str) -> str:
    # In markdown a "|" would end the cell: GitHub tables take "\|" for one.
    return cell_text(text).replace("|", "\\|") if fmt == "markdown" else cell_text(text)


def terminal_json(value: Any, indent: int | None = 2) -> str:
    """``json.dumps`` keeping readable non-ASCII (names, card suits) as it is,
    but with every character that is not printable as a ``\\uXXXX`` escape:
    ``ensure_ascii=False`` alone writes U+202E or U+0085 raw, and a terminal
    acts on them.  Outside strings the encoder writes only printable ASCII and
    the newlines of ``indent``, so only characters inside strings change form."""
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    lines = text.split("\n")
    if all(line.isprintable() for line in lines):
        return text
    return "\n".join(line if line.isprintable() else "".join(
        c if c.isprintable() else json.dumps(c)[1:-1] for c in line) for line in lines)


def _text(value: Any, col: Column) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        d = col.text_digits if col.text_digits is not None else (col.digits or 2)
        return f"{value:.{d}f}"
    return cell_text(str(value))


def tabulate(*args: Any, **kwargs: Any) -> str:
    """The ``tabulate`` package's table, imported when a table is drawn (not light, and
    a running tournament draws none)."""
    # lazy: ~8 % of import arena.cli's CPU time (measured); a running tournament and json or csv draw no table
    from tabulate import tabulate as draw

    return draw(*args, **kwargs)


def format_table(columns: Sequence[Column], rows: Sequence[Any], fmt: str,
                 get: Callable[[Any, str], Any] = getattr) -> str:
    """Format ``rows`` (objects, or mappings with ``get=dict.get``-like access) in ``fmt``."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    records = [{c.key: _rounded(get(r, c.key), c) for c in columns} for r in rows]
    if fmt == "json":
        return terminal_json(records)
    if fmt == "csv":
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow([c.key for c in columns])
        for rec in records:
            # Escaped, not quoted across lines: one row per line, whatever reads it.
            w.writerow([csv_cell(v) for v in rec.values()])
        return out.getvalue().rstrip("\n")
    table = [[_text(get(r, c.key), c) for c in columns] for r in rows]
    if fmt == "markdown":
        table = [[cell.replace("|", "\\|") for cell in row] for row in table]
    align = ["left" if all(isinstance(get(r, c.key), str) for r in rows) and rows else "right"
             for c in columns]
    return tabulate(table, headers=[c.header for c in columns],
                    tablefmt="simple" if fmt == "plain" else "github",
                    disable_numparse=True, colalign=align)
