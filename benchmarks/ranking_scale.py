"""How the leaderboard's bootstrap scales: CPU and peak memory of ``assess``
on a large tournament, this tree against another commit.

Not a test. Run:
    python benchmarks/ranking_scale.py [--games 8400 20000] [--pairs 5] [--baseline-ref 8a04046]

``assess`` (what ``arena leaderboard``, the end of ``arena run`` and the
report compute) fits the ratings and then 200 bootstrap replicas.  Its work
and memory grow with replicas x distinct outcomes; a hand of a four-seat
table among 20 bots is almost always an outcome of its own.  The games are
made here (20 bots of spread skills, random tables of 4, 30 hands to a
duplicate group), so both trees rate the same games.

Each sample is a child process that builds the games, notes its peak RSS,
runs ``assess`` and reports the CPU seconds it took (``process_time``) and
how far it raised the peak RSS (``ru_maxrss``).  The subject (this tree) and
the baseline (``arena/`` of ``--baseline-ref``, extracted to a temporary
directory) alternate in pairs, the order alternating from pair to pair.
Printed per game count: each one's median with min and max, and the median
ratio subject / baseline with its min and max.  Both trees' ratings are
compared too: equal bits, or the largest difference.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from engine import extract, pairs  # noqa: E402 (benchmarks/ is on sys.path)

HERE = Path(__file__).resolve().parent.parent

CHILD = """
import json, random, resource, sys, time
sys.path.insert(0, sys.argv[1])
from arena.ranking import Game, assess

def games(count, seed=5):
    rng = random.Random(seed)
    players = [f"p{i:02d}" for i in range(20)]
    skill = {p: rng.gauss(0, 1) for p in players}
    out = []
    for g in range(count):
        table = rng.sample(players, 4)
        perf = [skill[p] + rng.gauss(0, 2) for p in table]
        order = sorted(range(4), key=lambda i: -perf[i])
        ranks = [0] * 4
        for r, i in enumerate(order):
            ranks[i] = r + 1
        out.append(Game(tuple(table), tuple(ranks), f"d{g // 30}", f"k{g:07d}"))
    return out, players

data, players = games(int(sys.argv[2]))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.process_time()
a = assess(data, players, seed=1)
cpu = time.process_time() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
rows = [[n, a.rows[n].mu, a.rows[n].low, a.rows[n].high] for n in a.order]
print(json.dumps({"cpu": cpu, "mb": peak / 1024, "rows": rows}))
"""


def child(root: Path, games: int) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(root), str(games)],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def spread(xs: list[float], fmt: str) -> str:
    return f"{format(statistics.median(xs), fmt)} [{format(min(xs), fmt)} .. {format(max(xs), fmt)}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, nargs="+", default=[8400, 20000])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--baseline-ref", default="8a04046",
                        help="the commit to compare with (default: before the bootstrap was batched)")
    args = parser.parse_args()
    if args.pairs < 5:
        parser.error("--pairs: at least 5")
    base = extract(args.baseline_ref)
    for n in args.games:
        runs: dict[str, list[dict]] = {"this": [], "base": []}
        pairs(lambda _i: runs["this"].append(child(HERE, n)) or 0.0,
              lambda _i: runs["base"].append(child(base, n)) or 0.0, args.pairs)
        print(f"{n} games ({args.pairs} pairs):")
        for what, key, fmt in (("CPU-s", "cpu", ".2f"), ("peak MB", "mb", ".0f")):
            this = [r[key] for r in runs["this"]]
            old = [r[key] for r in runs["base"]]
            ratios = [a / b for a, b in zip(this, old)]
            print(f"  {what:8s} this {spread(this, fmt)}   {args.baseline_ref} {spread(old, fmt)}   "
                  f"ratio {spread(ratios, '.2f')}")
        a, b = runs["this"][0]["rows"], runs["base"][0]["rows"]
        same = a == b
        diff = max(abs(x - y) for ra, rb in zip(a, b) for x, y in zip(ra[1:], rb[1:]))
        print(f"  ratings and intervals: {'the same bits' if same else f'differ by up to {diff:.2e}'}")


if __name__ == "__main__":
    main()
