"""Engine speed: decisions per CPU-second of in-process matches, against a floor.

Not a test. Run:
    python benchmarks/engine.py [--pairs 5] [--matches 10] [--preset shanghai]
    python benchmarks/engine.py --baseline-ref 6a15c2c     # also: this tree vs that commit
    python benchmarks/engine.py --baseline /tmp/arena-before

Subjects: random players at 4 and 8 seats, greedy players at 4 seats, each
playing seeded matches (game set-up included) through ``play_match``; the
floor and subject of a pair play the same deals, and each pair new ones.

Floor: the same matches with passive players, the loop that only ever picks
the first legal option (draw from the stock, never buy, discard the first
card).  It is the engine's own cost per decision with the players' thinking
taken out, measured in the same run.  Floor and subject are interleaved in
pairs (the order alternating from pair to pair), so a machine that gets busier
or quieter during the run moves both; the script prints each one's median
decisions per CPU-second (``time.process_time``) with min and max, and the
median ratio subject / floor with its min and max.

``--baseline DIR`` adds a second comparison: the same subjects played by the
engine and players of another checkout (a directory holding ``arena/``, e.g.
``git worktree add /tmp/arena-before <commit>``), against this tree's;
``--baseline-ref REF`` extracts ``arena/`` of a git commit for that (issue 9's
starting point is 6a15c2c).  Both run in child processes started with
``python -S`` (``arena.shanghai`` and ``arena.players`` import only the
standard library), interleaved in pairs, each child timing only its own
matches.  The ratio is this tree / baseline.

``results()`` returns the figures with their aims, for ``benchmarks/all.py``.
"""

from __future__ import annotations

import argparse
import atexit
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from figures import Figure  # noqa: E402 (benchmarks/ is on sys.path)

HERE = Path(__file__).resolve().parent.parent
SUBJECTS = (("random", 4), ("random", 8), ("greedy", 4))
AIMS = {("random", 4): 40_000, ("random", 8): 30_000, ("greedy", 4): 20_000}
WARM_UP = 20            # matches played before any sample

# Runs in a child (and, the same code, in this process): plays the matches and
# returns decisions and CPU seconds.
CHILD = """
import json, random, sys, time
if __name__ == "__main__":
    sys.path.insert(0, sys.argv[1])  # the tree to measure, ahead of any installed arena
from arena.players import play_match
from arena.players.registry import make_player
from arena.shanghai.game import Game
from arena.shanghai.ruleset import Ruleset

def measure(kind, seats, matches, preset, first_seed=0):
    rules = Ruleset.preset(preset)
    decisions = 0
    start = time.process_time()
    for seed in range(first_seed, first_seed + matches):
        game = Game.seeded(rules, seats, seed)
        play_match(game, [make_player(kind, random.Random(f"{seed}/{i}")) for i in range(seats)])
        decisions += len(game.actions)
    return decisions, time.process_time() - start

if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], int(sys.argv[6]))))
"""

Measure = Callable[[str, int, int, str, int], "tuple[int, float]"]


def _in_process() -> Measure:
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))  # this tree's arena, as the children get it
    scope: dict[str, object] = {"__name__": "engine_bench_child"}
    exec(compile(CHILD, "engine_bench_child", "exec"), scope)  # noqa: S102 - our own code, above
    return scope["measure"]  # type: ignore[return-value]


def rate_here(measure: Measure, kind: str, seats: int, matches: int, preset: str, first_seed: int) -> float:
    decisions, cpu = measure(kind, seats, matches, preset, first_seed)
    return decisions / cpu


def rate_child(root: Path, kind: str, seats: int, matches: int, preset: str, first_seed: int) -> float:
    out = subprocess.run(
        [sys.executable, "-S", "-c", CHILD, str(root), kind, str(seats), str(matches), preset, str(first_seed)],
        capture_output=True, text=True, check=True, env={**os.environ, "PYTHONHASHSEED": "0"},
    ).stdout
    decisions, cpu = json.loads(out)
    return decisions / cpu


def pairs(first: Callable[[int], float], second: Callable[[int], float], n: int) -> tuple[list[float], list[float]]:
    """n interleaved samples of two measurements, the order alternating; both
    of pair i get i.  Each pair plays its own deals, so no sample replays one
    an earlier sample left warm in the players' and the engine's caches."""
    a: list[float] = []
    b: list[float] = []
    for i in range(n):
        if i % 2 == 0:
            a.append(first(i))
            b.append(second(i))
        else:
            b.append(second(i))
            a.append(first(i))
    return a, b


def spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):9,.0f} [{min(xs):,.0f} .. {max(xs):,.0f}]"


