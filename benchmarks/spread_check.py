"""Does the bootstrap's spread match the spread between tournaments?  (issue 29, point 3)

Not a test.  Run: python benchmarks/spread_check.py [--bots 6] [--seeds 40] [--rounds 1 2 4 6]
                 [--shuffle] [--rating hands|matches] [--cache DIR]

Coverage against a held-out reference (benchmarks/ranking.py) mixes three
things: the interval's width, any bias, and the noise of the reference
itself.  This separates them.  For each round-robin prefix (whole deal rounds
of the graded field, tables of 4, as ranking.py plays them; ``--cache``
shares its matches), every tournament seed is assessed as the leaderboard
does, and for each bot:

* ratio: the standard deviation of its fitted mu over the seeds (what really
  varies from tournament to tournament) over the mean of the bootstrap's own
  standard deviation, raw (the replicas' percentile half-width / 1.96, before
  the small-sample widening) and as shown (with it).  1 is right; above 1
  the intervals are too narrow;
* bias: the mean over seeds of (mu - mean mu of all seeds) is 0 by
  construction, so bias is read from ranking.py's coverage instead.

The ratio's own standard error over n seeds is about 1/sqrt(2(n - 1)) per
bot (11 % at 40 seeds); pooled over the bots (root mean square) it is
roughly that over sqrt(bots - 1).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rankbench.graded import field_for  # noqa: E402
from rankbench.methods import hand_games, match_games  # noqa: E402
from rankbench.simulate import Simulator  # noqa: E402

from arena.ranking import assess  # noqa: E402
from arena.ranking.confidence import critical  # noqa: E402


def ratios(mus: dict[str, list[float]], sds: dict[str, list[float]]) -> list[float]:
    return [statistics.stdev(mus[b]) / statistics.fmean(sds[b]) for b in mus]


def rms(xs: list[float]) -> float:
    return math.sqrt(statistics.fmean(x * x for x in xs))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bots", type=int, default=6)
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--rounds", type=int, nargs="+", default=[1, 2, 4, 6])
    ap.add_argument("--shuffle", action="store_true", help="bots listed in a shuffled order (ranking.py --shuffle)")
    ap.add_argument("--rating", choices=["hands", "matches"], default="hands")
    ap.add_argument("--cache", type=Path, default=None, help="ranking.py's match cache")
    args = ap.parse_args(argv)
    field = field_for(args.bots, shuffled=args.shuffle)
    games = hand_games if args.rating == "hands" else match_games
    seeds = range(1, args.seeds + 1)
    pool = {s: Simulator(field, s, args.cache).round_robin(max(args.rounds)) for s in seeds}
    print(f"{args.bots} bots{' listed shuffled' if args.shuffle else ''}, {args.seeds} seeds, by {args.rating}: "
          "s.d. of mu over seeds / mean bootstrap s.d.")
    print("| matches | groups | raw, per bot | raw (r.m.s.) | as shown (r.m.s.) |")
    print("|---|---|---|---|---|")
    for rounds in args.rounds:
        mus: dict[str, list[float]] = {b: [] for b in field.names}
        raw: dict[str, list[float]] = {b: [] for b in field.names}
        shown: dict[str, list[float]] = {b: [] for b in field.names}
        groups = matches = 0
        for s in seeds:
            played = [r for r in pool[s] if r.deal < rounds]
            a = assess(games(played), field.names, seed=s)
            widen = critical(0.95, a.groups) / critical(0.95, None)
            groups, matches = a.groups or 0, len(played)
            for b in field.names:
                row = a.rows[b]
                mus[b].append(row.mu)
                shown[b].append((row.high - row.low) / (2 * critical(0.95, None)))
                raw[b].append(shown[b][-1] / widen)
        per_bot = " ".join(f"{r:.2f}" for r in ratios(mus, raw))
        print(f"| {matches} | {groups} | {per_bot} | {rms(ratios(mus, raw)):.2f} | {rms(ratios(mus, shown)):.2f} |",
              flush=True)
    print(f"\n(python benchmarks/spread_check.py {' '.join(sys.argv[1:])})")


if __name__ == "__main__":
    main()
