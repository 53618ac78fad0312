"""One CPU per match, or where the scheduler puts it: the same match both ways.  Not a test.

Run: python benchmarks/affinity.py [--pairs 7] [--seats 4]

Two warm bot pools play the same seeded matches (``protocol.py``'s bots,
which only parse every line and give a minimal reply), interleaved, one pair
per seed, the order alternating:

- pinned: this thread and that pool's bots on one CPU (``arena.process.
  affinity``, as a tournament's worker plays a match: ``affinity: true``);
- free: this thread on every usable CPU and the other pool's bots started
  so (``affinity: false``).

Per match: the arena's CPU per decision (``getrusage``, every thread), the
bots' (each reports its own ``process_time``), and the wall time per
decision.  Printed: each figure's median with min and max, both ways, and
the median ratio pinned / free with its min and max.  ``results()`` returns
the ratios for ``benchmarks/all.py`` (informational: no aim).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from figures import Figure  # noqa: E402 (benchmarks/ is on sys.path)
from protocol import BOT, spec_for, stats_cpu, subject  # noqa: E402

from arena.match import BotPool, run_match
from arena.process.confine import affinity


@dataclass
class Sample:
    arena_us: float
    bots_us: float
    wall_us: float


class Side:
    """A warm pool whose bots were started pinned (``cpu``) or not (None)."""

    def __init__(self, bot: Path, tmp: str, seats: int, cpu: int | None) -> None:
        self.bot, self.seats, self.cpu = bot, seats, cpu
        self.logs = f"{tmp}/{'pinned' if cpu is not None else 'free'}"
        self.pool = BotPool()
        warm = spec_for(bot, 0, seats, 2, self.logs)
        with self.pinned():
            run_match(warm, self.pool)       # the bots start here: pinned or not with this thread
        self.cpu_seen = [stats_cpu(warm.stderr_log(i)) for i in range(seats)]

    @contextmanager
    def pinned(self) -> Iterator[None]:
        before = affinity.pin(self.cpu)
        try:
            yield
        finally:
            affinity.unpin(before)

    def sample(self, seed: int) -> Sample:
        with self.pinned():
            n, arena, after, wall = subject(spec_for(self.bot, seed, self.seats, 2, self.logs), self.pool)
        bots = sum(after) - sum(self.cpu_seen)
        self.cpu_seen = after
        return Sample(arena / n * 1e6, bots / n * 1e6, wall / n * 1e6)

    def close(self) -> None:
        self.pool.close()


def measure(pairs: int, seats: int) -> dict[str, list[Sample]]:
    cpu = affinity.plan(1)[0]
    if cpu is None:
        raise SystemExit("affinity.py: this machine gives this process one CPU, or it cannot pin")
    tmp = tempfile.mkdtemp(prefix="bench-affinity-")
    bot = Path(tmp) / "bench_bot.py"
    bot.write_text(BOT)
    sides = {"pinned": Side(bot, tmp, seats, cpu), "free": Side(bot, tmp, seats, None)}
    samples: dict[str, list[Sample]] = {name: [] for name in sides}
    try:
        for seed in range(1, pairs + 1):
            order = ["pinned", "free"] if seed % 2 else ["free", "pinned"]
            for name in order:
                samples[name].append(sides[name].sample(seed))
    finally:
        for side in sides.values():
            side.close()
    return samples


FIELDS = (("arena_us", "arena CPU per decision"), ("bots_us", "bots' CPU per decision"),
          ("wall_us", "wall time per decision"))


def spread(values: list[float], fmt: str) -> str:
    return f"{format(statistics.median(values), fmt)} [{format(min(values), fmt)} .. {format(max(values), fmt)}]"


def ratios(samples: dict[str, list[Sample]], field: str) -> list[float]:
    return [getattr(p, field) / getattr(f, field) for p, f in zip(samples["pinned"], samples["free"])]


def results(pairs: int = 5, seats: int = 4) -> list[Figure]:
    """pinned / free for the arena's CPU, the bots' CPU and the wall time (no aims)."""
    samples = measure(pairs, seats)
    command = f"python benchmarks/affinity.py --pairs {pairs} --seats {seats}"
    return [Figure(f"one CPU per match / no affinity: {label}", tuple(ratios(samples, field)), "x", None,
                   higher_is_better=False, command=command, fmt=".2f") for field, label in FIELDS]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=7, help="pinned/free pairs, at least 5")
    ap.add_argument("--seats", type=int, default=4)
    args = ap.parse_args()
    if args.pairs < 5:
        ap.error("--pairs: at least 5")
    samples = measure(args.pairs, args.seats)
    print(f"{args.seats} seats, {args.pairs} pairs of the same match, pinned (one CPU) and free, interleaved;")
    print("median [min .. max], us:")
    for field, label in FIELDS:
        pinned = [getattr(s, field) for s in samples["pinned"]]
        free = [getattr(s, field) for s in samples["free"]]
        print(f"  {label:24} pinned {spread(pinned, '6.1f')}   free {spread(free, '6.1f')}   "
              f"pinned/free {spread(ratios(samples, field), '.2f')}")


if __name__ == "__main__":
    main()
