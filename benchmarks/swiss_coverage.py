"""Swiss intervals, judged against references that leave the seed out.

Not a test. Run: python benchmarks/swiss_coverage.py [--bots 12] [--seeds 4] [--rr-seeds 6] [--cache DIR]

A smaller cousin of ``ranking.py`` for one question: do the 95 % intervals
of a Swiss run (arena's own rounds and stopping rule, rated by hands) hold
the bot's mu?  Only the TrueSkill-by-hands and mean-place methods are judged
(the costly part is assessing the run before each round). Two references,
each leaving the judged seed's own matches out:

* round robin: batch TrueSkill on the pooled deal rounds of every
  round-robin seed in ``--rr-seeds`` (``--rr-rounds`` deal rounds each) but the judged one (the design that
  treats every bot alike, so what a user reads as "the" rating);
* own: pooled on the Swiss matches of every other Swiss seed.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rankbench import methods  # noqa: E402
from rankbench.evaluate import SeedResult, run_seed, summarise, summarise_stops  # noqa: E402
from rankbench.formats import default_budget, swiss  # noqa: E402
from rankbench.graded import Field, field_for  # noqa: E402
from rankbench.methods import METHODS, hand_games  # noqa: E402
from rankbench.reference import Pool, pooled_games  # noqa: E402
from rankbench.simulate import MatchRecord, Simulator  # noqa: E402

from arena.ranking import fit  # noqa: E402

KEEP = ("trueskill-hand", "mean-place")


def leave_one_out(field: Field, pool: Pool, seeds: Sequence[int]) -> dict[int, dict[str, float]]:
    """For each of ``seeds``: mu per bot fitted on every pooled seed but that one."""
    out = {}
    for s in seeds:
        others = [o for o in sorted(pool) if o != s]
        ratings = fit(pooled_games(pool, others, hand_games), field.names).ratings
        out[s] = {b: ratings[b].mu for b in field.names}
    return out


def widths(results: Sequence[SeedResult], fmt: str) -> dict[int, float]:
    by: dict[int, list[float]] = {}
    for r in results:
        for p in r.points:
            if p.format == fmt and "trueskill-hand" in p.intervals:
                by.setdefault(p.matches, []).extend(hi - lo for lo, hi in p.intervals["trueskill-hand"].values())
    return {m: sum(v) / len(v) for m, v in by.items()}


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bots", type=int, default=12)
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--rr-seeds", type=int, default=6, help="round-robin seeds (one deal round each) for the reference")
    ap.add_argument("--rr-rounds", type=int, default=1, help="deal rounds of each round-robin seed (default 1)")
    ap.add_argument("--every", type=int, default=240, help="checkpoint step in matches")
    ap.add_argument("--max", type=int, default=None, help="Swiss budget (default: arena's)")
    ap.add_argument("--replicas", type=int, default=200)
    ap.add_argument("--cache", type=Path, required=True)
    ap.add_argument("--keep-judged", action="store_true", help="as in ranking.py: cache the judgements too")
    ap.add_argument("--shuffle", action="store_true",
                    help="list each tournament's bots in a shuffled order, not their true one (issue 29)")
    args = ap.parse_args(argv)
    for name in list(METHODS):
        if name not in KEEP:
            del METHODS[name]
    methods.set_replica_tolerance(1e-3)
    field = field_for(args.bots, "strength", args.shuffle)
    budget = args.max or default_budget(Simulator(field, 0, None), "swiss")
    fmt = swiss(args.every, budget, args.replicas)
    seeds = list(range(1, args.seeds + 1))
    start = time.process_time()
    results = []
    for s in seeds:
        results.append(run_seed(field, s, [fmt], args.cache, args.replicas, args.keep_judged))
        print(f"seed {s} done, {time.process_time() - start:.0f} CPU-s", file=sys.stderr, flush=True)
    rr: dict[int, Sequence[MatchRecord]] = {s: Simulator(field, s, args.cache).round_robin(args.rr_rounds)
                                            for s in range(1, args.rr_seeds + 1)}
    refs: Mapping[str, Mapping[int, Mapping[str, float]]] = {
        "round robin": leave_one_out(field, rr, seeds),
        "own": leave_one_out(field, {r.seed: r.final["swiss"] for r in results}, seeds),
    }
    print(f"{args.bots} bots, seeds {seeds}, budget {budget}, {args.replicas} replicas, "
          f"round-robin reference from {args.rr_rounds} deal round(s) of seeds 1-{args.rr_seeds} "
          f"({sum(map(len, rr.values()))} matches)")
    stop = summarise_stops(results, "swiss")
    assert stop is not None
    print(f"settled in {100 * stop.settled:.0f} % of seeds; stops at {stop.matches}; "
          f"order then exactly right in {100 * stop.right:.0f} %")
    for method in KEEP:
        s = summarise(results, "swiss", method, None)
        print(f"{method}: right by matches: " + ", ".join(f"{m}: {100 * f:.0f}" for m, f in zip(s.matches, s.right))
              + f"; 95 % at {s.until}, stays from {s.until_stays}")
    s = summarise(results, "swiss", "trueskill-hand", None)
    assert s.settled is not None and s.settled_right is not None
    print("every adjacent pair separated at 95 % (settled; then right): " + ", ".join(
        f"{m}: {100 * f:.0f}; {'-' if r is None else f'{100 * r:.0f}'}"
        for m, f, r in zip(s.matches, s.settled, s.settled_right)))
    w = widths(results, "swiss")
    for name, ref in refs.items():
        s = summarise(results, "swiss", "trueskill-hand", ref)
        assert s.coverage is not None
        print(f"coverage against {name}: " + ", ".join(f"{m}: {100 * c:.0f}" for m, c in zip(s.matches, s.coverage)))
    print("mean interval width: " + ", ".join(f"{m}: {v:.2f}" for m, v in sorted(w.items())))
    print(f"CPU {time.process_time() - start:.0f} s")


if __name__ == "__main__":
    main()
