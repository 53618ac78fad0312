"""Tournament throughput per CPU-second, --jobs 1 against --jobs 2, and the start-up share.

Not a test.  Run: python benchmarks/tournament.py [FILE] [--pairs 5] [--without-reuse]

Plays the schedule of the tournament FILE (default: tournaments/demo.yaml)
as ``arena run`` plays it, through the tournament's executor (one bot pool
per worker: bot processes are started once and reused from match to match;
nothing is stored), with ``--jobs 1`` (the floor) and ``--jobs 2`` (the
subject), interleaved, ``--pairs`` times.  For each run:

- CPU: user + system seconds of this process (the arena's parent) and of
  every child (workers and bots, reaped; this script is a child subreaper so
  nothing orphaned escapes the count);
- matches per CPU-second, and per wall-second for information (on a shared
  machine the wall figures move with the neighbours' load);
- the start-up share: the match time spent starting bot processes and
  handshaking with them (``MatchResult.startup_seconds``, wall time as each
  match records it) over all match time, with process reuse as tournaments
  run; and how many bot processes were started.

Prints each pair, the ratio subject/floor of matches per CPU-second with its
median, min and max, and the start-up share's median, min and max.
``--without-reuse`` adds one run with a new pool for every match, the way
this benchmark measured the share before (it overstated it several times).
``results()`` returns the start-up shares as figures (no aim), for
``benchmarks/all.py``.
"""

from __future__ import annotations

import argparse
import ctypes
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from figures import Figure  # noqa: E402 (benchmarks/ is on sys.path)
from reaping import reap_orphans  # noqa: E402

from arena.match import MatchResult, run_match
from arena.tournament.config.load import load_config
from arena.tournament.executors.local import MatchFailure, make_executor
from arena.tournament.pairing.schedule import build_schedule
from arena.tournament.preflight import prepare_sandbox
from arena.tournament.runner import entry_spec

ROOT = Path(__file__).resolve().parent.parent
PR_SET_CHILD_SUBREAPER = 36


@dataclass(frozen=True)
class Run:
    jobs: int
    matches: int
    wall: float
    cpu: float
    startup_share: float
    starts: int          # bot processes started (seats not served by a reused process)

    @property
    def per_cpu_second(self) -> float:
        return self.matches / self.cpu


def _cpu_now() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _summary(jobs: int, results: list[MatchResult], wall: float, cpu: float) -> Run:
    total = sum(r.wall_seconds for r in results)
    startup = sum(r.startup_seconds for r in results)
    # A bot seat has a pid (a built-in one has none); not its stderr log, which
    # exists only once the bot has written to stderr.
    starts = sum(1 for r in results for i, reused in enumerate(r.reused)
                 if not reused and r.pids[i] is not None)
    return Run(jobs, len(results), wall, cpu, startup / total if total else 0.0, starts)


def measure(file: Path, jobs: int) -> Run:
    """The tournament's schedule on ``jobs`` workers, bots pooled as ``arena run`` does."""
    with tempfile.TemporaryDirectory() as tmp:
        config = load_config(file).with_overrides(output=tmp)
        mode = prepare_sandbox(config, warn=lambda _m: None)
        specs = [entry_spec(config, e, Path(tmp), mode) for e in build_schedule(config)]
        cpu, start = _cpu_now(), time.perf_counter()
        executor = make_executor(jobs)
        try:
            outcomes = list(executor.run(specs))
        finally:
            executor.close()
        wall = time.perf_counter() - start
        reap_orphans(time.monotonic() + 5)
        cpu = _cpu_now() - cpu
    failed = [o for o in outcomes if isinstance(o, MatchFailure)]
    if failed:
        sys.exit(f"--jobs {jobs}: {failed[0].match_id} failed: {failed[0].reason}")
    return _summary(jobs, [o for o in outcomes if isinstance(o, MatchResult)], wall, cpu)


def measure_without_reuse(file: Path) -> Run:
    """Every match starts its own bots (no pool): the old, misleading start-up share."""
    with tempfile.TemporaryDirectory() as tmp:
        config = load_config(file).with_overrides(output=tmp)
        mode = prepare_sandbox(config, warn=lambda _m: None)
        cpu, start = _cpu_now(), time.perf_counter()
        results = [run_match(entry_spec(config, e, Path(tmp), mode)) for e in build_schedule(config)]
        wall = time.perf_counter() - start
        reap_orphans(time.monotonic() + 5)
        cpu = _cpu_now() - cpu
    return _summary(1, results, wall, cpu)


def spread(values: list[float], fmt: str = "{:.3f}") -> str:
    return (f"median {fmt.format(statistics.median(values))} "
            f"(min {fmt.format(min(values))}, max {fmt.format(max(values))})")


def show(run: Run) -> str:
    return (f"--jobs {run.jobs}: {run.matches} matches, wall {run.wall:5.1f} s, CPU {run.cpu:6.2f} s, "
            f"{run.per_cpu_second:.3f} matches/CPU-s, {run.matches / run.wall * 60:5.1f} matches/min; "
            f"start-up {run.startup_share:.1%} of match time, {run.starts} bot processes started")


def run_pairs(file: Path, pairs: int, echo=print) -> list[tuple[Run, Run]]:
    out = []
    for _ in range(pairs):
        one = measure(file, 1)
        two = measure(file, 2)
        echo(f"  {show(one)}\n  {show(two)}")
        out.append((one, two))
    return out


def results(pairs_n: int = 5, file: Path = ROOT / "tournaments" / "demo.yaml") -> list[Figure]:
    """The start-up share with process reuse at --jobs 1 and 2 (informational:
    the issue sets no aim), from ``pairs_n`` interleaved pairs of runs."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1)   # best effort: only the CPU figures need it
    pairs = run_pairs(file, pairs_n, echo=lambda _line: None)
    try:
        shown = str(file.resolve().relative_to(ROOT))
    except ValueError:
        shown = str(file)
    command = f"python benchmarks/tournament.py {shown} --pairs {pairs_n}"
    return [Figure(f"start-up share of match time, process reuse, --jobs {jobs}",
                   tuple(run.startup_share for run in runs), "%", None, higher_is_better=False,
                   command=command)
            for jobs, runs in ((1, [a for a, _ in pairs]), (2, [b for _, b in pairs]))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", nargs="?", default=str(ROOT / "tournaments" / "demo.yaml"))
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--without-reuse", action="store_true", help="also measure the share with no process reuse")
    args = ap.parse_args()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1) != 0:
        print("warning: cannot become a child subreaper; orphaned processes' CPU is not counted")
    file = Path(args.file)
    print(f"tournament {file}; {args.pairs} pairs, --jobs 1 (floor) and --jobs 2 (subject) interleaved; "
          f"CPU of every process, bots included")
    pairs = run_pairs(file, args.pairs)
    print("matches per CPU-second, --jobs 2 / --jobs 1: "
          + spread([b.per_cpu_second / a.per_cpu_second for a, b in pairs]))
    print("matches per wall-second, --jobs 2 / --jobs 1: " + spread([a.wall / b.wall for a, b in pairs]))
    print("start-up share of match time, with process reuse: --jobs 1 "
          + spread([a.startup_share for a, _ in pairs], "{:.1%}") + "; --jobs 2 "
          + spread([b.startup_share for _, b in pairs], "{:.1%}"))
    if args.without_reuse:
        print("without process reuse (one run): " + show(measure_without_reuse(file)))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
