"""A small seed is guessable: a bot that knows arena's code tries seeds until
one deals its own first hand (about 0.2 ms a try), and then knows every
hand.  ``arena run`` warns of one before bot programs play; a seed it draws
itself (63 bits) and a field of built-in players need no warning."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from inproc import arena_here

ROOT = Path(__file__).resolve().parent.parent
GAMEBOTS = ROOT / "tests" / "gamebots"
PY = sys.executable


def run(tmp_path: Path, seed: int | None, program: bool = True, *extra: str) -> subprocess.CompletedProcess[str]:
    first = (f"{{name: b, command: [{json.dumps(PY)}, {json.dumps(str(GAMEBOTS / 'minimal.py'))}]}}" if program
             else "{name: b, builtin: random}")
    seed_line = "" if seed is None else f"seed: {seed}\n"
    (tmp_path / "t.yaml").write_text(f"name: t\nbots:\n  - {first}\n  - {{name: g, builtin: greedy}}\n"
                                     f"players: 2\ndeals: 1\nsandbox: none\nrules: {{contracts: [2S3]}}\n{seed_line}")
    return arena_here("run", str(tmp_path / "t.yaml"), "--out", str(tmp_path / "out"), "--jobs", "1", *extra,
                      cwd=tmp_path)


def warnings(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in done.stderr.splitlines() if line.startswith("warning:")]


@pytest.mark.parametrize("seed", [1, 2026, -(2 ** 32) + 1])
def test_a_small_seed_is_warned_of_before_bot_programs_play(tmp_path: Path, seed: int) -> None:
    done = run(tmp_path, seed)
    assert done.returncode == 0, done.stderr
    assert warnings(done) == [
        f"warning: seed {seed} is small: a bot can find it by trying seeds until one deals its own hand, and then "
        f"know every hand; for a competition leave 'seed' out (arena draws a 63-bit one and stores it) or give "
        f"a large random one (python3 -c 'import secrets; print(secrets.randbits(63))')"]


def test_a_large_seed_a_drawn_seed_and_built_in_players_are_not(tmp_path: Path) -> None:
    for d in ("large", "drawn", "builtin", "stored"):
        (tmp_path / d).mkdir()
    assert warnings(run(tmp_path / "large", 2 ** 32)) == []
    assert warnings(run(tmp_path / "drawn", None)) == []
    assert warnings(run(tmp_path / "builtin", 1, False)) == []
    # a resume that finds every match stored plays nothing: nothing to warn of
    assert len(warnings(run(tmp_path / "stored", 1))) == 1
    assert warnings(run(tmp_path / "stored", 1)) == []


def test_the_shipped_tournament_files_use_large_seeds() -> None:
    for name in ("demo.yaml", "example.yaml"):
        seeds = [line for line in (ROOT / "tournaments" / name).read_text().splitlines() if line.startswith("seed:")]
        assert len(seeds) == 1 and abs(int(seeds[0].split(":")[1])) >= 2 ** 32, (name, seeds)
