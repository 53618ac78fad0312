"""Cost of ``arena report``: matches reported per CPU-second, against a floor.

Not a test. Run:
    python benchmarks/report.py [--pairs 5] [--bots 6] [--jobs 2]
    python benchmarks/report.py --baseline-ref 84ca56d      # also: this tree vs that commit

The results: a round robin of ``--bots`` built-in players (greedy, random
and passive in turn), 3 a table, one deal: C(bots, 3) tables x 3 rotations
(6 bots: 60 matches; 12 bots: 660, a class-sized tournament), played once
with ``arena run`` into a temporary directory.

Subject: ``arena report RESULTS`` (the page, the grade book, a replay per
match), as a child process.  Its CPU is the child's and its workers'
(``RUSAGE_CHILDREN``), so replays written by several processes count in full.

Floor: a child that reads every stored match's record and replays its
actions through the engine, the work no report of every match can skip.
Floor and subject are interleaved in pairs (the order alternating), so a
machine that gets busier or quieter moves both; the script prints each
one's median matches per CPU-second with min and max, the subject's wall
time, and the median ratio floor / subject (how many times the bare replay
the report costs) with its min and max.

``--baseline-ref REF`` (or ``--baseline DIR``, a directory holding ``arena/``)
also times the report of that tree, interleaved with this one's, and prints
CPU and wall per report and the ratio this / baseline.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from engine import extract  # noqa: E402 (benchmarks/ is on sys.path)
from figures import Figure  # noqa: E402

HERE = Path(__file__).resolve().parent.parent
KINDS = ("greedy", "random", "passive")

FLOOR = """
import sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from arena.report.replay import _game
from arena.shanghai.actions import action_from_json
from arena.tournament.results.database import ResultStore

store = ResultStore(Path(sys.argv[2]), readonly=True)
for m in store.matches():
    record = store.record(m.match_id)
    game = _game(record)
    for entry in record["actions"]:
        game.apply(action_from_json(entry["action"]), seat=entry["seat"])
"""


def tournament(directory: Path, bots: int) -> Path:
    """Play the round robin; its results directory."""
    spec = directory / "report-bench.yaml"
    lines = ["name: report-bench", "bots:"]
    lines += [f"  - name: b{i:02d}\n    builtin: {KINDS[i % 3]}" for i in range(bots)]
    lines += ["players: 3", "deals: 1", "seed: 5", "out: results"]
    spec.write_text("\n".join(lines) + "\n")
    subprocess.run([sys.executable, "-m", "arena", "run", str(spec), "--jobs", "2", "-q"], check=True,
                   stdout=subprocess.DEVNULL, cwd=HERE)
    return directory / "results"


def child_cpu(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """(CPU seconds of the child and everything it waited for, wall seconds).
    Run from /: ``-m`` puts the working directory first on the path, and from
    a checkout that would be its arena, whatever PYTHONPATH says."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env, cwd="/")
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def report(root: Path, results: Path, out: Path, jobs: int | None) -> tuple[float, float]:
    argv = [sys.executable, "-m", "arena", "report", str(results), "--out", str(out), "-q"]
    env = {**os.environ, "PYTHONPATH": str(root)}
    # An older tree has no --jobs: only this tree's report is given one.
    return child_cpu(argv + ([] if jobs is None else ["--jobs", str(jobs)]), env)


def floor(results: Path) -> tuple[float, float]:
    return child_cpu([sys.executable, "-c", FLOOR, str(HERE), str(results / "results.sqlite")])


def pairs(first, second, n: int) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """n interleaved samples of two measurements, the order alternating."""
    a: list[tuple[float, float]] = []
    b: list[tuple[float, float]] = []
    for i in range(n):
        if i % 2 == 0:
            a.append(first())
            b.append(second())
        else:
            b.append(second())
            a.append(first())
    return a, b


def spread(xs: list[float], fmt: str = ",.1f") -> str:
    return f"{format(statistics.median(xs), fmt)} [{format(min(xs), fmt)} .. {format(max(xs), fmt)}]"


