"""Lean --jobs workers: what a worker process imports and what the executor starts.

The exec'd worker processes are started from a parent script that, like the
``arena`` console script, has the whole CLI and the heavy libraries loaded;
the workers report every module they import (PYTHONPROFILEIMPORTTIME), and
none of the CLI's libraries may be among them.  (Forked workers, which import
nothing of their own, are tested in test_forked_workers.py.)  Run in a
subprocess with a timeout, so a hang fails the test instead of stalling the suite.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from arena.tournament.executors import channel

ROOT = Path(__file__).resolve().parent.parent

PARENT = """
import json, os, sys
sys.path.insert(0, "tests")                # run from the repository: proctree
from arena.cli import main                 # the console script's import: the whole CLI
import click, numpy, tabulate, trueskill, yaml
from arena.match import MatchSpec, SeatSpec
from arena.tournament.executors.local import EXEC, MatchFailure, ProcessExecutor
from proctree import children


if __name__ == "__main__":
    seats = (SeatSpec.builtin("random"),) * 3
    specs = [MatchSpec(f"m{i}", seats, {"contracts": ["2S3"]}, seed=i) for i in range(3)]
    if "unpicklable" in sys.argv:
        specs.insert(1, MatchSpec("bad", seats, {"contracts": ["2S3"], "x": lambda: 0}))
    os.environ["PYTHONPROFILEIMPORTTIME"] = "1"   # workers print every import to stderr
    executor = ProcessExecutor(2, start=EXEC)
    try:
        started = len(children(os.getpid()))
        outcomes = {o.match_id: (o.reason if isinstance(o, MatchFailure) else list(o.places))
                    for o in executor.run(specs)}
    finally:
        executor.close()
    print(json.dumps({"started": started, "outcomes": outcomes}))
"""

IMPORT_LINE = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)")
HEAVY = {"numpy", "trueskill", "click", "tabulate", "yaml", "sqlite3", "multiprocessing"}


def run_parent(tmp_path: Path, *args: str) -> tuple[dict, set[str]]:
    script = tmp_path / "parent.py"   # a file, like the console script (spawn re-ran it in workers)
    script.write_text(PARENT)
    done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    imported = {m.group(1) for line in done.stderr.splitlines() if (m := IMPORT_LINE.match(line))}
    return json.loads(done.stdout.strip().splitlines()[-1]), imported


def test_a_worker_imports_only_what_playing_a_match_needs(tmp_path: Path) -> None:
    report, imported = run_parent(tmp_path)
    assert {"arena.tournament.executors.worker", "arena.match.runner", "arena.shanghai.game"} <= imported
    assert len(report["outcomes"]) == 3  # the workers played, having imported no more than that
    top = {name.split(".")[0] for name in imported}
    assert not HEAVY & top, f"a worker imported {sorted(HEAVY & top)}"
    assert not {m for m in imported if m.startswith(("arena.cli", "arena.ranking", "arena.tournament.results.database",
                                                     "arena.tournament.config.model", "arena.account"))}


def test_the_executor_starts_its_workers_and_no_helper_process(tmp_path: Path) -> None:
    report, _ = run_parent(tmp_path)
    assert report["started"] == 2  # multiprocessing's spawn added a resource tracker


def test_a_spec_that_cannot_be_sent_fails_its_match_only(tmp_path: Path) -> None:
    report, _ = run_parent(tmp_path, "unpicklable")
    outcomes = report["outcomes"]
    assert sorted(outcomes) == ["bad", "m0", "m1", "m2"]
    assert "lambda" in outcomes["bad"] or "pickle" in outcomes["bad"].lower()
    assert all(isinstance(outcomes[m], list) for m in ("m0", "m1", "m2"))


def test_channel_carries_messages_larger_than_a_pipe_and_reports_the_end() -> None:
    ours, theirs = socket.socketpair()
    big = os.urandom(3 * channel.CHUNK + 5)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.extend([channel.receive(theirs.fileno()),
                                                         channel.receive(theirs.fileno())]))
    reader.start()
    channel.send(ours.fileno(), big)
    channel.send(ours.fileno(), b"")
    reader.join(timeout=30)
    assert got == [big, b""]
    ours.close()
    with pytest.raises(EOFError):
        channel.receive(theirs.fileno())
    theirs.close()


def test_only_the_first_signal_interrupts_a_worker() -> None:
    # A Ctrl-C reaches the workers, and the arena's SIGTERM follows: a second
    # KeyboardInterrupt inside the clean-up would leave a starting bot running.
    code = """
import os, signal
from arena.tournament.executors import worker
signal.signal(signal.SIGTERM, worker._interrupt)
signal.signal(signal.SIGINT, worker._interrupt)
caught = 0
try:
    os.kill(os.getpid(), signal.SIGINT)
except KeyboardInterrupt:
    caught += 1
    os.kill(os.getpid(), signal.SIGTERM)     # the arena's, during the clean-up
    os.kill(os.getpid(), signal.SIGINT)      # a second Ctrl-C
print(caught, signal.getsignal(signal.SIGINT) is worker._ignore, signal.getsignal(signal.SIGTERM) is worker._ignore)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "True", "True"]
