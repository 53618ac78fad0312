"""Cost of the order-free TrueSkill: one fit, and the bootstrap of ``assess``.

Not a test. Run: python benchmarks/ranking_speed.py [--games 240 1500 6000] [--repeat 3]

Games come from TrueSkill's own model (six players 3 mu apart, every table
of 4 in every rotation, rotations of a deal forming a duplicate group), so
they cost nothing to make.  Prints CPU seconds (median, min and max over the
repeats) of ``fit`` and of ``assess`` (200 replicas), the sweeps of the fit,
and checks that a shuffled copy of the games gives the same ratings bit for
bit.
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import time

from arena.ranking import Game, assess, fit


def games(count: int, seed: int = 1) -> list[Game]:
    rng = random.Random(seed)
    skill = {f"p{i}": 31 - 3 * i for i in range(6)}
    tables = list(itertools.combinations(sorted(skill), 4))
    out: list[Game] = []
    deal = 0
    while len(out) < count:
        for t, table in enumerate(tables):
            for rot in range(4):
                seats = table[rot:] + table[:rot]
                perf = {p: skill[p] + rng.gauss(0, 25 / 6) for p in seats}
                ranked = sorted(seats, key=lambda p: -perf[p])
                out.append(Game(seats, tuple(ranked.index(p) for p in seats), f"t{t}-d{deal}",
                                f"t{t:03d}-r{rot}-d{deal:04d}"))
        deal += 1
    return out[:count]


def cpu(fn) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, nargs="+", default=[240, 1500, 6000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for n in args.games:
        data = games(n)
        shuffled = data[:]
        random.Random(0).shuffle(shuffled)
        same = fit(data).ratings == fit(shuffled).ratings
        fits = [cpu(lambda: fit(data)) for _ in range(args.repeat)]
        boots = [cpu(lambda: assess(data)) for _ in range(args.repeat)]
        print(f"{n:6d} games: fit {statistics.median(fits):.3f} CPU-s ({min(fits):.3f}-{max(fits):.3f}), "
              f"{fit(data).sweeps} sweeps; assess {statistics.median(boots):.2f} CPU-s "
              f"({min(boots):.2f}-{max(boots):.2f}); same after shuffling: {same}")


if __name__ == "__main__":
    main()
