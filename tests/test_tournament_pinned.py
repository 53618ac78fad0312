"""Seeded tournaments store the same results and show the same leaderboards as before.

Extends ``test_engine_pinned`` (single matches) to whole tournaments run through
the CLI: a round robin of built-in players and a ``settle:`` Swiss run.  The
values were computed before issue 31's move of ``arena/tournament/`` into
subpackages; a move of code must change none of them.  A changed digest here
means a behaviour change: a stored row, a match record or a leaderboard line.

What a run cannot repeat is left out: timings, dates and paths (the columns in
``VARIES``) and the seconds in each record's decision trace.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zlib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import main

# Columns that hold timings, dates or paths: they differ from run to run.
VARIES = {
    "tournament": {"created"},
    "matches": {"duration_seconds", "started_at", "stored_at", "record", "record_path"},
    "seats": {"mean_seconds", "p95_seconds", "max_seconds", "stderr_log", "off_turn_cpu"},
    "failed_matches": {"log_path", "failed_at"},
}
TABLES = ("tournament", "bots", "matches", "seats", "hand_scores", "faults", "failed_matches")

ROUND_ROBIN = """\
name: pinned
bots:
  - {name: g, builtin: greedy}
  - {name: r, builtin: random}
  - {name: p, builtin: passive}
  - {name: g2, builtin: greedy}
players: 3
deals: 2
seed: 5
rules: {contracts: [2S3, 1S4]}
"""

SWISS = """\
name: pinned-swiss
bots:
  - {name: g, builtin: greedy}
  - {name: r, builtin: random}
  - {name: p, builtin: passive}
  - {name: r2, builtin: random}
  - {name: g2, builtin: greedy}
players: 2
seed: 11
format: swiss
settle: {max_matches: 30}   # stops at whole rounds: 28 matches
rules: {contracts: [2S3]}
"""

# tournament, matches stored, digest of the rows, of the records, of the
# leaderboard as text (every section), of the leaderboard as JSON
PINNED = [
    (ROUND_ROBIN, 24, "2e22b57d582c6ec2", "b825172414ec51e1", "966fbc8c3fe48fa2", "472600f48bb2482b"),
    (SWISS, 28, "cc4ec9a06e2e8e7a", "a3ffabf9eab77711", "6359f7b50b57484f", "47239b2536c0cb06"),
]


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _rows(db: Path) -> dict[str, list[list[Any]]]:
    """Every table's rows, in primary-key order, without the columns in ``VARIES``."""
    rows: dict[str, list[list[Any]]] = {}
    with sqlite3.connect(db) as conn:
        for table in TABLES:
            columns = [c[1] for c in conn.execute(f"PRAGMA table_info({table})")]
            kept = [c for c in columns if c not in VARIES.get(table, set())]
            order = ", ".join(kept)
            rows[table] = [list(r) for r in conn.execute(f"SELECT {order} FROM {table} ORDER BY {order}")]
    return rows


def _no_seconds(value: Any) -> Any:
    """The trace's seconds (floats) zeroed; everything else as it is."""
    if isinstance(value, float):
        return 0.0
    if isinstance(value, list):
        return [_no_seconds(v) for v in value]
    if isinstance(value, dict):
        return {k: _no_seconds(v) for k, v in value.items()}
    return value


def _records(db: Path) -> list[Any]:
    with sqlite3.connect(db) as conn:
        found = []
        for match_id, blob in conn.execute("SELECT match_id, record FROM matches ORDER BY match_id"):
            record = json.loads(zlib.decompress(blob))
            record["trace"] = _no_seconds(record["trace"])
            found.append([match_id, record])
    return found


def _cli(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("text,matches,rows,records,board,board_json", PINNED)
def test_seeded_tournament_unchanged(tmp_path: Path, text: str, matches: int, rows: str, records: str,
                                     board: str, board_json: str) -> None:
    path = tmp_path / "t.yaml"
    out = tmp_path / "out"
    path.write_text(text + f"output: {out}\n")
    _cli("run", str(path), "--jobs", "1")
    db = out / "results.sqlite"
    stored = _rows(db)
    sections = [a for s in ("leaderboard", "head_to_head", "seats", "neighbours") for a in ("--section", s)]
    shown = (_cli("leaderboard", str(out), *sections), _cli("leaderboard", str(out), "--format", "json"))
    found = (len(stored["matches"]), _digest(stored), _digest(_records(db)), _digest(shown[0]),
             _digest(json.loads(shown[1])))
    assert found == (matches, rows, records, board, board_json)
