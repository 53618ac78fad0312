"""Hostile tournament, deal and ruleset files: one line on stderr, a non-zero exit, no bot started, no hang.

Each file goes through the real command line in a subprocess with a timeout, so
a regression that hangs (a "billion laughs" file) fails instead of stalling the
suite.  The timeout is generous: it is not a speed requirement.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from arena.tournament.config.bounded import MAX_DEPTH, MAX_VALUES, load_data
from arena.tournament.config.load import load_config
from arena.tournament.config.model import ConfigError

REPO = Path(__file__).resolve().parent.parent
TIMEOUT = 60  # seconds; a hang, not slowness, is what this catches


def billion_laughs(levels: int = 9) -> str:
    """Anchors x-a .. x-i, each a list of nine aliases of the one before: 9**9 values once expanded."""
    text = "x-a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    for i in range(1, levels):
        name, prev = chr(ord("a") + i), chr(ord("a") + i - 1)
        text += f"x-{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]\n"
    return text


def starter(tmp: Path) -> tuple[list[str], Path]:
    """A bot command that leaves a marker file when it starts, and the marker."""
    marker = tmp / "bot-started"
    script = tmp / "starter.py"
    script.write_text(f"open({str(marker)!r}, 'w').close()\nimport time\ntime.sleep(30)\n")
    return [sys.executable, str(script)], marker


def tournament_head(tmp: Path) -> str:
    argv, _ = starter(tmp)
    return (
        "name: hostile\n"
        "players: 3\n"
        "bots:\n"
        f"  - name: s\n    command: {json.dumps(argv)}\n"
        "  - {name: g, builtin: greedy}\n"
        "  - {name: r, builtin: random}\n"
    )


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True,
                          timeout=TIMEOUT, cwd=cwd, env=env)


def assert_one_line_error(result: subprocess.CompletedProcess[str], shown: str, *expected: str) -> str:
    assert result.returncode != 0
    assert "Traceback" not in result.stdout + result.stderr, result.stderr[-2000:]
    assert result.stdout == "", result.stdout[:2000]
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr[:2000]
    assert len(lines[0]) < 1000
    assert shown in lines[0], lines[0]
    for part in expected:
        assert part in lines[0], lines[0]
    return lines[0]


# -- tournament files ------------------------------------------------------------------

def _nested(opener: str, depth: int) -> str:
    return opener * depth + "\n"


# name -> (file contents given the good head, what the one error line says)
TOURNAMENT_FILES: dict[str, tuple[Callable[[str], bytes], tuple[str, ...]]] = {
    "billion laughs in rules.contracts": (
        lambda head: (head + billion_laughs() + "rules:\n  contracts: *i\n").encode(),
        (":13: x-f[0]: too many values", f"YAML aliases expand to more than {MAX_VALUES:,} values")),
    "alias inside its own anchor": (
        lambda head: (head + "rules:\n  contracts: &c [2S3, *c]\n").encode(),
        (":9: rules.contracts[1]: the alias *c is inside its own anchor",)),
    "5,000-digit seed": (
        lambda head: (head + "seed: " + "9" * 5000 + "\n").encode(),
        (":8: seed: a number of 5,000 characters is too long",)),
    "5,000-digit limit": (
        lambda head: head.replace("  - {name: g,", "    limits: {memory_mb: " + "9" * 5000 + "}\n  - {name: g,").encode(),
        (":6: bots[0].limits.memory_mb: a number of 5,000 characters is too long",)),
    "huge sexagesimal number in rules": (
        lambda head: (head + "rules:\n  buy_limits: [3, 1" + ":59" * 3000 + "]\n").encode(),
        (":9: rules.buy_limits[1]: a number of 9,001 characters is too long",)),
    "50,000 nested [": (
        lambda head: (head + "rules: " + _nested("[", 50_000)).encode(),
        (":8: rules[0][0]", f"nested more than {MAX_DEPTH} levels deep")),
    "50,000 nested {": (
        lambda head: (head + "rules: " + _nested("{a: ", 50_000)).encode(),
        (":8: rules.a.a.a", f"nested more than {MAX_DEPTH} levels deep")),
    "50,000 nested { as keys": (
        lambda head: (head + "rules: " + _nested("{", 50_000)).encode(),
        (":8: rules:", f"nested more than {MAX_DEPTH} levels deep")),
    "binary": (
        lambda head: b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4,
        (": not UTF-8 text",)),
    "invalid UTF-8 after good lines": (
        lambda head: head.encode() + b"seed: \xff\xfe\n",
        (":8: not UTF-8 text",)),
    "NUL bytes": (
        lambda head: head.encode() + b"seed: 1\x00\x00\n",
        (":8: not valid YAML: control character #x0000",)),
    "empty": (
        lambda head: b"",
        (":1: the file is empty",)),
    "tab-indented broken YAML": (
        lambda head: b"bots:\n\t- name: a\n\t  builtin: greedy\n",
        (":2: not valid YAML", "'\\t'")),
    "explicit !!int tag on a word": (
        lambda head: (head + "seed: !!int abc\n").encode(),
        (":8: seed: not valid YAML: 'abc' is not a valid int",)),
    "explicit !!bool tag on a word": (
        lambda head: (head + "faults: {strict: !!bool maybe}\n").encode(),
        (":8: faults.strict: not valid YAML: 'maybe' is not a valid bool",)),
    "explicit !!timestamp tag on a word": (
        lambda head: (head + "output: !!timestamp soon\n").encode(),
        (":8: output: not valid YAML: 'soon' is not a valid timestamp",)),
    "too many plain values": (
        lambda head: (head + "x-many: [" + "1," * (MAX_VALUES + 10) + "]\n").encode(),
        (":8: x-many[", f"too many values (the file holds more than {MAX_VALUES:,} values)")),
    "larger than the size limit": (
        lambda head: (head + "x-big: '" + "a" * (2 << 20) + "'\n").encode(),
        (": larger than 1024 KiB",)),
}


@pytest.mark.parametrize("kind", list(TOURNAMENT_FILES))
def test_hostile_tournament_file(tmp_path: Path, kind: str) -> None:
    make, expected = TOURNAMENT_FILES[kind]
    path = tmp_path / "hostile.yaml"
    path.write_bytes(make(tournament_head(tmp_path)))
    result = arena("run", str(path), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert_one_line_error(result, str(path), *expected)
    assert not (tmp_path / "bot-started").exists()
    assert not (tmp_path / "out").exists()


def test_directory_instead_of_a_tournament_file(tmp_path: Path) -> None:
    path = tmp_path / "dir.yaml"
    path.mkdir()
    result = arena("run", str(path), cwd=tmp_path)
    assert_one_line_error(result, str(path), ": is a directory")


def test_fifo_instead_of_a_tournament_file(tmp_path: Path) -> None:
    path = tmp_path / "fifo.yaml"
    os.mkfifo(path)  # opening it to read would wait for a writer forever
    result = arena("run", str(path), cwd=tmp_path)
    assert_one_line_error(result, str(path), ": is not a regular file")


def test_device_instead_of_a_tournament_file(tmp_path: Path) -> None:
    result = arena("run", "/dev/zero", cwd=tmp_path)  # read whole, it never ends
    assert_one_line_error(result, "/dev/zero", ": is not a regular file")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_tournament_file(tmp_path: Path) -> None:
    path = tmp_path / "locked.yaml"
    path.write_text(tournament_head(tmp_path))
    path.chmod(0)
    result = arena("run", str(path), cwd=tmp_path)
    assert_one_line_error(result, str(path), ": cannot read: Permission denied")


def test_huge_seed_on_the_command_line(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(tournament_head(tmp_path))
    result = arena("run", str(path), "--seed", "9" * 40, cwd=tmp_path)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "--seed" in result.stderr and "range" in result.stderr
    assert not (tmp_path / "bot-started").exists()


# -- deal files and ruleset files (arena play) -----------------------------------------

DEAL_FILES: dict[str, tuple[str, Callable[[], bytes], tuple[str, ...]]] = {
    "JSON nested 50,000 deep": (
        "deal.json", lambda: b'{"hands": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",
        (f"nested more than {MAX_DEPTH} levels deep",)),
    "JSON nested just too deep": (
        "deal.json", lambda: b'{"hands": ' + b"[" * MAX_DEPTH + b"]" * MAX_DEPTH + b"}",
        (f"nested more than {MAX_DEPTH} levels deep",)),
    "JSON 5,000-digit seed": (
        "deal.json", lambda: b'{\n"seed": ' + b"9" * 5000 + b"}",
        (":2: a number of 5,000 characters is too long",)),
    "JSON 5,000-digit float": (
        "deal.json", lambda: b'{"seed": 1.' + b"5" * 5000 + b"}",
        (":1: a number of 5,002 characters is too long",)),
    "JSON broken": (
        "deal.json", lambda: b'{"seed": 1,,}',
        (":1: not valid JSON",)),
    "JSON binary": (
        "deal.json", lambda: bytes(range(256)),
        (": not UTF-8 text", "a deal file")),
    "YAML billion laughs": (
        "deal.yaml", lambda: (billion_laughs() + "hands: *i\n").encode(),
        (":6: x-f[0]: too many values", "YAML aliases expand")),
    "YAML nested 50,000 deep": (
        "deal.yaml", lambda: b"hands: " + b"[" * 50_000,
        (":1: hands[0][0]", f"nested more than {MAX_DEPTH} levels deep")),
    "YAML 5,000-digit seed": (
        "deal.yaml", lambda: b"seed: " + b"1" * 5000,
        (":1: seed: a number of 5,000 characters is too long",)),
    "YAML binary value": (
        "deal.yaml", lambda: b"hands:\n  - order: !!binary aGVsbG8=\n",
        (":2: hands[0].order: expected a string, number, true/false or null, got a YAML binary",)),
    "YAML date as a seed": (
        "deal.yaml", lambda: b"seed: 2024-01-01\n",
        (":1: seed: expected a string, number, true/false or null, got a YAML timestamp",)),
    "YAML NUL bytes": (
        "deal.yaml", lambda: b"seed: 1\n\x00\n",
        (":2: not valid YAML: control character #x0000",)),
    "a number where cards belong": (
        "deal.json", lambda: b'{"hands": [{"order": 5}]}',
        ("deal plan hand 1 order: expected a list of cards",)),
    "null where a seat's cards belong": (
        "deal.json", lambda: b'{"hands": [{"hands": [[], null]}]}',
        ("deal plan hand 1 seat 1: expected a list of cards",)),
}


@pytest.mark.parametrize("kind", list(DEAL_FILES))
def test_hostile_deal_file(tmp_path: Path, kind: str) -> None:
    name, make, expected = DEAL_FILES[kind]
    path = tmp_path / name
    path.write_bytes(make())
    argv, marker = starter(tmp_path)
    result = arena("play", " ".join(argv), "greedy", "--deal", str(path), "--log-dir", str(tmp_path / "logs"),
                   cwd=tmp_path)
    shown = "" if expected[0].startswith("deal plan") else str(path)  # the game names the plan, not the file
    assert_one_line_error(result, shown, *expected)
    assert not marker.exists()


def test_deal_file_that_is_a_directory(tmp_path: Path) -> None:
    path = tmp_path / "deal.json"
    path.mkdir()
    argv, marker = starter(tmp_path)
    result = arena("play", " ".join(argv), "greedy", "--deal", str(path), cwd=tmp_path)
    assert_one_line_error(result, str(path), ": is a directory, expected a deal file")
    assert not marker.exists()


@pytest.mark.parametrize("text, expected", [
    (billion_laughs() + "contracts: *i\n", ("too many values", "YAML aliases expand")),
    ("preset: [shanghai]\n", ("setting 'preset': unknown preset",)),
    ("buy_penalty: " + "7" * 5000 + "\n", (":1: buy_penalty: a number of 5,000 characters",)),
    ("decks: " + "{2: " * 50_000 + "\n", (f"nested more than {MAX_DEPTH} levels deep",)),
])
def test_hostile_ruleset_file(tmp_path: Path, text: str, expected: tuple[str, ...]) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(text)
    argv, marker = starter(tmp_path)
    result = arena("play", " ".join(argv), "greedy", "--rules", str(path), cwd=tmp_path)
    shown = "" if expected[0].startswith("setting") else str(path)
    assert_one_line_error(result, shown, *expected)
    assert not marker.exists()


# -- what is within the bounds still works ----------------------------------------------

def test_shipped_tournament_files_still_load() -> None:
    example = load_config(REPO / "tournaments" / "example.yaml")
    limits = {b.name: b.limits for b in example.bots}
    assert limits["greedy"].memory_mb == 512 and limits["greedy"].cpu_seconds == 600  # limits: *limits
    assert limits["js"].memory_mb == 768 and limits["js"].cpu_seconds == 600  # <<: *limits, one override
    assert len(example.rules.contracts) == 10
    demo = load_config(REPO / "tournaments" / "demo.yaml")
    assert [b.name for b in demo.bots] == ["greedy", "random", "js", "greedy-builtin"]


def test_aliases_within_the_bound_are_expanded(tmp_path: Path) -> None:
    # 9**4 = 6,561 values through four levels of aliases: well within the bound.
    text = billion_laughs(4) + "seed: &s 7\nx-again: *s\n"
    path = tmp_path / "ok.yaml"
    path.write_text(tournament_head(tmp_path) + text)
    assert load_config(path).seed == 7
    deal = tmp_path / "deal.yaml"
    deal.write_text(billion_laughs(4) + "seed: 3\n")
    data = load_data(deal, "a deal file")
    assert data["seed"] == 3 and len(data["x-d"]) == 9 and data["x-d"][8][8][8] == ["lol"] * 9


def test_nesting_up_to_the_bound_is_read(tmp_path: Path) -> None:
    for name, text in (("deep.json", "[" * MAX_DEPTH + "]" * MAX_DEPTH),
                       ("deep.yaml", "[" * MAX_DEPTH + "]" * MAX_DEPTH)):
        path = tmp_path / name
        path.write_text(text)
        data = load_data(path, "a deal file")
        for _ in range(MAX_DEPTH - 1):
            data = data[0]
        assert data == []
        path.write_text("[" + text + "]")
        with pytest.raises(ConfigError, match="nested more than"):
            load_data(path, "a deal file")
