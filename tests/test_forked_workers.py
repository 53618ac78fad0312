"""Workers forked from the arena (``ProcessExecutor`` with ``start=fork``, and
``auto`` in a process with one thread, as ``arena run`` is).

Each test runs a parent script in a subprocess, with a timeout, so a hang
fails the test instead of stalling the suite (and so that the forks are of
that script, not of the test runner).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PARENT = """
import atexit, json, os, sys, threading
from arena.match import MatchSpec, SeatSpec
from arena.tournament.executors.local import MatchFailure, ProcessExecutor

mode, witness = sys.argv[1], sys.argv[2]
# Only this process may run its exit handlers: a forked worker that returned
# into this code, or ran them, would write its pid here too.
atexit.register(lambda: open(witness, "a").write(f"{os.getpid()}\\n"))
if "thread" in sys.argv:        # a parent with a second thread must not fork
    stop = threading.Event()
    threading.Thread(target=stop.wait, daemon=True).start()
if "after-a-bot" in sys.argv:    # as after the start-up probe: a bot started and closed just before
    from arena.process import BotProcess, BotSpec, SandboxPolicy
    probe = BotProcess(BotSpec([sys.executable, "tests/gamebots/minimal.py"], sandbox=SandboxPolicy("none"))).start()
    probe.close()


def worker_facts(pid):
    def read(name):
        with open(f"/proc/{pid}/{name}", "rb") as f:
            return f.read()
    return {"comm": read("comm").decode().strip(), "cmdline": read("cmdline").decode(errors="replace"),
            "stdin": os.readlink(f"/proc/{pid}/fd/0")}


seats = (SeatSpec.builtin("random"), SeatSpec.builtin("greedy"), SeatSpec.builtin("random"))
specs = [MatchSpec(f"m{i}", seats, {"contracts": ["2S3"]}, seed=i) for i in range(4)]
executor = ProcessExecutor(2, start=mode)
try:
    outcomes = {o.match_id: (o.reason if isinstance(o, MatchFailure) else [list(o.places), list(o.totals)])
                for o in executor.run(specs)}
    facts = [worker_facts(w.pid) for w in executor.workers]   # once they have played: set up, alive
    ended = None
    if "close-first" in sys.argv:
        # The arena closes its end of worker 0's socket: worker 0 must see the
        # end and stop, although worker 1 was forked after it was made.
        first = executor.slots[0]
        first.conn.close()
        ended = first.process.wait(timeout=60)
finally:
    executor.close()
print(json.dumps({"me": os.getpid(), "cmdline": open("/proc/self/cmdline", "rb").read().decode(errors="replace"),
                  "facts": facts, "outcomes": outcomes, "ended": ended}))
"""


def run_parent(tmp_path: Path, mode: str, *args: str) -> tuple[dict, list[str]]:
    script = tmp_path / "parent.py"
    script.write_text(PARENT)
    witness = tmp_path / "exits.txt"
    done = subprocess.run([sys.executable, str(script), mode, str(witness), *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), witness.read_text().split()


def test_forked_workers_play_as_exec_d_ones_do(tmp_path: Path) -> None:
    forked, _ = run_parent(tmp_path, "fork")
    execd, _ = run_parent(tmp_path, "exec")
    assert len(forked["outcomes"]) == 4
    assert all(isinstance(v, list) for v in forked["outcomes"].values()), forked["outcomes"]
    assert forked["outcomes"] == execd["outcomes"]      # same seeds, same matches


def test_a_forked_worker_is_named_and_reads_no_terminal(tmp_path: Path) -> None:
    report, _ = run_parent(tmp_path, "fork")
    assert len(report["facts"]) == 2
    for facts in report["facts"]:
        assert facts["comm"] == "arena-worker"         # how ps, the benchmark and tests tell it from a bot
        assert facts["cmdline"] == report["cmdline"]   # forked, not exec'd
        assert facts["stdin"] == "/dev/null"


def test_a_forked_worker_ends_without_running_the_arena_s_exit_code(tmp_path: Path) -> None:
    report, exits = run_parent(tmp_path, "fork")
    assert exits == [str(report["me"])]


def test_a_forked_worker_holds_no_other_worker_s_socket(tmp_path: Path) -> None:
    report, _ = run_parent(tmp_path, "fork", "close-first")
    assert report["ended"] == 0


def test_auto_forks_a_single_threaded_arena_and_execs_a_threaded_one(tmp_path: Path) -> None:
    single, _ = run_parent(tmp_path, "auto")
    assert {f["comm"] for f in single["facts"]} == {"arena-worker"}
    threaded, _ = run_parent(tmp_path, "auto", "thread")
    for facts in threaded["facts"]:
        assert "arena.tournament.executors.worker" in facts["cmdline"] and facts["comm"] != "arena-worker"
    assert threaded["outcomes"] == single["outcomes"]


def test_auto_forks_right_after_a_bot_has_been_closed(tmp_path: Path) -> None:
    """After the start-up probe its bots' watchdog thread ended at its next
    scan, a quarter of a second or more later: an arena that found it there
    started exec'd workers (test_forked_sandbox.py found none forked).  The
    last bot's close ends it now.  A thread of the application's own is not
    waited for (the test above: exec'd)."""
    after, _ = run_parent(tmp_path, "auto", "after-a-bot")
    assert {f["comm"] for f in after["facts"]} == {"arena-worker"}


CTRL_C_AT_FORK = """
import json, os, signal, sys
sys.path.insert(0, "tests")                # run from the repository: proctree
from arena.tournament.executors.local import FORK, ProcessExecutor
from proctree import children

real_fork = os.fork


def fork_with_ctrl_c():
    os.kill(os.getpid(), signal.SIGINT)     # held (blocked) until the arena's side of the fork is set
    return real_fork()


os.fork = fork_with_ctrl_c
try:
    ProcessExecutor(2, start=FORK)
    interrupted = False
except KeyboardInterrupt:
    interrupted = True
print(json.dumps({"interrupted": interrupted, "children": children(os.getpid())}))
"""


def test_a_ctrl_c_during_a_fork_leaves_no_worker_behind(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", CTRL_C_AT_FORK], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {"interrupted": True, "children": []}
