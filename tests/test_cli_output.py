"""Issue 10 point 1: results on stdout in every --format, status and progress on stderr.

`arena run` runs as a real subprocess, so stdout and stderr are the real,
separate streams a pipe to jq or a redirect to a file would see.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from inproc import arena_here

from arena.cli import main

ROOT = Path(__file__).resolve().parent.parent
GAMEBOTS = ROOT / "tests" / "gamebots"


def tournament(tmp: Path, extra_bot: str = "") -> Path:
    """Three built-in players (and maybe a bot program), tables of 3, hands of one contract."""
    path = tmp / "t.yaml"
    path.write_text(f"""
name: fmt
bots:
  - {{name: g, builtin: greedy}}
  - {{name: r, builtin: random}}
  - {{name: p, builtin: passive}}
{extra_bot}
players: 3
rules: {{contracts: [2S3, S3+R4]}}
seed: 4
output: {json.dumps(str(tmp / "out"))}
""")
    return path


def arena(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return arena_here(*args, cwd=ROOT, env={**os.environ, **(env or {})})


def cli(*args: str) -> object:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def parse(text: str, fmt: str) -> object:
    """The table(s) of ``text`` in ``fmt``; fails the test if they do not parse."""
    if fmt == "json":
        return json.loads(text)
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(text)))
        assert rows and all(None not in r for r in rows), text
        return rows
    lines = [line for line in text.splitlines() if line.strip()]
    if fmt == "markdown":
        table = [line for line in lines if line.startswith("|")]
        assert table and set(table[1]) <= set("|-: "), text    # a github table: header, rule, rows
        return table
    assert any(set(line) <= set("- ") for line in lines), text  # tabulate's simple table rule
    return lines


@pytest.mark.parametrize("fmt", ["plain", "markdown", "csv", "json"])
def test_run_prints_only_the_tables_on_stdout_in_every_format(tmp_path: Path, fmt: str) -> None:
    done = arena("run", str(tournament(tmp_path)), "--format", fmt, "--jobs", "1")
    assert done.returncode == 0, done.stderr
    parsed = parse(done.stdout, fmt)
    if fmt == "json":
        assert set(parsed) == {"leaderboard", "head_to_head", "seats"}      # type: ignore[arg-type]
        assert {r["bot"] for r in parsed["leaderboard"]} == {"g", "r", "p"}  # type: ignore[index]
    if fmt == "csv":    # csv holds one table: the leaderboard
        assert {r["bot"] for r in parsed} == {"g", "r", "p"}                 # type: ignore[union-attr]
    for status in ("fmt: 3 matches", "played 3 matches", "Faults this run: none"):
        assert status in done.stderr and status not in done.stdout
    assert "Traceback" not in done.stderr


def test_run_csv_with_a_named_section_and_two_sections_refused_before_playing(tmp_path: Path) -> None:
    path = tournament(tmp_path)
    two = cli("run", str(path), "--format", "csv", "--section", "seats", "--section", "leaderboard")
    assert two.exit_code == 2 and "csv output holds one table" in two.output
    assert not (tmp_path / "out").exists()     # refused before a match was played
    seats = cli("run", str(path), "--format", "csv", "--section", "seats")
    assert seats.exit_code == 0, seats.output
    rows = parse(seats.stdout, "csv")
    assert [r["seat"] for r in rows] == ["0", "1", "2"]                      # type: ignore[index]


@pytest.mark.parametrize("fmt", ["plain", "markdown", "csv", "json"])
def test_dry_run_schedule_in_every_format(tmp_path: Path, fmt: str) -> None:
    done = cli("run", str(tournament(tmp_path)), "--dry-run", "--format", fmt)
    assert done.exit_code == 0, done.output
    parsed = parse(done.stdout, fmt)
    if fmt == "json":
        assert [e["seats"] for e in parsed][0] == ["g", "r", "p"]            # type: ignore[index]
    if fmt == "csv":
        assert [r["match_id"] for r in parsed] == ["t000-r0-d0", "t000-r1-d0", "t000-r2-d0"]  # type: ignore[index]
    assert "fmt: 3 matches" in done.stderr and "fmt: 3 matches" not in done.stdout


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("results")
    done = cli("run", str(tournament(tmp)), "--jobs", "1", "-q")
    assert done.exit_code == 0 and done.stderr == ""
    return tmp / "out"


@pytest.mark.parametrize("fmt", ["plain", "markdown", "csv", "json"])
def test_leaderboard_and_matches_in_every_format(results: Path, fmt: str) -> None:
    board = cli("leaderboard", str(results), "--format", fmt)
    assert board.exit_code == 0, board.output
    parse(board.stdout, fmt)
    listed = cli("matches", str(results), "--format", fmt)
    assert listed.exit_code == 0, listed.output
    rows = parse(listed.stdout, fmt)
    if fmt == "json":
        assert [m["match_id"] for m in rows] == ["t000-r0-d0", "t000-r1-d0", "t000-r2-d0"]  # type: ignore[union-attr]
        first = rows[0]                                                        # type: ignore[index]
        assert first["status"] == "ok" and sorted(first["places"]) == [1, 2, 3] and len(first["totals"]) == 3
    if fmt == "csv":
        assert [r["status"] for r in rows] == ["ok"] * 3                      # type: ignore[union-attr]
        assert "1. " in rows[0]["result"]                                     # type: ignore[index]


def test_show_json_is_the_whole_match(results: Path) -> None:
    done = cli("show", str(results), "t000-r1-d0", "--json")
    assert done.exit_code == 0, done.output
    m = json.loads(done.stdout)
    assert m["match_id"] == "t000-r1-d0" and m["bots"] == ["p", "g", "r"]
    assert len(m["hand_scores"]) == 2 and sum(m["hand_scores"][0]) + sum(m["hand_scores"][1]) == sum(m["totals"])
    assert m["record"]["events"][0]["type"] == "match_start" and m["warnings"] == []
    missing = cli("show", str(results), "nope", "--json")
    assert missing.exit_code == 1 and "no match 'nope'" in missing.output


def test_show_says_where_a_start_up_fault_happened(tmp_path: Path) -> None:
    """A bot that answers 'start' with garbage is faulted at start-up; 'show'
    says so in words, not with Python's None for the decision."""
    garbage = json.dumps([sys.executable, "-c", "print('hello'); import sys; sys.stdin.read()"])
    path = tournament(tmp_path, extra_bot=f"  - {{name: x, command: {garbage}}}")
    done = arena("run", str(path), "--jobs", "1", "-q")
    assert done.returncode == 0, done.stderr
    listed = json.loads(arena("matches", str(tmp_path / "out"), "--bot", "x", "--format", "json").stdout)
    shown = arena("show", str(tmp_path / "out"), listed[0]["match_id"])
    assert shown.returncode == 0, shown.stderr
    fault = next(line for line in shown.stdout.splitlines() if "(x)" in line and "malformed" in line)
    assert "at start-up" in fault and "None" not in fault, fault