def ratio(sub: list[float], base: list[float]) -> str:
    rs = [s / b for s, b in zip(sub, base)]
    return f"{statistics.median(rs):5.2f} [{min(rs):.2f} .. {max(rs):.2f}]"


def measure_subjects(pairs_n: int, matches: int, preset: str) -> list[dict[str, object]]:
    """Each subject interleaved with the passive floor, in this process."""
    measure = _in_process()
    # Warm first, on deals no sample plays: a tournament's worker plays match
    # after match, with the finder's and the interpreter's caches warm; a
    # cold process ran these matches a quarter slower.
    measure("greedy", 4, WARM_UP, preset, 10_000)
    measure("random", 8, WARM_UP, preset, 10_000)
    rows: list[dict[str, object]] = []
    for kind, seats in SUBJECTS:
        sub, flo = pairs(lambda i: rate_here(measure, kind, seats, matches, preset, i * matches),
                         lambda i: rate_here(measure, "passive", seats, matches, preset, i * matches), pairs_n)
        aim = AIMS[(kind, seats)]
        rows.append({"figure": f"{kind} players, {seats} seats: decisions per CPU-second",
                     "target": f">= {aim:,}", "measured": statistics.median(sub),
                     "met": statistics.median(sub) >= aim, "samples": sub, "floor": flo,
                     "kind": kind, "seats": seats})
    return rows


def results(pairs_n: int = 5, matches: int = 10, preset: str = "shanghai") -> list[Figure]:
    """One figure per subject: decisions per CPU-second, every pair's sample, with its aim;
    then, for information, each one's ratio to the passive floor of its pair: the
    engine's speed on this host cancels out of it, the absolute rates follow it."""
    command = f"python benchmarks/engine.py --pairs {pairs_n} --matches {matches}"
    rows = measure_subjects(pairs_n, matches, preset)
    return [Figure(f"decisions per CPU-second, {r['kind']} players x{r['seats']} (in-process)",
                   tuple(r["samples"]), "", float(AIMS[(r["kind"], r["seats"])]),  # type: ignore[arg-type,index]
                   higher_is_better=True, command=command, fmt=",.0f")
            for r in rows] + [
        Figure(f"{r['kind']} players x{r['seats']} / passive players, the same deals (the host's speed cancels)",
               tuple(s / f for s, f in zip(r["samples"], r["floor"])),  # type: ignore[call-overload]
               "x", None, higher_is_better=True, command=command, fmt=".3f")
        for r in rows]


def extract(ref: str) -> Path:
    """arena/ of git commit ``ref`` in a temporary directory, removed at exit."""
    out = Path(tempfile.mkdtemp(prefix="arena-baseline-"))
    atexit.register(shutil.rmtree, out, ignore_errors=True)
    archive = subprocess.run(["git", "-C", str(HERE), "archive", ref, "arena"],
                             capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(out)  # noqa: S202 - this repository's own files
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=5, help="interleaved floor/subject pairs (at least 5)")
    ap.add_argument("--matches", type=int, default=10, help="seeded matches per sample")
    ap.add_argument("--preset", default="shanghai")
    ap.add_argument("--baseline", type=Path, help="another checkout to compare this tree with")
    ap.add_argument("--baseline-ref", help="a git commit to compare this tree with (e.g. 6a15c2c)")
    args = ap.parse_args()
    if args.pairs < 5:
        ap.error("--pairs must be at least 5")
    baseline = extract(args.baseline_ref) if args.baseline_ref else args.baseline
    if baseline is not None and not (baseline / "arena" / "shanghai").is_dir():
        ap.error(f"baseline {baseline}: no arena/shanghai/ there")
    print(f"{args.pairs} pairs x {args.matches} matches ({args.preset}); decisions per CPU-second, "
          "median [min .. max]")
    for r in measure_subjects(args.pairs, args.matches, args.preset):
        sub, flo = r["samples"], r["floor"]
        print(f"{r['kind']:6s} x{r['seats']}: {spread(sub)}   floor (passive) {spread(flo)}   "  # type: ignore[arg-type]
              f"subject/floor {ratio(sub, flo)}   aim {r['target']}: "  # type: ignore[arg-type]
              f"{'met' if r['met'] else 'NOT met'}")
    if baseline is None:
        return
    print(f"this tree ({HERE}) against baseline {args.baseline_ref or baseline}, each in its own child process:")
    for kind, seats in SUBJECTS:
        new, old = pairs(lambda i: rate_child(HERE, kind, seats, args.matches, args.preset, i * args.matches),
                         lambda i: rate_child(baseline, kind, seats, args.matches, args.preset, i * args.matches),
                         args.pairs)
        print(f"{kind:6s} x{seats}: this {spread(new)}   baseline {spread(old)}   this/baseline {ratio(new, old)}")


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"({time.perf_counter() - t0:.0f} s wall)")
