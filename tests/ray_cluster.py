"""A multi-node Ray scenario for tests/test_ray.py, run inside a private network namespace.

    python tests/ray_cluster.py TOURNAMENT OUT REPORT

Starts a Ray cluster of three nodes on this machine (``ray.cluster_utils.Cluster``:
a head without CPUs and two workers of one CPU each), then:

1. runs ``arena run TOURNAMENT --address ... --jobs 2 --out OUT`` and, once a
   match is stored, removes the worker node running an actor (as if it
   failed: its raylet and every process on it are killed), while the actor
   is in a match;
2. once the arena has played that match again and stored one more, SIGKILLs
   that arena (the head of the tournament) and waits for its bots to be gone;
3. runs the same command again, to the end (the cluster now has one CPU);
4. runs ``arena check`` of a bot on the cluster.

It writes REPORT (JSON): what each step saw, for the test to assert.

Each step waits for what it needs to see (a stored match, a process, the
cluster's own view of its nodes), never for a fixed time, and the tournament
cannot run ahead of it: the arena is stopped (SIGSTOP) from the moment the
node is chosen until the cluster has seen that node die, which takes Ray a
while (its health checks) and longer on a loaded machine.  Left running, the
arena would meanwhile play on with the other node, and on a busy machine could
finish the tournament before the head is killed.  The match the lost node was
playing is still played again: the arena learns of the loss once it runs.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from ray import ray_constants
from ray.cluster_utils import Cluster

DEADLINE = 240.0


def stored(db: Path) -> int:
    try:
        with sqlite3.connect(db) as conn:
            return int(conn.execute("select count(*) from matches").fetchone()[0])
    except sqlite3.Error:
        return 0


def wait_stored(db: Path, proc: subprocess.Popen[bytes], at_least: int) -> int:
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end and proc.poll() is None:
        if db.exists() and stored(db) >= at_least:
            break
        time.sleep(0.05)
    return stored(db) if db.exists() else 0


def wait_for_text(path: Path, text: str, proc: subprocess.Popen[bytes]) -> float | None:
    """Seconds until ``text`` is in the file ``path``; None if it never is."""
    start = time.monotonic()
    while time.monotonic() - start < DEADLINE and proc.poll() is None:
        if text in path.read_text(errors="replace"):
            return time.monotonic() - start
        time.sleep(0.05)
    return None


def children(pid: int) -> list[tuple[int, str]]:
    """(pid, command line) of the live children of ``pid``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = (Path("/proc") / entry / "stat").read_text()
            cmd = (Path("/proc") / entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append((int(entry), cmd))
    return found


def wait_for_node(cluster: Cluster, proc: subprocess.Popen[bytes]) -> object | None:
    """A worker node running an actor, once there is one (None if the arena
    ends first, or after ``DEADLINE``)."""
    end = time.monotonic() + DEADLINE
    while time.monotonic() < end and proc.poll() is None:
        node = node_with_actor(cluster)
        if node is not None:
            return node
        time.sleep(0.05)
    return None


def node_with_actor(cluster: Cluster) -> object | None:
    """A worker node whose raylet runs a MatchActor (Ray names the process after it)."""
    for node in cluster.worker_nodes:
        raylet = node.all_processes[ray_constants.PROCESS_TYPE_RAYLET][0].process.pid
        if any("MatchActor" in cmd for _, cmd in children(raylet)):
            return node
    return None


def main(tournament: str, out: str, report_path: str) -> None:
    report: dict[str, object] = {}
    began, seconds = time.monotonic(), {}
    report["seconds"] = seconds          # since the start, when each step ended

    def mark(step: str) -> None:
        seconds[step] = round(time.monotonic() - began, 1)

    # The head finds a lost node after 3 failed health checks a second apart, not 5 three seconds apart:
    # the scenario waited 13 s of its 33 for it (its GCS reads these from its environment).  Not
    # shorter: a node slow to answer on a loaded machine must not pass for lost.
    os.environ.update(RAY_health_check_period_ms="1000", RAY_health_check_timeout_ms="1000",
                      RAY_health_check_failure_threshold="3")
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=1)
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        mark("cluster")
        address = cluster.address
        command = [sys.executable, "-m", "arena", "run", tournament, "--address", address, "--jobs", "2",
                   "--out", out]
        db = Path(out) / "results.sqlite"
        err_path = Path(out).parent / "first-run.stderr"
        with err_path.open("wb") as err:
            proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
            report["stored_before_node_lost"] = wait_stored(db, proc, 1)
            node = wait_for_node(cluster, proc)
            mark("node found")
            report["node_found"] = node is not None
            if node is not None:
                os.kill(proc.pid, signal.SIGSTOP)      # see the module's docstring
                try:
                    cluster.remove_node(node, allow_graceful=False)
                    cluster.wait_for_nodes(timeout=DEADLINE)    # the cluster has seen it die
                finally:
                    os.kill(proc.pid, signal.SIGCONT)
                mark("node seen dead")
                report["seconds_to_replay"] = wait_for_text(err_path, "playing the match again", proc)
                report["stored_at_replay"] = stored(db)
            report["stored_before_head_killed"] = wait_stored(db, proc, stored(db) + 1)
            report["first_run_exit"] = proc.poll()
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            mark("first run killed")
        report["first_run_stderr"] = err_path.read_text(errors="replace")
        report["stored_after_head_killed"] = stored(db)
        resumed = subprocess.run(command, capture_output=True, text=True, timeout=DEADLINE)
        mark("resumed run")
        report["resume_exit"] = resumed.returncode
        report["resume_output"] = resumed.stdout[-3000:] + resumed.stderr[-3000:]
        check = subprocess.run([sys.executable, "-m", "arena", "check", f"{sys.executable} bots/greedy_bot.py",
                                "--address", address], capture_output=True, text=True, timeout=DEADLINE,
                               cwd=os.path.dirname(tournament))
        mark("check")
        report["check_exit"] = check.returncode
        report["check_output"] = check.stdout[:3000] + check.stdout[-3000:] + check.stderr[-3000:]  # head: containment
    finally:
        cluster.shutdown()
        Path(report_path).write_text(json.dumps(report), encoding="utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:4])