def matches_of(results: Path) -> int:
    sys.path.insert(0, str(HERE))
    from arena.tournament.results.database import ResultStore
    store = ResultStore(results / "results.sqlite", readonly=True)
    try:
        return len(store.completed_ids())
    finally:
        store.close()


def measure(pairs_n: int, bots: int, jobs: int | None, work: Path) -> dict[str, object]:
    results = tournament(work, bots)
    n = matches_of(results)
    sub, flo = pairs(lambda: report(HERE, results, work / "report", jobs), lambda: floor(results), pairs_n)
    return {"matches": n, "subject": sub, "floor": flo, "results": results}


def results(pairs_n: int = 5, bots: int = 6) -> list[Figure]:
    """Matches reported per CPU-second (information; no aim), every pair's sample."""
    with tempfile.TemporaryDirectory(prefix="report-bench-") as tmp:
        r = measure(pairs_n, bots, None, Path(tmp))
    n = r["matches"]
    return [Figure(f"arena report, {n} matches: matches per CPU-second", tuple(n / c for c, _ in r["subject"]),
                   "", None, higher_is_better=True, command=f"python benchmarks/report.py --pairs {pairs_n}")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=5, help="interleaved floor/subject pairs (at least 5)")
    ap.add_argument("--bots", type=int, default=6, help="built-in bots of the round robin (12: 660 matches)")
    ap.add_argument("--jobs", type=int, default=None, help="arena report --jobs (default: its own)")
    ap.add_argument("--baseline", type=Path, help="another checkout to compare this tree's report with")
    ap.add_argument("--baseline-ref", help="a git commit to compare this tree's report with")
    args = ap.parse_args()
    if args.pairs < 5:
        ap.error("--pairs must be at least 5")
    if args.bots < 3:
        ap.error("--bots must be at least 3")
    baseline = extract(args.baseline_ref) if args.baseline_ref else args.baseline
    if baseline is not None and not (baseline / "arena" / "report").is_dir():
        ap.error(f"baseline {baseline}: no arena/report/ there")
    with tempfile.TemporaryDirectory(prefix="report-bench-") as tmp:
        work = Path(tmp)
        r = measure(args.pairs, args.bots, args.jobs, work)
        n: int = r["matches"]  # type: ignore[assignment]
        sub: list[tuple[float, float]] = r["subject"]  # type: ignore[assignment]
        flo: list[tuple[float, float]] = r["floor"]  # type: ignore[assignment]
        print(f"{args.pairs} pairs; {n} matches of {args.bots} built-in bots; matches per CPU-second, "
              "median [min .. max]")
        print(f"report: {spread([n / c for c, _ in sub])}  ({spread([c for c, _ in sub])} CPU-s, "
              f"{spread([w for _, w in sub])} s wall)")
        print(f"floor (read and replay every record): {spread([n / c for c, _ in flo])}  "
              f"({spread([c for c, _ in flo])} CPU-s)")
        print(f"report CPU / floor CPU: {spread([s[0] / f[0] for s, f in zip(sub, flo)], '.2f')}")
        if baseline is None:
            return
        results_dir: Path = r["results"]  # type: ignore[assignment]
        new, old = pairs(lambda: report(HERE, results_dir, work / "new", args.jobs),
                         lambda: report(baseline, results_dir, work / "old", None), args.pairs)
        print(f"this tree: {spread([c for c, _ in new])} CPU-s, {spread([w for _, w in new])} s wall")
        print(f"baseline {args.baseline_ref or baseline}: {spread([c for c, _ in old])} CPU-s, "
              f"{spread([w for _, w in old])} s wall")
        print(f"this / baseline: CPU {spread([a[0] / b[0] for a, b in zip(new, old)], '.2f')}, "
              f"wall {spread([a[1] / b[1] for a, b in zip(new, old)], '.2f')}")


if __name__ == "__main__":
    main()
