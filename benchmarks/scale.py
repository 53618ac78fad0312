"""Reading a big tournament: CPU and peak memory of the commands that read
stored results, at 1,000 / 5,000 / 20,000 four-seat matches (issue 34).

Not a test.  Run:
    nice -n 19 python benchmarks/scale.py --cache ~/.cache/arena-scale [--sizes 1000 5000] [--repeats 3]
    nice -n 19 python benchmarks/scale.py --cache DIR --ref 5b1c0de   # another commit's arena, same results
    python benchmarks/scale.py --results DIR/m20000/results --only leaderboard report   # as they stand

The results: a round robin of five built-in players at tables of 4 (5
tables, each in its 4 rotations: 20 matches a deal), ``size / 20`` deals,
played by ``arena run --jobs 2`` into ``--cache``/``mSIZE``, once: a later
run finds them there (a results directory whose match count is not its
size is played to the end, as ``arena run`` resumes).  The kinds (greedy,
random, passive) are shuffled over the names, so the order the leaderboard
finds is not the order the bots are listed in.

Each command runs in a child process of a small wrapper process, which
reports the CPU seconds of everything it waited for (``RUSAGE_CHILDREN``:
the command and its worker processes) and their peak RSS (``ru_maxrss``:
the largest of them, not their sum); a wrapper per sample, as
``ru_maxrss`` of children is the largest since the wrapper began.  Timed:
``arena leaderboard``, ``arena report --no-replays``, ``arena report`` (a
replay per match), ``arena verify --jobs 1`` and ``--jobs 2``, and a resume
(``arena run`` of a copy of the results with its last deal's 20 matches
taken out, as a run killed then leaves it: it plays them and prints the
tables).  The commands are interleaved, each sample in turn (verify on 1
and on 2 cores in alternating order, as the 1-core run is the 2-core run's
floor), ``--repeats`` times; printed: each one's median with min and max,
and the issue's aims where it has one (20,000 matches: leaderboard <= 10
CPU-s and <= 200 MB, ``report --no-replays`` <= 60 CPU-s and <= 400 MB,
verify on 2 cores at least 1.8x as fast as on 1, by wall time).

``--ref REF`` times ``arena/`` of that commit instead of this tree's, and
its ``verify`` without ``--jobs`` (which it may not have).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine import extract  # noqa: E402 (benchmarks/ is on sys.path)

HERE = Path(__file__).resolve().parent.parent
KINDS = ("greedy", "random", "passive")
BOTS = 5
PER_DEAL = 20           # C(5, 4) tables x 4 rotations
SEED = 3403403403

# The wrapper: the command as its only child, then what the kernel counted of it.
WRAPPER = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).returncode
wall = time.perf_counter() - start
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"cpu": u.ru_utime + u.ru_stime, "rss_mb": u.ru_maxrss / 1024, "wall": wall, "code": code}))
"""


@dataclass(frozen=True)
class Sample:
    cpu: float
    rss_mb: float
    wall: float
    code: int
    load: float = 0.0       # the machine's 1-minute load average as the sample began

    @property
    def cores(self) -> float:
        """The CPUs it had, on average: near 2 for verify on 2 cores when the
        machine lets it, whatever its wall time."""
        return self.cpu / self.wall if self.wall else 0.0


def tournament_file(where: Path, size: int, out: Path) -> Path:
    kinds = [KINDS[i % len(KINDS)] for i in range(BOTS)]
    random.Random(3).shuffle(kinds)
    lines = ["name: scale", "bots:"]
    lines += [f"  - {{name: b{i}, builtin: {kind}}}" for i, kind in enumerate(kinds)]
    lines += ["players: 4", f"deals: {size // PER_DEAL}", f"seed: {SEED}", f"out: {out}"]
    path = where / "scale.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def stored(results: Path) -> int:
    db = results / "results.sqlite"
    if not db.exists():
        return 0
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as c:
        return int(c.execute("SELECT count(*) FROM matches").fetchone()[0])


def made(cache: Path, size: int) -> Path:
    """The results of ``size`` matches, played now unless ``cache`` has them."""
    where = cache / f"m{size}"
    results = where / "results"
    if stored(results) != size:
        where.mkdir(parents=True, exist_ok=True)
        spec = tournament_file(where, size, results)
        print(f"playing {size} matches into {results} (arena run --jobs 2) ...", flush=True)
        code = subprocess.run([sys.executable, "-m", "arena", "run", str(spec), "--jobs", "2", "-q"],
                              stdout=subprocess.DEVNULL, cwd="/", env={**os.environ, "PYTHONPATH": str(HERE)}).returncode
        if code:            # stopped (a SIGTERM, say): arena run said why; what it stored stays for the next run
            sys.exit(f"{results}: arena run exited {code} with {stored(results)} of {size} matches stored; "
                     "run this again to resume")
    if stored(results) != size:
        sys.exit(f"{results}: {stored(results)} matches stored, not {size}")
    return results


def sample(argv: list[str], tree: Path) -> Sample:
    """One run of ``python -m arena ARGV`` from ``tree``, in a wrapper of its own.
    Run from /: ``-m`` puts the working directory first on the path."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    load = os.getloadavg()[0]
    out = subprocess.run([sys.executable, "-c", WRAPPER, sys.executable, "-m", "arena", *argv],
                         capture_output=True, text=True, env=env, cwd="/", check=True)
    return Sample(**json.loads(out.stdout), load=load)


def resume(results: Path, tree: Path) -> Sample:
    """``arena run`` of a copy of ``results`` without its last deal's matches."""
    with tempfile.TemporaryDirectory(prefix="scale-resume-") as tmp:
        copy = Path(tmp) / "results"
        shutil.copytree(results, copy)
        with sqlite3.connect(copy / "results.sqlite") as c:
            c.execute("PRAGMA foreign_keys = ON")
            c.execute("DELETE FROM matches WHERE deal = (SELECT max(deal) FROM matches)")
        spec = tournament_file(Path(tmp), stored(results), copy)
        return sample(["run", str(spec), "--jobs", "1", "-q"], tree)


