"""Contract finder speed: microseconds per call on random hands.

Not a test. Run: python benchmarks/finder.py [--hands N] [--preset shanghai|pagat|both]

For each preset contract and hand size 11, 15 and 22 (cards drawn from a
shuffled 2-deck shoe), prints median, 99th percentile and maximum time of
``find_contract`` (and the share of hands that can go down), then the same
for ``find_best_contract`` on the hands that can.  Hands are the same for
every contract, seeded, so runs are comparable.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from arena.shanghai.cards import make_shoe
from arena.shanghai.finder import find_best_contract, find_contract
from arena.shanghai.ruleset import Ruleset


def hands(n: int, size: int, seed: int) -> list[list]:
    rng = random.Random(f"bench/{size}/{seed}")
    shoe = make_shoe(2)
    out = []
    for _ in range(n):
        rng.shuffle(shoe)
        out.append(shoe[:size])
    return out


def timed(fn, hand, contract, rules) -> tuple[float, object]:
    t = time.perf_counter()
    result = fn(hand, contract, rules)
    return (time.perf_counter() - t) * 1e6, result


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--hands", type=int, default=2000)
    ap.add_argument("--preset", default="both", choices=["shanghai", "pagat", "both"])
    ap.add_argument("--sizes", default="11,15,22")
    args = ap.parse_args()
    presets = ["shanghai", "pagat"] if args.preset == "both" else [args.preset]
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"{'preset':9} {'contract':9} {'cards':>5} {'down%':>6} {'median':>8} {'p99':>8} {'max':>8}"
          f"   {'best med':>8} {'best max':>9}   (microseconds)")
    overall: list[float] = []
    for preset in presets:
        rules = Ruleset.preset(preset)
        for contract in dict.fromkeys(rules.contracts):
            for size in sizes:
                times: list[float] = []
                best_times: list[float] = []
                down = 0
                for hand in hands(args.hands, size, 1):
                    us, result = timed(find_contract, hand, contract, rules)
                    times.append(us)
                    if result is not None:
                        down += 1
                        if len(best_times) < 200:
                            best_times.append(timed(find_best_contract, hand, contract, rules)[0])
                overall.extend(times)
                bm = f"{statistics.median(best_times):8.0f} {max(best_times):9.0f}" if best_times else f"{'-':>8} {'-':>9}"
                print(f"{preset:9} {contract.text:9} {size:5d} {100 * down / len(times):5.1f}% "
                      f"{statistics.median(times):8.0f} {pct(times, 0.99):8.0f} {max(times):8.0f}   {bm}")
    print(f"all find_contract calls: median {statistics.median(overall):.0f} us, "
          f"max {max(overall):.0f} us over {len(overall)} calls")


if __name__ == "__main__":
    main()