# -- the neighbours section (issue 29, point 2) -----------------------------------


def seated_tournament(tmp: Path, players: int = 3, deals: int = 2) -> Path:
    """Built-in players at a balanced table: over k - 1 deals each bot sits
    directly after each other one in exactly half their matches (3 seats)."""
    path = tmp / f"n{players}.yaml"
    path.write_text(f"""
name: neighbours{players}
bots:
  - {{name: g, builtin: greedy}}
  - {{name: r, builtin: random}}
  - {{name: p, builtin: passive}}
players: {players}
deals: {deals}
rules: {{contracts: [2S3, S3+R4]}}
seed: 4
output: {json.dumps(str(tmp / f"out{players}"))}
""")
    return path


@pytest.fixture(scope="module")
def seated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("seated")
    done = cli("run", str(seated_tournament(tmp)), "--jobs", "1", "-q")
    assert done.exit_code == 0 and done.stderr == ""
    return tmp / "out3"


def b_places(results: Path) -> dict[tuple[str, str], tuple[list[int], list[int]]]:
    """Per (before, bot), from the stored matches: the bot's places directly after and elsewhere."""
    from arena.tournament.results.database import ResultStore

    out: dict[tuple[str, str], tuple[list[int], list[int]]] = {}
    with ResultStore(results / "results.sqlite", create=False) as store:
        for m in store.matches():
            for i, a in enumerate(m.bots):
                for j, b in enumerate(m.bots):
                    if i != j:
                        out.setdefault((a, b), ([], []))[0 if j == (i + 1) % 3 else 1].append(m.places[j])
    return out


@pytest.mark.parametrize("fmt", ["plain", "markdown", "csv", "json"])
def test_neighbours_section_in_every_format(seated: Path, fmt: str) -> None:
    done = cli("leaderboard", str(seated), "--section", "neighbours", "--format", fmt)
    assert done.exit_code == 0, done.output
    parsed = parse(done.stdout, fmt)
    stored = b_places(seated)
    assert len(stored) == 6 and all(len(x) == len(y) == 3 for x, y in stored.values())  # balanced: 3 of 6
    if fmt in ("plain", "markdown"):
        cells = re.findall(r"[-+]\d\.\d\d \((\d+)/(\d+)\)", done.stdout)
        assert cells == [("3", "6")] * 6, done.stdout
        assert "Balance: exact" in done.stdout and "Neighbour effect: " in done.stdout
    rows = parsed["neighbours"]["pairs"] if fmt == "json" else parsed if fmt == "csv" else []  # type: ignore[index,call-overload]
    for r in rows:
        after, elsewhere = stored[r["before"], r["bot"]]
        assert (int(r["shared"]), int(r["after"]), float(r["fair"])) == (6, 3, 3.0)
        assert float(r["difference"]) == pytest.approx(sum(after) / 3 - sum(elsewhere) / 3, abs=1e-3)
    assert len(rows) == (6 if fmt in ("csv", "json") else 0)
    if fmt == "json":
        summary = parsed["neighbours"]["summary"]                          # type: ignore[index,call-overload]
        assert summary["imbalance"] == 0.0 and summary["pairs"] == summary["measured"] == 6


def test_neighbours_at_tables_of_two_is_one_line(tmp_path: Path) -> None:
    done = cli("run", str(seated_tournament(tmp_path, players=2, deals=1)), "--jobs", "1", "-q",
               "--section", "neighbours")
    assert done.exit_code == 0, done.output
    assert done.stdout.split("\n\n")[-1].strip() == (
        "Every table had 2 seats: each bot sat directly after the other in every match, "
        "so there is no neighbour effect to show.")
