"""CPU affinity: each match, its bots included, on a CPU of its own.

End to end through ``arena run``: the bots (tests/gamebots/cpus.py) write
the CPUs they may use to their stderr logs at every start, and whether the
sandbox let them widen that.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from arena.match import MatchSpec, SeatSpec
from arena.process import SandboxPolicy
from arena.process.confine import affinity
from arena.tournament.executors.local import SerialExecutor

ROOT = Path(__file__).resolve().parent.parent
BOT = ROOT / "tests" / "gamebots" / "cpus.py"
CPUS = affinity.usable_cpus()
two_cpus = pytest.mark.skipif(len(CPUS) < 2, reason="needs two CPUs (CI has two)")


def test_plan_gives_each_job_a_cpu_of_its_own_or_none_when_there_are_too_few(monkeypatch):
    monkeypatch.setattr(affinity, "usable_cpus", lambda: (2, 5, 7))
    assert affinity.plan(1) == [2]
    assert affinity.plan(3) == [2, 5, 7]
    assert affinity.plan(4) == [None] * 4          # more jobs than CPUs: the scheduler balances
    monkeypatch.setattr(affinity, "usable_cpus", lambda: (3,))
    assert affinity.plan(1) == [None]              # one CPU: nothing to choose
    monkeypatch.setattr(affinity, "usable_cpus", lambda: ())
    assert affinity.plan(2) == [None, None]        # unknown (not Linux)


def reports(out: Path) -> list[tuple[frozenset[int], str]]:
    """(CPUs, moved/refused) of every start of a cpus bot in the run."""
    found = []
    for log in sorted((out / "logs").glob("*.stderr.log")):
        for line in log.read_text().splitlines():
            if line.startswith("CPUS "):
                _, cpus, moved = line.split()
                found.append((frozenset(map(int, cpus.split(","))), moved))
    return found


def run(base: Path, *args: str, sandbox: str = "none") -> list[tuple[frozenset[int], str]]:
    out = base / "out"
    tfile = base / "t.yaml"
    bot = {"command": [sys.executable, str(BOT)], "dir": str(BOT.parent)}
    data = {"name": "cpus", "players": 2, "seed": 3, "rules": {"contracts": ["2S3"]}, "output": str(out),
            "sandbox": sandbox, "bots": [{"name": "a", **bot}, {"name": "b", **bot},
                                         {"name": "ref", "builtin": "random"}]}
    tfile.write_text(json.dumps(data))
    done = subprocess.run([sys.executable, "-m", "arena", "run", str(tfile), *args], capture_output=True,
                          text=True, timeout=180, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    found = reports(out)
    assert found, "the bots did not report"
    return found


@two_cpus
def test_parallel_matches_play_each_on_its_own_cpu_and_a_sandboxed_bot_cannot_leave_it(visible_dir):
    found = run(visible_dir, "--jobs", "2", sandbox="bwrap")
    assert all(len(cpus) == 1 for cpus, _ in found), found
    assert {cpus for cpus, _ in found} == {frozenset({CPUS[0]}), frozenset({CPUS[1]})}, found
    assert {moved for _, moved in found} == {"refused"}, found


@two_cpus
def test_one_job_pins_its_matches_and_no_affinity_leaves_every_cpu(tmp_path):
    (tmp_path / "one").mkdir()
    pinned = run(tmp_path / "one", "--jobs", "1")
    assert {cpus for cpus, _ in pinned} == {frozenset({CPUS[0]})}, pinned
    (tmp_path / "free").mkdir()
    free = run(tmp_path / "free", "--jobs", "2", "--no-affinity")
    assert {cpus for cpus, _ in free} == {frozenset(CPUS)}, free


@two_cpus
def test_the_serial_executor_gives_its_thread_back_every_cpu_between_matches(tmp_path):
    bot = SeatSpec.command([sys.executable, str(BOT)], name="cpus", sandbox=SandboxPolicy(mode="none"))
    spec = MatchSpec("m1", (bot, SeatSpec.builtin("random")), {"contracts": ["2S3"]}, seed=1,
                     log_dir=str(tmp_path))
    before = os.sched_getaffinity(0)
    executor = SerialExecutor(pin=True)
    try:
        outcome = next(iter(executor.run([spec])))
        assert os.sched_getaffinity(0) == before      # between matches: the tournament's thread again
    finally:
        executor.close()
    assert not outcome.faults
    log = Path(spec.stderr_log(0) or "")
    assert log.read_text().split()[:2] == ["CPUS", str(CPUS[0])]   # the bot played on one CPU
