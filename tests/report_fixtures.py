"""A small stored tournament for the report tests: three bots per table, one of
them ``chatty`` (stderr at every decision, an illegal play at its second), one
silent program and one built-in, two hands a match.  Played once per test
session through the real CLI."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from click.testing import CliRunner

from arena.cli import main

ROOT = Path(__file__).resolve().parent.parent
GAMEBOTS = ROOT / "tests" / "gamebots"


def tournament_file(tmp: Path, name: str = "reported") -> Path:
    path = tmp / "t.yaml"
    path.write_text(f"""
name: {name}
bots:
  - name: chatty
    command: [{json.dumps(sys.executable)}, {json.dumps(str(GAMEBOTS / "chatty.py"))}, --illegal-at, "2"]
  - name: minimal
    command: [{json.dumps(sys.executable)}, {json.dumps(str(GAMEBOTS / "minimal.py"))}]
  - name: greedy-builtin
    builtin: greedy
players: 3
rules:
  contracts: [2S3, S3+R4]
time: {{startup: 20, per_move: 5}}
deals: 2
seed: 5
""")
    return path


def run_tournament(tmp: Path) -> Path:
    out = tmp / "results"
    result = CliRunner().invoke(main, ["run", str(tournament_file(tmp)), "--out", str(out), "--jobs", "1"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return out


def cli(*args: str) -> object:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)
