"""Issue 10, "Docs and polish": what the docs say matches what arena does."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from arena.account import render_account
from arena.cli import app as cli
from arena.cli import main
from arena.players.registry import BUILTIN_PLAYERS
from arena.shanghai.ruleset import MAX_PLAYERS, MIN_PLAYERS

ROOT = Path(__file__).resolve().parent.parent


def test_readme_rules_and_help_agree_on_player_counts() -> None:
    said = f"{MIN_PLAYERS}-{MAX_PLAYERS}"
    readme = (ROOT / "README.md").read_text()
    assert f"({said}\nplayers" in readme or f"({said} players" in readme
    assert f"with {MIN_PLAYERS} to {MAX_PLAYERS} players" in (ROOT / "docs" / "RULES.md").read_text()
    help_text = CliRunner().invoke(main, ["play", "--help"]).output
    assert said in help_text
    assert not re.search(r"\b[3-9]-8 players", readme)


def test_every_builtin_player_is_documented() -> None:
    readme = (ROOT / "README.md").read_text()
    example = (ROOT / "tournaments" / "example.yaml").read_text()
    help_text = CliRunner().invoke(main, ["play", "--help"]).output
    for name in BUILTIN_PLAYERS:
        assert f"`{name}` (" in readme, name          # named and described
        assert f"{name}:" in example, name
        assert name in help_text, name


def test_counts_agree_with_their_nouns() -> None:
    events = [
        {"type": "match_start", "players": 2, "rules": {"contracts": ["2S3"], "preset": "shanghai"}, "seed": 1},
        {"type": "deal", "hand": 1, "contract": "2S3", "dealer": 0, "deal_size": 11, "upcard": "5H"},
        {"type": "buy", "seat": 1, "card": "5H", "penalty": 2, "buys_left": 1},
        {"type": "discard", "seat": 0, "card": "7C"},
        {"type": "hand_end", "hand": 1, "reason": "stock", "seat": None, "scores": [10, 20]},
    ]
    text = "\n".join(render_account(events, ["a", "b"]))
    assert "1 buy left)" in text and "after 1 turn and 1 buy:" in text
    assert "1 buys" not in text and "1 turns" not in text


def test_a_ruleset_that_cannot_deal_the_table_fails_at_load_naming_the_file(tmp_path: Path) -> None:
    rules = tmp_path / "one-deck.yaml"
    rules.write_text("decks: 1\n")
    logs = tmp_path / "logs"
    done = CliRunner().invoke(main, ["play", "-n", "8", "--rules", str(rules), "--log-dir", str(logs),
                                     "python3 -c 'import time; time.sleep(60)'"])
    assert done.exit_code == 1 and len(done.output.strip().splitlines()) == 1
    assert f"{rules}: setting 'deal_size': hand 1: 8 players x 11 cards do not fit" in done.output
    assert not logs.exists()        # checked before any bot started
    ok = CliRunner().invoke(main, ["play", "-n", "4", "--rules", str(rules), "--seed", "1"])
    assert ok.exit_code == 0, ok.output   # one deck deals 4 players: fine at that table size



def test_version_in_one_place_and_license_matches() -> None:
    """The version lives in arena/__init__.py only; LICENSE is the license pyproject declares."""
    import importlib.metadata
    import re

    import arena

    root = Path(__file__).resolve().parent.parent
    pyproject = (root / "pyproject.toml").read_text(encoding="utf-8")
    project = pyproject.split("\n[project]\n", 1)[1].split("\n[", 1)[0]
    assert re.search(r"^version\s*=", project, re.M) is None and 'dynamic = ["version"]' in project
    assert importlib.metadata.version("arena") == arena.__version__
    assert 'license = { text = "MIT" }' in pyproject
    assert (root / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")


@pytest.mark.parametrize("command", ["play", "check"])
def test_old_spellings_of_per_decision_work_but_are_not_advertised(command: str) -> None:
    """--per-move and --time-per-move still set --per-decision (old scripts),
    but --help shows only --per-decision, and giving two spellings is refused."""
    runner = CliRunner()
    shown = runner.invoke(main, [command, "--help"]).output
    assert "--per-decision" in shown
    assert "--per-move" not in shown and "--time-per-move" not in shown
    both = runner.invoke(main, [command, "--per-decision", "1", "--per-move", "2", "python3 bot.py"])
    assert both.exit_code == 2
    assert both.output.strip().splitlines() == [
        "Error: --per-move is the old name of --per-decision, and --per-decision and --per-move are given; "
        "give --per-decision once"]
    olds = runner.invoke(main, [command, "--time-per-move", "1", "--per-move", "2", "python3 bot.py"])
    assert olds.exit_code == 2 and "--per-move and --time-per-move are old names of --per-decision" in olds.output


@pytest.mark.parametrize("spelling", ["--per-move", "--time-per-move", "--per-decision"])
def test_each_spelling_of_per_decision_reaches_the_time_control(spelling: str, monkeypatch) -> None:
    seen: list[float] = []

    def fake_time_control(startup: float, per_decision: float, bank: float | None) -> None:
        seen.append(per_decision)
        raise click.ClickException("stop here")

    monkeypatch.setattr(cli, "_time_control", fake_time_control)
    res = CliRunner().invoke(main, ["check", spelling, "0.25", "--sandbox", "none", "python3 bot.py"])
    assert res.exit_code == 1 and "stop here" in res.output, res.output
    assert seen == [0.25]


@pytest.mark.parametrize("argv", [["run", "t.yaml", "--dry-run", "--format", "swiss"],
                                  ["leaderboard", "results", "--format", "gauntlet"],
                                  ["matches", "results", "--format", "round-robin"]])
def test_a_tournament_format_given_to_format_is_told_where_it_belongs(argv: list[str]) -> None:
    """--format is the output's format; a tournament's format (a file's
    'format:') given to it gets an error naming both, before any file is read."""
    res = CliRunner().invoke(main, argv)
    assert res.exit_code == 2
    last = res.output.strip().splitlines()[-1]
    assert f"{argv[-1]!r} is a tournament format, set by the tournament file's 'format:'" in last
    assert "--format is the output format of the tables: plain, markdown, csv, json" in last
    odd = CliRunner().invoke(main, [*argv[:-1], "xml"])
    assert "'xml' is not one of 'plain', 'markdown', 'csv', 'json'" in odd.output


@pytest.mark.parametrize("command", ["run", "leaderboard", "matches"])
def test_format_help_says_it_is_the_output_format(command: str) -> None:
    shown = " ".join(CliRunner().invoke(main, [command, "--help"]).output.split())
    assert "Output format of the" in shown
    assert "ot the tournament's format" in shown and "file's 'format:'" in shown


def test_a_name_too_long_for_the_results_folder_is_one_line(tmp_path: Path) -> None:
    """With no out:, the results folder is named after the tournament: a
    name over 255 bytes would be refused by the file system (it was a
    traceback at the first stat)."""
    path = tmp_path / "t.yaml"
    path.write_text("name: " + "x" * 300 + "\nbots:\n  - {name: a, builtin: greedy}\n"
                    "  - {name: b, builtin: random}\nplayers: 2\n")
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {path}:1: name: too long"), result.output
    # Given a results folder (--out), the name is only a name.
    out = tmp_path / "out"
    assert CliRunner().invoke(main, ["run", str(path), "--out", str(out), "--dry-run"]).exit_code == 0
