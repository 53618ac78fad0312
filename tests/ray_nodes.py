"""Multi-node Ray scenarios of issue 33 for tests/test_ray_nodes.py, run
inside a private network namespace, in two groups, each on a cluster of its
own (the test runs both at once):

    python tests/ray_nodes.py WORKDIR REPORT nodes|faults

Each group starts a ``ray.cluster_utils.Cluster`` (a head without CPUs,
nodes "a" and "b" of one CPU each) and, one after another, "nodes":

- shipment: joins it as a run would, with a run's shipment of a home
  directory (tests/test_ray_shipping.py's), and lists the shipped folder's
  copy on each node;
- env: runs a tournament whose bot writes the environment it sees on its node;
- start: adds node "c" whose PATH lacks the folder of a bot's program,
  runs a tournament with that bot, removes the node;
- version: adds node "d" whose Python finds another arena version (a
  ``sitecustomize`` on its PYTHONPATH), runs a tournament, removes the node;
- blocked: adds node "e" whose object-transfer port (its object manager's)
  drops every packet (iptables, in the namespace), as behind a firewall that
  lets only the head's port through, and whose results are too large to
  travel with their call (``RAY_max_direct_call_object_size`` on the node):
  each waits there for the arena to fetch it, which never gets it; runs a
  tournament, which must play that match again elsewhere; removes the node;

and "faults":

- stall: runs a tournament of a slow bot and, once node "b" plays a match,
  stops its actor's process (SIGSTOP): its result never comes, as from a
  node behind a firewall; the run must play that match again on "a";
- head: runs a tournament of a slow bot and, once two matches are stored,
  kills the head's GCS (SIGKILL); then starts a new cluster whose head has
  the same address, runs the same command again (the bot no longer slow),
  and ``arena verify`` of the results.

The head's GCS listens on ``HEAD_PORT``: the command run again after the head
is lost names the same address.

It writes REPORT (JSON): what each step saw, for the tests to assert.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ray import ray_constants
from ray.cluster_utils import Cluster
from test_ray_shipping import home

DEADLINE = 300.0
HEAD_PORT = 6390
BLOCKED_PORT = 47001        # node "e"'s object manager
PYTHON = sys.executable
HERE = Path(__file__).resolve().parent


def arena(*args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    done = subprocess.run([PYTHON, "-m", "arena", *args], capture_output=True, text=True, timeout=DEADLINE, env=env)
    return {"exit": done.returncode, "stderr": done.stderr[-4000:], "stdout": done.stdout[-2000:]}


def tournament(path: Path, bots: str, extra: str = "deals: 1\n") -> Path:
    path.write_text(f"name: {path.stem}\nbots:\n{bots}players: 2\nseed: 8155092125062302339\n{extra}")
    return path


def shipment(cluster: Cluster, work: Path) -> dict[str, Any]:
    """What arrives on each node: the copy of the shipped folder, listed there."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from arena.tournament.config.load import load_config
    from arena.tournament.executors.choose import ship_plan
    from arena.tournament.executors.rayjoin import connect

    plan = ship_plan(load_config(home(work) / "t.yaml"))
    connect(cluster.address, plan.shipment)
    try:
        def listing() -> list[str]:
            return sorted(str(p.relative_to(os.getcwd())) for p in Path(os.getcwd()).rglob("*") if not p.is_dir())
        task = ray.remote(num_cpus=0)(listing)
        found = {n.node_id[:8]: ray.get(task.options(scheduling_strategy=NodeAffinitySchedulingStrategy(
            n.node_id, soft=False)).remote()) for n in cluster.worker_nodes}
    finally:
        ray.shutdown()
    return {"line": plan.line(), "on_nodes": found}


def env_seen(address: str, work: Path) -> dict[str, Any]:
    bot = work / "envbot"
    bot.mkdir()
    (bot / "common.py").write_text((HERE / "gamebots" / "common.py").read_text())
    (bot / "envbot.py").write_text(
        "import json, os, sys, common\n"
        "keys = ('PYTHONPATH', 'PYTHONBREAKPOINT', 'RAY_JOB_ID', 'RAY_RAYLET_PID', 'RAY_worker_niceness')\n"
        "sys.stderr.write(json.dumps({'cwd': os.getcwd(), **{k: os.environ.get(k) for k in keys}}) + '\\n')\n"
        "sys.stderr.flush()\ncommon.run()\n")
    path = tournament(work / "env.yaml", f"  - {{name: envbot, command: [{PYTHON}, envbot.py], dir: envbot}}\n"
                                         "  - {name: greedy, builtin: greedy}\n")
    run = arena("run", str(path), "--address", address, "--out", str(work / "env-out"))
    logs = sorted((work / "env-out" / "logs").glob("*envbot.stderr.log"))
    run["seen"] = [json.loads(line) for p in logs for line in p.read_text().splitlines() if line.startswith("{")]
    return run


