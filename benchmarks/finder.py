"""Contract finder speed: calls per CPU-second on seeded hands, against a floor.

Not a test. Run:
    python benchmarks/finder.py [--pairs 5] [--hands 100] [--preset shanghai|pagat|both]
    python benchmarks/finder.py --baseline-ref 6a15c2c   # also: this tree vs that commit
    python benchmarks/finder.py --table                  # per contract and hand size, CPU us per call

Hands: for each preset contract and hand size 11, 15 and 22, ``--hands``
hands drawn from a shuffled 2-deck shoe (seeded, the same in every run).

Subjects: ``find_contract`` on every hand; ``find_best_contract`` on the
hands that can go down.  Floor: building the hands' count vectors (the
first step of every finder call, ``_State``), so the ratio says how many
count-vector builds one search costs.  Floor and subject are interleaved in
pairs, the order alternating; the script prints calls per CPU-second
(``time.process_time``), median [min .. max], and the median ratio
subject / floor with its min and max.

``--baseline-ref REF`` / ``--baseline DIR`` also runs the subjects with the
finder of another version, each sample in a child process (``python -S``:
``arena.shanghai`` needs only the standard library), interleaved with this
tree's, and prints the ratio this tree / baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from engine import HERE, extract, pairs, ratio, spread  # benchmarks/engine.py

# Runs in a child (and, the same code, in this process).
CHILD = """
import json, random, sys, time
if __name__ == "__main__":
    sys.path.insert(0, sys.argv[1])  # the tree to measure, ahead of any installed arena
from arena.shanghai.cards import make_shoe
from arena.shanghai.finder import find_best_contract, find_contract
from arena.shanghai.finder.counts import _State
from arena.shanghai.ruleset import Ruleset

def cases(presets, sizes, n):
    out = []
    for preset in presets:
        rules = Ruleset.preset(preset)
        for contract in dict.fromkeys(rules.contracts):
            for size in sizes:
                rng = random.Random(f"bench/{size}/1")
                shoe = make_shoe(2)
                for _ in range(n):
                    rng.shuffle(shoe)
                    out.append((shoe[:size], contract, rules))
    return out

def measure(what, presets, sizes, n):
    todo = cases(presets, sizes, n)
    if what == "best":
        todo = [c for c in todo if find_contract(*c) is not None]
    fn = {"find": find_contract, "best": find_best_contract, "floor": lambda h, c, r: _State(h)}[what]
    start = time.process_time()
    for hand, contract, rules in todo:
        fn(hand, contract, rules)
    return len(todo), time.process_time() - start

if __name__ == "__main__":
    what, presets, sizes, n = sys.argv[2], sys.argv[3].split(","), [int(s) for s in sys.argv[4].split(",")], int(sys.argv[5])
    print(json.dumps(measure(what, presets, sizes, n)))
"""


def _in_process() -> dict[str, object]:
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    scope: dict[str, object] = {"__name__": "finder_bench_child"}
    exec(compile(CHILD, "finder_bench_child", "exec"), scope)  # noqa: S102 - our own code, above
    return scope


def rate_here(scope: dict[str, object], what: str, presets: list[str], sizes: list[int], n: int) -> float:
    calls, cpu = scope["measure"](what, presets, sizes, n)  # type: ignore[operator]
    return calls / cpu


def rate_child(root: Path, what: str, presets: list[str], sizes: list[int], n: int) -> float:
    out = subprocess.run(
        [sys.executable, "-S", "-c", CHILD, str(root), what, ",".join(presets), ",".join(map(str, sizes)), str(n)],
        capture_output=True, text=True, check=True, env={**os.environ, "PYTHONHASHSEED": "0"},
    ).stdout
    calls, cpu = json.loads(out)
    return calls / cpu


def table(scope: dict[str, object], presets: list[str], sizes: list[int], n: int) -> None:
    """CPU microseconds per call, per contract and hand size (median and max)."""
    print(f"{'preset':9} {'contract':9} {'cards':>5} {'down%':>6} {'median':>8} {'max':>8}   (CPU microseconds)")
    find = scope["find_contract"]
    for preset in presets:
        for size in sizes:
            groups: dict[str, list[tuple[float, bool]]] = {}
            for hand, contract, rules in scope["cases"]([preset], [size], n):  # type: ignore[operator]
                t = time.process_time_ns()
                found = find(hand, contract, rules) is not None  # type: ignore[operator]
                groups.setdefault(contract.text, []).append(((time.process_time_ns() - t) / 1000, found))
            for text, rows in groups.items():
                us = [u for u, _ in rows]
                down = 100 * sum(f for _, f in rows) / len(rows)
                print(f"{preset:9} {text:9} {size:5d} {down:5.1f}% {statistics.median(us):8.0f} {max(us):8.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--hands", type=int, default=100, help="hands per contract and size")
    ap.add_argument("--preset", default="both", choices=["shanghai", "pagat", "both"])
    ap.add_argument("--sizes", default="11,15,22")
    ap.add_argument("--table", action="store_true", help="also print CPU time per call by contract and size")
    ap.add_argument("--baseline", type=Path, help="another checkout to compare this tree with")
    ap.add_argument("--baseline-ref", help="a git commit to compare this tree with (e.g. 6a15c2c)")
    args = ap.parse_args()
    if args.pairs < 5:
        ap.error("--pairs must be at least 5")
    presets = ["shanghai", "pagat"] if args.preset == "both" else [args.preset]
    sizes = [int(s) for s in args.sizes.split(",")]
    baseline = extract(args.baseline_ref) if args.baseline_ref else args.baseline
    scope = _in_process()
    print(f"{args.pairs} pairs, {args.hands} hands per contract and size; calls per CPU-second, median [min .. max]")
    for what in ("find", "best"):
        sub, flo = pairs(lambda _i: rate_here(scope, what, presets, sizes, args.hands),
                         lambda _i: rate_here(scope, "floor", presets, sizes, args.hands), args.pairs)
        name = "find_contract" if what == "find" else "find_best_contract"
        print(f"{name:18s} {spread(sub)}   floor (count vectors) {spread(flo)}   subject/floor {ratio(sub, flo)}")
    if baseline is not None:
        print(f"this tree against baseline {args.baseline_ref or baseline}, each sample in a child process:")
        for what in ("find", "best"):
            new, old = pairs(lambda _i: rate_child(HERE, what, presets, sizes, args.hands),
                             lambda _i: rate_child(baseline, what, presets, sizes, args.hands), args.pairs)
            name = "find_contract" if what == "find" else "find_best_contract"
            print(f"{name:18s} this {spread(new)}   baseline {spread(old)}   this/baseline {ratio(new, old)}")
    if args.table:
        table(scope, presets, sizes, args.hands)


if __name__ == "__main__":
    main()
