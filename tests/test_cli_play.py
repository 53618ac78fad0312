"""`arena --version` and `arena play` with the in-process players."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from arena import __version__
from arena.cli import main
from arena.shanghai.game import Game


def run(*args: str) -> object:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_version() -> None:
    result = run("--version")
    assert result.exit_code == 0
    assert __version__ in result.output


def test_play_prints_every_hand_and_the_final_table() -> None:
    result = run("play", "--seed", "1", "--players", "4")
    assert result.exit_code == 0, result.output
    for hand in range(1, 11):
        assert f"Hand {hand} of 10" in result.output
    assert "place" in result.output and "total" in result.output
    assert "goes down" in result.output


def test_play_is_deterministic_for_a_seed(tmp_path: Path) -> None:
    a = run("play", "--seed", "9", "-n", "3")
    b = run("play", "--seed", "9", "-n", "3")
    assert a.output == b.output


def test_play_log_replays_exactly(tmp_path: Path) -> None:
    log = tmp_path / "match.json"
    result = run("play", "greedy", "random", "random", "--seed", "4", "--log", str(log))
    assert result.exit_code == 0, result.output
    record = json.loads(log.read_text())
    replayed = Game.from_record(record)
    assert replayed.to_record()["events"] == record["events"]


def test_play_with_a_deal_file(tmp_path: Path) -> None:
    deal = tmp_path / "deal.yaml"
    deal.write_text(
        "seed: 3\n"
        "hands:\n"
        "  - hands:\n"
        "      - [2C, 3C, 4C, 5C, 6C, 7C, 8C, 9C, 10C, JC, QC]\n"
        "      - [8D, 8S, 8H, KH, KS, KD, 4D, 5D, 9H, 10H, QS]\n"
        "      - [3D, 3H, 3S, 6D, 6H, 6S, 7D, 7H, 7S, AD, AH]\n"
        "    upcard: JK\n"
    )
    result = run("play", "-n", "3", "--deal", str(deal), "-v")
    assert result.exit_code == 0, result.output
    # Seat 1 is left of dealer 0: it holds two sets and sees a joker upcard.
    assert "seed 3" in result.output
    assert "seat 1 (random) goes down" in result.output or "seat 1 (random) takes the upcard JK" in result.output


def test_play_errors_are_one_line() -> None:
    runner = CliRunner()
    missing = runner.invoke(main, ["play", "--deal", "/nonexistent/deal.yaml"])
    assert missing.exit_code != 0
    assert "/nonexistent/deal.yaml" in missing.output and "Traceback" not in missing.output
    assert len(missing.output.strip().splitlines()) == 1


def test_play_broken_deal_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("hands: [\n  - {order: [7H\n")
    result = CliRunner().invoke(main, ["play", "--deal", str(broken)])
    assert result.exit_code != 0
    assert "broken.yaml" in result.output and "not valid YAML" in result.output


def test_play_deal_file_with_impossible_cards(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"hands": [{"hands": [["7H", "7H", "7H"]]}]}))
    result = CliRunner().invoke(main, ["play", "-n", "3", "--deal", str(bad)])
    assert result.exit_code != 0
    assert "7H" in result.output and "Traceback" not in result.output
