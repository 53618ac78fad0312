"""Per-match overhead of the Ray executor against local workers, at equal parallelism.

Not a test.  Run (as root: it makes itself a private network namespace, so
that Ray binds loopback and reaches nothing else):

    python benchmarks/ray_overhead.py [FILE] [--pairs 5] [--jobs 2] [--rounds 2] [--shared]

Plays the schedule of the tournament FILE (default: tournaments/demo.yaml)
``--rounds`` times (as deals of a longer tournament, with their own seeds)
on ``--jobs`` local worker processes (``ProcessExecutor``, the floor) and on
``--jobs`` Ray actors of a Ray started once on this machine (``RayExecutor``,
the subject; its files shipped to the actors as on a cluster, or
``--shared``), interleaved, ``--pairs`` times.  Each run starts its
executor and plays the first ``jobs`` matches untimed (bots start, actors
are placed), then times the rest:

- wall seconds per match (what the issue's aim is about: at most 10 % more
  on Ray), split into the time in the match (``MatchResult.wall_seconds``)
  and the time an executor slot spent outside a match (sending it, getting
  the result back, waiting for the next): the latter is the executor's own
  overhead;
- CPU seconds per match: this process, the local workers and their bots;
  for Ray, every process this one started (its daemons, GCS and raylet,
  and the actors with their workers and bots), read from /proc before and
  after (a process's own and its reaped children's time, so nothing is
  counted twice).

On a shared machine the wall figures move with the neighbours' load, which
is why the runs are interleaved and the ratio Ray/local is given per pair,
with its median, min and max.  And where Linux schedules by session
(autogroup, /proc/sys/kernel/sched_autogroup_enabled), a loaded machine
shares the CPU between sessions: the local workers share the arena's
session, each Ray worker has its own, so under load Ray's matches get more
of the CPU and can look faster.  The slot time outside the matches does not
depend on that share much: it is the figure that shows Ray's cost.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from arena.match import MatchSpec
from arena.tournament.config.load import load_config
from arena.tournament.config.model import SHARED
from arena.tournament.executors.local import MatchFailure, ProcessExecutor
from arena.tournament.executors.ray import RayExecutor, Shipment, connect
from arena.tournament.pairing.schedule import build_schedule
from arena.tournament.preflight import prepare_sandbox
from arena.tournament.runner import entry_spec

ROOT = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Run:
    kind: str
    matches: int
    wall: float
    cpu: float
    inside: float      # the matches' own wall seconds (MatchResult.wall_seconds), summed
    starts: int        # bot processes started (not reused from a pool)

    jobs: int = 2

    @property
    def outside(self) -> float:
        """Wall seconds per match that an executor slot spent not in a match:
        sending it, receiving the result, waiting for the next."""
        return max(0.0, self.wall * self.jobs - self.inside) / self.matches

    def show(self) -> str:
        return (f"{self.kind:5}: {self.matches} matches, per match {self.wall / self.matches * 1000:6.1f} ms wall, "
                f"{self.cpu / self.matches * 1000:6.1f} ms CPU; in the match {self.inside / self.matches * 1000:6.1f}"
                f" ms, outside {self.outside * 1000:5.1f} ms; {self.starts} bot starts")


def tree_cpu(roots: set[int] | None = None) -> float:
    """CPU seconds of this process and its descendants (those of ``roots``
    only, when given), live ones and those reaped."""
    stats: dict[int, tuple[int, float]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = (Path("/proc") / entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            # ppid, and utime stime cutime cstime (fields 4 and 14-17 of stat; 2 and 12-15 after the name)
            stats[int(entry)] = (int(fields[1]), sum(int(f) for f in fields[11:15]) / TICK)
    me = os.getpid()
    tops = roots if roots is not None else {me}
    total = 0.0
    for pid, (_, cpu) in stats.items():
        p = pid
        while p not in tops and p not in (0, 1, me) and p in stats:
            p = stats[p][0]
        if p in tops and pid != me:
            total += cpu
    own = resource.getrusage(resource.RUSAGE_SELF)
    return total + own.ru_utime + own.ru_stime


def specs_of(file: Path, out: str, rounds: int) -> list[MatchSpec]:
    config = load_config(file).with_overrides(output=out)
    mode = prepare_sandbox(config, warn=lambda _m: None)
    specs = []
    for r in range(rounds):
        for e in build_schedule(config.with_overrides(seed=(config.seed or 0) + r)):
            spec = entry_spec(config, e, Path(out) / "logs", mode)
            specs.append(dataclasses.replace(spec, match_id=f"{spec.match_id}-x{r}"))
    return specs


def measure(kind: str, specs: list[MatchSpec], jobs: int, shipment: Shipment | None) -> Run:
    executor = ProcessExecutor(jobs) if kind == "local" else RayExecutor(jobs, shipment=shipment)
    try:
        warm = list(executor.run(specs[:jobs]))
        # Local: the workers and their bots.  Ray: everything this process
        # started, its daemons too (their CPU is the price of Ray), so Ray
        # runs idle while local workers play.
        roots = {p.pid for p in executor.workers} if isinstance(executor, ProcessExecutor) else None
        cpu, start = tree_cpu(roots), time.perf_counter()
        outcomes = list(executor.run(specs[jobs:]))
        wall, cpu = time.perf_counter() - start, tree_cpu(roots) - cpu
    finally:
        executor.close()
    failed = [o for o in warm + outcomes if isinstance(o, MatchFailure)]
    if failed:
        sys.exit(f"{kind}: {failed[0].match_id} failed: {failed[0].reason}")
    results = [o for o in outcomes if not isinstance(o, MatchFailure)]
    inside = sum(r.wall_seconds for r in results)
    starts = sum(1 for r in results for i, reused in enumerate(r.reused) if not reused and r.stderr_logs[i])
    return Run(kind, len(outcomes), wall, cpu, inside, starts, jobs)


def spread(values: list[float]) -> str:
    return f"median {statistics.median(values):.3f} (min {min(values):.3f}, max {max(values):.3f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", nargs="?", default=str(ROOT / "tournaments" / "demo.yaml"))
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2, help="schedules played per run (more matches, steadier)")
    ap.add_argument("--shared", action="store_true", help="Ray actors use the paths as they are (no shipping)")
    ap.add_argument("--in-netns", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if not args.in_netns:  # again, in a network namespace of our own with loopback up
        argv = [sys.executable, *sys.argv, "--in-netns"]
        env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
        sys.exit(subprocess.call([sys.executable, str(ROOT / "tests" / "netns.py"), *argv], env=env))
    with tempfile.TemporaryDirectory() as out:
        config = load_config(args.file).with_overrides(output=out)
        specs = specs_of(Path(args.file), out, args.rounds)
        shipment = None
        if not args.shared and config.executor.files != SHARED:
            from arena.tournament.executors.choose import ship_plan
            shipment = ship_plan(config).shipment
        connect(None, shipment)  # one Ray for every run: its start is not a per-match cost
        print(f"{args.file}: {len(specs) - args.jobs} timed matches per run, {args.jobs} in parallel, "
              f"{'shared paths' if shipment is None else 'files shipped'}")
        ratios_wall, ratios_cpu, outside = [], [], {"local": [], "ray": []}
        for i in range(args.pairs):
            order = ("local", "ray") if i % 2 == 0 else ("ray", "local")
            runs = {kind: measure(kind, specs, args.jobs, shipment) for kind in order}
            print(f"  {runs['local'].show()}\n  {runs['ray'].show()}", flush=True)
            ratios_wall.append(runs["ray"].wall / runs["local"].wall)
            ratios_cpu.append(runs["ray"].cpu / runs["local"].cpu)
            for kind, run in runs.items():
                outside[kind].append(run.outside * 1000)
    print(f"Ray / local, wall per match: {spread(ratios_wall)}")
    print(f"Ray / local, CPU per match:  {spread(ratios_cpu)}")
    for kind, values in outside.items():
        print(f"{kind:5} slot time outside matches, ms per match: {spread(values)}")


if __name__ == "__main__":
    main()