KINDS_TIMED = ("leaderboard", "report", "replays", "verify", "resume")


def commands(results: Path, tree: Path, out: Path, replays: bool) -> dict[str, Callable[[], Sample]]:
    r = str(results)
    timed: dict[str, Callable[[], Sample]] = {
        "leaderboard": lambda: sample(["leaderboard", r, "-q"], tree),
        "report --no-replays": lambda: sample(["report", r, "--no-replays", "--out", str(out / "a"), "-q"], tree),
    }
    if replays:
        timed["report (replays)"] = lambda: sample(["report", r, "--out", str(out / "b"), "-q"], tree)
    if tree == HERE:
        timed["verify --jobs 1"] = lambda: sample(["verify", r, "--jobs", "1"], tree)
        timed["verify --jobs 2"] = lambda: sample(["verify", r, "--jobs", "2"], tree)
    else:                   # another commit's verify may have no --jobs
        timed["verify"] = lambda: sample(["verify", r], tree)
    timed["resume"] = lambda: resume(results, tree)
    return timed


def _kind(name: str) -> str:
    return "replays" if name == "report (replays)" else name.split()[0]


def measure(results: Path, tree: Path, repeats: int, replays: bool,
            only: tuple[str, ...] = KINDS_TIMED) -> dict[str, list[Sample]]:
    """Every command (of the kinds ``only``) ``repeats`` times, interleaved; verify's two in alternating order."""
    got: dict[str, list[Sample]] = {}
    with tempfile.TemporaryDirectory(prefix="scale-report-") as tmp:
        timed = {n: f for n, f in commands(results, tree, Path(tmp), replays).items() if _kind(n) in only}
        for i in range(repeats):
            names = list(timed)
            if i % 2 and "verify --jobs 1" in names:
                a, b = names.index("verify --jobs 1"), names.index("verify --jobs 2")
                names[a], names[b] = names[b], names[a]
            for name in names:
                got.setdefault(name, []).append(timed[name]())
    return got


def spread(xs: list[float], fmt: str = ",.1f") -> str:
    return f"{format(statistics.median(xs), fmt)} [{format(min(xs), fmt)} .. {format(max(xs), fmt)}]"


# The aims at 20,000 matches: (CPU-s, MB) ceilings per command.
AIMS = {"leaderboard": (10.0, 200.0), "report --no-replays": (60.0, 400.0)}


def show(size: int, got: dict[str, list[Sample]]) -> None:
    loads = [s.load for samples in got.values() for s in samples]
    print(f"\n{size:,} matches: CPU-s, peak RSS MB, wall s; median [min .. max]; load average "
          f"{spread(loads)} (2 CPUs)")
    for name, samples in got.items():
        failed = [s.code for s in samples if s.code not in (0, 1) or (s.code == 1 and "verify" not in name)]
        aim = AIMS.get(name)
        against = f"   aim at 20,000: <= {aim[0]:g} CPU-s, <= {aim[1]:g} MB" if aim else ""
        status = f"   FAILED (exit {failed[0]})" if failed else ""
        print(f"  {name:22} {spread([s.cpu for s in samples]):>24} CPU-s  "
              f"{spread([s.rss_mb for s in samples], ',.0f'):>18} MB  "
              f"{spread([s.wall for s in samples]):>22} s{against}{status}")
    one, two = got.get("verify --jobs 1"), got.get("verify --jobs 2")
    if one and two:
        print(f"  verify wall, 1 core / 2 cores: {spread([a.wall / b.wall for a, b in zip(one, two)], '.2f')}"
              f"   aim: >= 1.8")
        # A loaded machine (and Linux's autogroup: a session's processes share
        # one CPU share) may give two workers no more CPU than one: then the
        # wall ratio says nothing of the code, and the CPUs each run had does.
        print(f"  verify CPUs had (CPU-s / wall), 1 core: {spread([a.cores for a in one], '.2f')}, "
              f"2 cores: {spread([b.cores for b in two], '.2f')}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", type=Path, help="where the results are made once and kept")
    ap.add_argument("--results", type=Path, nargs="+", default=[],
                    help="time these results directories as they stand (a cache still being made, say), "
                         "instead of --sizes; no resume, which would play the rest")
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000], help="stored matches (multiples of 20)")
    ap.add_argument("--repeats", type=int, default=3, help="samples of each command")
    ap.add_argument("--no-replays", dest="replays", action="store_false", help="skip the report with replays")
    ap.add_argument("--make-only", action="store_true", help="make the cached results, time nothing")
    ap.add_argument("--ref", help="time arena/ of this git commit instead of this tree's")
    ap.add_argument("--only", nargs="+", choices=KINDS_TIMED, default=KINDS_TIMED, help="time these commands only")
    args = ap.parse_args()
    if any(s <= 0 or s % PER_DEAL for s in args.sizes):
        ap.error(f"--sizes must be positive multiples of {PER_DEAL}")
    if args.cache is None and not args.results:
        ap.error("give --cache (made there once) or --results")
    tree = extract(args.ref) if args.ref else HERE
    for results in args.results:
        show(stored(results), measure(results, tree, args.repeats, args.replays,
                                      tuple(k for k in args.only if k != "resume")))
    if args.results:
        return
    for size in args.sizes:
        results = made(args.cache, size)
        if not args.make_only:
            show(size, measure(results, tree, args.repeats, args.replays, tuple(args.only)))


if __name__ == "__main__":
    main()
