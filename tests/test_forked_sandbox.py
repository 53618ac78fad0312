"""Workers forked from the arena inherit its sandbox probe and seccomp
filter: the arena resolves the containment and builds the filter once,
before it forks, so no worker (nor a replacement) runs bwrap to probe it or
compiles the filter again (about 17 ms of each worker's start, measured).

The arena is a script run in a subprocess (so that the forks are of it, not
of the test runner) that counts, in a file, each probe and each filter
build with the pid that did it, and each bot start with its containment.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena.process.confine import sandbox

ROOT = Path(__file__).resolve().parent.parent
GAMEBOTS = Path(__file__).parent / "gamebots"

ARENA = """
import functools, json, os, sys
from arena.process import bot
from arena.process.confine import sandbox, seccomp
from arena.cli import main

out = open(sys.argv[2], "a", buffering=1)

def note(kind, **more):
    out.write(json.dumps({"kind": kind, "pid": os.getpid(), **more}) + "\\n")

real_probe = sandbox._probe
def probe(*args, **kwargs):
    note("probe")
    return real_probe(*args, **kwargs)
sandbox._probe = probe

real_build = seccomp.program.__wrapped__
@functools.cache
def program():
    note("seccomp")
    return real_build()
seccomp.program = program

real_start = bot.BotProcess.start
def start(self):
    done = real_start(self)
    note("bot", mode=self.containment.mode)
    return done
bot.BotProcess.start = start

note("arena")
main(["run", sys.argv[1], "--jobs", "2", "--out", sys.argv[3], "-q"], standalone_mode=False)
"""


def tournament(tmp_path: Path, mode: str) -> Path:
    path = tmp_path / "t.yaml"
    command = [sys.executable, str(GAMEBOTS / "minimal.py")]
    path.write_text(f"""
name: forked
bots:
  - name: a
    command: {json.dumps(command)}
  - name: b
    command: {json.dumps(command)}
  - name: c
    builtin: random
players: 3
rules: {{contracts: [2S3], turn_cap_per_player: 10}}
time: {{startup: 30, per_move: 10}}
sandbox: {mode}
deals: 6
seed: 4
""")
    return path


def run_arena(tmp_path: Path, mode: str) -> tuple[int, list[dict]]:
    script, notes = tmp_path / "arena_script.py", tmp_path / "notes.jsonl"
    script.write_text(ARENA)
    done = subprocess.run([sys.executable, str(script), str(tournament(tmp_path, mode)), str(notes),
                           str(tmp_path / "out")], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [json.loads(line) for line in notes.read_text().splitlines()]
    arena = next(n["pid"] for n in lines if n["kind"] == "arena")
    return arena, lines


def played(arena: int, notes: list[dict]) -> tuple[list[dict], list[dict]]:
    """The bots the workers started, and those the arena did: one per bot
    program, the probe that timed it for the estimate before the run."""
    bots = [n for n in notes if n["kind"] == "bot" and n["pid"] != arena]
    probed = [n for n in notes if n["kind"] == "bot" and n["pid"] == arena]
    assert len(probed) == 2, probed
    return bots, probed


def bwrap_works() -> bool:
    try:
        sandbox.resolve(sandbox.BWRAP)
    except sandbox.SandboxUnavailable:
        return False
    return True


@pytest.mark.skipif(not bwrap_works(), reason="no working bwrap here")
def test_forked_workers_neither_probe_nor_build_the_filter(tmp_path: Path) -> None:
    arena, notes = run_arena(tmp_path, "auto")
    bots, probed = played(arena, notes)
    workers = {n["pid"] for n in bots}
    # The bots were started by forked workers, sandboxed: the notes prove it,
    # since an exec'd worker would not run this script's counting code.  How
    # many of the two workers got a match is the scheduler's business: on a
    # loaded machine one played all 18 while the other was still starting.
    assert bots and workers and arena not in workers
    assert {n["mode"] for n in bots + probed} == {sandbox.BWRAP}
    assert {n["pid"] for n in notes if n["kind"] == "probe"} == {arena}
    assert [n["pid"] for n in notes if n["kind"] == "seccomp"] == [arena]


def test_without_the_sandbox_the_arena_builds_no_filter(tmp_path: Path) -> None:
    arena, notes = run_arena(tmp_path, "none")
    bots, probed = played(arena, notes)
    assert bots and {n["mode"] for n in bots + probed} == {sandbox.NONE}
    assert not [n for n in notes if n["kind"] in ("probe", "seccomp")]