def tools_on_path(work: Path) -> str:
    """A folder holding the program of bot "tool", put on this process's
    PATH (the nodes' too, started from here); the PATH without it."""
    tools = work / "tools"
    tools.mkdir()
    (tools / "common.py").write_text((HERE / "gamebots" / "common.py").read_text())
    program = tools / "arena-test-tool"
    program.write_text(f"#!{PYTHON}\nimport sys\nsys.path.insert(0, {str(tools)!r})\nimport common\ncommon.run()\n")
    program.chmod(0o755)
    without = os.environ["PATH"]
    os.environ["PATH"] = f"{tools}{os.pathsep}{without}"
    return without


def start_check(cluster: Cluster, work: Path, without_tools: str) -> dict[str, Any]:
    """Node "c" cannot find the program of bot "tool" on its PATH."""
    env = dict(os.environ)
    node = cluster.add_node(num_cpus=1, env_vars={"PATH": without_tools})
    cluster.wait_for_nodes()
    try:
        path = tournament(work / "start.yaml", "  - {name: tool, command: [arena-test-tool], dir: tools}\n"
                                               "  - {name: greedy, builtin: greedy}\n")
        run = arena("run", str(path), "--address", cluster.address, "--out", str(work / "start-out"), env=env)
    finally:
        cluster.remove_node(node)
        cluster.wait_for_nodes()
    return {**run, "node": node.node_id[:8], "out_exists": (work / "start-out").exists()}


def version(cluster: Cluster, work: Path) -> dict[str, Any]:
    """Node "d" runs another arena (as its Python sees it)."""
    site = work / "other-arena"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import arena\narena.__version__ = '0.0.1-other'\n")
    paths = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    node = cluster.add_node(num_cpus=1, env_vars={"PYTHONPATH": paths})
    cluster.wait_for_nodes()
    try:
        path = tournament(work / "version.yaml", "  - {name: greedy, builtin: greedy}\n"
                                                 "  - {name: random, builtin: random}\n")
        run = arena("run", str(path), "--address", cluster.address, "--out", str(work / "version-out"))
    finally:
        cluster.remove_node(node)
        cluster.wait_for_nodes()
    return {**run, "node": node.node_id[:8]}


def playing_actor(node: Any) -> int | None:
    """The pid of the MatchActor on ``node`` while it plays a match (Ray names the process after its call)."""
    raylet = node.all_processes[ray_constants.PROCESS_TYPE_RAYLET][0].process.pid
    for entry in os.listdir("/proc"):
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().decode(errors="replace")
        except (OSError, ValueError):
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == raylet and "MatchActor.play" in cmd:
            return int(entry)
    return None


def stall(cluster: Cluster, node: Any, work: Path) -> dict[str, Any]:
    bot = work / "slow"
    bot.mkdir()
    (bot / "common.py").write_text((HERE / "gamebots" / "common.py").read_text())
    (bot / "slow.py").write_text("import time, common\n"
                                 "def slow(msg):\n    time.sleep(0.05)\n    return common.minimal_reply(msg)\n"
                                 "common.run(on_request=slow)\n")
    path = tournament(work / "stall.yaml", f"  - {{name: slow, command: [{PYTHON}, slow.py], dir: slow}}\n"
                                           "  - {name: greedy, builtin: greedy}\n",
                      "rules: {contracts: [2S3], turn_cap_per_player: 5}\ntime: {startup: 2, per_move: 0.5}\n"
                      "deals: 3\n")
    out = work / "stall-out"
    # A match's bound is its worst case (19 s here) and a margin for worker and bot processes and Ray's
    # calls, 30 s; 8 s here, where those take a second: the scenario waited 49 s of its 56 for the bound.
    arena = "import arena.tournament.executors.node as node; node.PLAY_MARGIN = 8.0\nfrom arena.__main__ import run; run()"
    command = [PYTHON, "-c", arena, "run", str(path), "--address", cluster.address, "--out", str(out)]
    with (work / "stall.stderr").open("wb") as err:
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
        stopped = None
        end = time.monotonic() + DEADLINE
        while stopped is None and proc.poll() is None and time.monotonic() < end:
            stopped = playing_actor(node)
            time.sleep(0.01)
        if stopped is not None:
            os.kill(stopped, signal.SIGSTOP)
        proc.wait(timeout=DEADLINE)
    stopped_state = "gone"      # or a zombie: killed, its raylet has not reaped it yet
    try:
        if stopped is not None and Path(f"/proc/{stopped}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
            stopped_state = "left"
            os.kill(stopped, signal.SIGKILL)
    except OSError:
        pass
    return {"exit": proc.returncode, "stderr": (work / "stall.stderr").read_text()[-4000:],
            "stopped": stopped is not None, "actor_after": stopped_state, "node": node.node_id[:8]}


def blocked(cluster: Cluster, work: Path) -> dict[str, Any]:
    """Node "e", whose results never reach the arena (see the module)."""
    if shutil.which("iptables") is None:
        return {"skipped": "no iptables on this machine"}
    node = cluster.add_node(num_cpus=1, object_manager_port=BLOCKED_PORT,
                            env_vars={"RAY_max_direct_call_object_size": "2048"})
    cluster.wait_for_nodes()
    rule = ["INPUT", "-p", "tcp", "--dport", str(BLOCKED_PORT), "-j", "DROP"]
    subprocess.run(["iptables", "-A", *rule], check=True)
    try:
        path = tournament(work / "blocked.yaml", "  - {name: greedy, builtin: greedy}\n"
                                                 "  - {name: random, builtin: random}\n",
                          "rules: {contracts: [2S3], turn_cap_per_player: 5}\ndeals: 4\n")
        run = arena("run", str(path), "--address", cluster.address, "--out", str(work / "blocked-out"))
    finally:
        subprocess.run(["iptables", "-D", *rule], check=False)
        cluster.remove_node(node)
        cluster.wait_for_nodes()
    return {**run, "node": node.node_id[:8], "stored": stored_count(work / "blocked-out" / "results.sqlite")}


def stored_count(db: Path) -> int:
    try:
        with sqlite3.connect(db) as conn:
            return int(conn.execute("select count(*) from matches").fetchone()[0])
    except sqlite3.Error:
        return 0


def new_cluster() -> Cluster:
    """A head without CPUs at ``HEAD_PORT``, nodes "a" and "b" of one CPU each."""
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False,
                                                            "gcs_server_port": HEAD_PORT})
    cluster.add_node(num_cpus=1)
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    return cluster


def head_lost(cluster: Cluster, work: Path) -> tuple[dict[str, Any], Cluster]:
    """The head's GCS killed while a run plays; the same command again on a
    new cluster at the same address; the report, and the new cluster."""
    bot = work / "slowish"
    bot.mkdir()
    (bot / "common.py").write_text((HERE / "gamebots" / "common.py").read_text())
    (bot / "slow").write_text("")      # shipped with the bot: slow while it is there
    (bot / "slowish.py").write_text("import os, time, common\n"
                                    "def slow(msg):\n    time.sleep(0.2 if os.path.exists('slow') else 0)\n"
                                    "    return common.minimal_reply(msg)\n"
                                    "common.run(on_request=slow)\n")
    path = tournament(work / "head.yaml", f"  - {{name: slowish, command: [{PYTHON}, slowish.py], dir: slowish}}\n"
                                          "  - {name: greedy, builtin: greedy}\n  - {name: random, builtin: random}\n",
                      "rules: {contracts: [2S3], turn_cap_per_player: 5}\ndeals: 4\n")
    out = work / "head-out"
    command = [PYTHON, "-m", "arena", "run", str(path), "--address", cluster.address, "--out", str(out)]
    report: dict[str, Any] = {"address": cluster.address}
    with (work / "head.stderr").open("wb") as err:
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
        end = time.monotonic() + DEADLINE
        while stored_count(out / "results.sqlite") < 2 and proc.poll() is None and time.monotonic() < end:
            time.sleep(0.05)
        report["playing_at_kill"] = proc.poll() is None
        cluster.head_node.all_processes[ray_constants.PROCESS_TYPE_GCS_SERVER][0].process.kill()
        report["exit"] = proc.wait(timeout=DEADLINE)
    report["stderr"] = (work / "head.stderr").read_text()[-4000:]
    report["stored"] = stored_count(out / "results.sqlite")
    cluster.shutdown()
    cluster = new_cluster()
    (bot / "slow").unlink()
    again = subprocess.run(command, capture_output=True, text=True, timeout=DEADLINE)
    report["again"] = {"exit": again.returncode, "stderr": again.stderr[-4000:]}
    report["stored_again"] = stored_count(out / "results.sqlite")
    report["verify"] = arena("verify", str(out))
    return report, cluster


GROUPS = ("nodes", "faults")     # each on a cluster of its own, run side by side (tests/test_ray_nodes.py)


def main(workdir: str, report_path: str, group: str) -> None:
    """The steps of ``group``: "nodes" (shipment, env, start, version,
    blocked) or "faults" (stall, head), on a cluster of its own; each step's
    seconds in the report.  One after another on one cluster, the steps took
    115 s, and the whole test ran 200 s in the suite on 2 cores: the longest
    test of the suite, and so its floor."""
    work = Path(workdir) / group
    work.mkdir(parents=True)
    report: dict[str, Any] = {}
    without_tools = tools_on_path(work) if group == "nodes" else ""
    began = time.monotonic()
    cluster = new_cluster()
    b = next(iter(cluster.worker_nodes))         # one of its two one-CPU nodes
    try:
        report["seconds"] = {f"{group} cluster": time.monotonic() - began}
        steps: list[tuple[str, Callable[[], Any]]] = [
            ("shipment", lambda: shipment(cluster, work)),
            ("env", lambda: env_seen(cluster.address, work)),
            ("start", lambda: start_check(cluster, work, without_tools)),
            ("version", lambda: version(cluster, work)),
            ("blocked", lambda: blocked(cluster, work))] if group == "nodes" else [
            ("stall", lambda: stall(cluster, b, work))]
        for name, step in steps:
            began = time.monotonic()
            report[name] = step()
            report["seconds"][name] = time.monotonic() - began
        if group == "faults":
            began = time.monotonic()
            report["head"], cluster = head_lost(cluster, work)
            report["seconds"]["head"] = time.monotonic() - began
    finally:
        cluster.shutdown()
        Path(report_path).write_text(json.dumps(report), encoding="utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:4])
