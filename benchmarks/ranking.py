"""Ranking quality: how many matches each ranking method needs to find a known order.

Not a test. Run: python benchmarks/ranking.py [--bots 6 12] [--seeds N] [--cache DIR] [--json FILE]
                 python benchmarks/ranking.py --quick          (a smoke test, a minute or two)

The field: graded in-process players, greedy except that each decision is a
random one with probability p, so a lower p is stronger (and the run checks
that on its own pooled data). Tables of 4 from arena's own schedule (duplicate
deals, every rotation), full ten-hand matches, default rules. Every tournament
seed's matches are played once and cached (``--cache``); the methods are judged
at growing prefixes:

* round-robin: after 1, 2, ... whole deal rounds (every table x 4 rotations);
* swiss: arena's Swiss rounds (``arena.ranking.matchmaking``: tables around
  the pairs not yet separated), online, judged every ``--swiss-every`` matches
  up to the budget (arena's default budget unless ``--swiss-max``).

Both are arena's settling runs (``arena run`` with ``settle:``): before each
round the order is assessed and the run stops once every adjacent pair is
separated. The benchmark records where each seed stopped and whether the order
was then right; a round robin plays on to the budget for the curves.

For each method: the fraction of seeds whose order is exactly the true one
(a tie is wrong), and "95 % right at": the first checkpoint with at least 95 %
of seeds right ("first"), and the first from which every later checkpoint
also has 95 % ("stays"). For the TrueSkill methods with bootstrap intervals
(arena.ranking.assess): the coverage of the 95 % intervals (share of
(seed, bot) intervals holding the bot's reference mu, fitted on the pooled
round-robin matches of the other half of the seeds), the share of seeds whose
order is settled (every adjacent pair separated) and, of those, how many are
exactly right.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import multiprocessing
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rankbench import methods  # noqa: E402
from rankbench.evaluate import SeedResult, StopSummary, Summary, run_seed, summarise, summarise_stops  # noqa: E402
from rankbench.formats import Format, Rounds, default_budget, round_robin, swiss  # noqa: E402
from rankbench.graded import SPREADS, Field, field_for  # noqa: E402
from rankbench.methods import METHODS  # noqa: E402
from rankbench.reference import FieldCheck, check_field, references  # noqa: E402
from rankbench.simulate import TABLE_SIZE, Simulator  # noqa: E402

#: Round-robin deal rounds, and the Swiss checkpoint step in matches, per field size.
ROUNDS = {6: 6, 12: 1, 16: 1}
SWISS_EVERY = {6: 20, 12: 240, 16: 480}


def make_formats(args: argparse.Namespace, field: Field) -> list[Format]:
    n = len(field.names)
    round_size = math.comb(n, TABLE_SIZE) * TABLE_SIZE
    out: list[Format] = []
    if "round-robin" in args.formats:
        out.append(round_robin(round_size, args.max_rounds or ROUNDS.get(n, 1), args.replicas, args.rating))
    if "swiss" in args.formats:
        budget = args.swiss_max or default_budget(Simulator(field, 0, None), "swiss")
        every = args.swiss_every or SWISS_EVERY.get(n, max(1, budget // 10))
        out.append(swiss(every, budget, args.replicas, args.rating))
    return out


def run_field(field: Field, args: argparse.Namespace, cache: Path) -> dict[str, Any]:
    n = len(field.names)
    round_size = math.comb(n, TABLE_SIZE) * TABLE_SIZE
    formats = make_formats(args, field)
    seeds = list(range(1, args.seeds + 1))
    work = functools.partial(_seed_job, field=field, formats=formats, cache=cache, replicas=args.replicas,
                             keep_judged=args.keep_judged, tolerance=args.replica_tolerance)
    start = time.perf_counter()
    if args.jobs > 1:
        with multiprocessing.Pool(min(args.jobs, len(seeds))) as pool:
            results = sorted(pool.imap_unordered(work, seeds), key=lambda r: r.seed)
    else:
        results = [work(s) for s in seeds]
    wall = time.perf_counter() - start

    rr = next((f for f in formats if isinstance(f, Rounds) and f.name == "round-robin"), None)
    check: FieldCheck | None = None
    refs: dict[str, Any] = {"match": None, "hand": None}
    own: dict[str, dict[str, Any]] = {}
    for fmt in formats:
        if fmt is not rr:      # the intervals of a format whose tables follow the results, against its own pool too
            pool = {r.seed: r.final[fmt.name] for r in results}
            own[fmt.name] = {level: references(field, pool, level) for level in ("match", "hand")}
    if rr is not None:
        rr_rounds = len(rr.checkpoints)
        pool_records = {s: Simulator(field, s, cache).round_robin(rr_rounds) for s in seeds}
        check = check_field(field, pool_records)
        refs = {"match": references(field, pool_records, "match"), "hand": references(field, pool_records, "hand")}
    summaries: dict[str, dict[str, Summary]] = {}
    for fmt in formats:
        summaries[fmt.name] = {}
        for name in METHODS:
            level = {"trueskill-match": "match", "trueskill-hand": "hand"}.get(name)
            summaries[fmt.name][name] = summarise(results, fmt.name, name, refs[level] if level else None,
                                                  own[fmt.name][level] if level and fmt.name in own else None)
    played = sum(r.played for r in results)
    play_cpu = sum(r.play_cpu for r in results)
    timing = {"wall_seconds": wall, "matches_played": played, "play_cpu_seconds": play_cpu,
              "matches_per_cpu_second": played / play_cpu if play_cpu else None,
              "eval_cpu_seconds": sum(r.eval_cpu for r in results)}
    stops = {fmt.name: summarise_stops(results, fmt.name) for fmt in formats}
    return {"field": field, "seeds": seeds, "formats": formats, "round_size": round_size, "check": check,
            "summaries": summaries, "stops": stops, "timing": timing,
            "reference_matches": check.matches // 2 if check else None}


def _seed_job(seed: int, field: Field, formats: Sequence[Format], cache: Path, replicas: int,
              keep_judged: bool, tolerance: float | None) -> SeedResult:
    methods.set_replica_tolerance(tolerance)       # in this process too, however it was started
    return run_seed(field, seed, formats, cache, replicas, keep_judged)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}"


def report(res: dict[str, Any], args: argparse.Namespace) -> str:
    field: Field = res["field"]
    lines = [f"== {len(field.names)} bots, p = {', '.join(f'{p:g}' for p in field.ps)}; "
             f"{len(res['seeds'])} seeds; a round robin round is {res['round_size']} matches =="]
    t = res["timing"]
    rate = t["matches_per_cpu_second"]
    lines.append(f"wall {t['wall_seconds']:.0f} s; played {t['matches_played']} new matches"
                 + (f" at {rate:.1f} matches/CPU-s" if rate else " (all from the cache)")
                 + f"; judging took {t['eval_cpu_seconds']:.0f} CPU-s")
    check: FieldCheck | None = res["check"]
    if check is not None:
        rows = [[b.name, f"{b.mean_place:.3f} ± {b.place_se:.3f}", f"{b.score_per_hand:.2f} ± {b.score_se:.2f}",
                 f"{b.mu:.2f}", "" if i == len(check.bots) - 1 else f"{check.place_z[i]:.1f}"]
                for i, b in enumerate(check.bots)]
        lines.append(f"\nfield check on all {check.matches} round-robin matches pooled "
                     f"(± standard error over seeds; z: mean place gap to the next bot in standard errors)"
                     f"{'' if check.monotone else ': MEAN PLACE IS NOT MONOTONE IN p'}")
        lines.append(tabulate(rows, headers=["bot", "mean place", "score/hand", "mu (pooled)", "z to next"]))
        if check.bots and min(check.place_z, default=99) < 3:
            lines.append("neighbours with z < 3 are hard to tell apart even in this pooled run")
    for fmt in res["formats"]:
        sums: dict[str, Summary] = res["summaries"][fmt.name]
        matches = next(iter(sums.values())).matches
        stop: StopSummary | None = res["stops"][fmt.name]
        budget = getattr(fmt, "budget", None)
        lines.append(f"\n{fmt.name} (budget {budget} matches): % of seeds exactly right, by matches played")
        if stop is not None:
            lines.append(f"arena's settling run (rating: {getattr(fmt, 'rating', '-')}): "
                         f"settled in {_pct(stop.settled)} % of seeds, stopping after "
                         f"{stop.quantile(0.5)} (median) / {stop.quantile(0.95)} (95 % of seeds) / "
                         f"{stop.matches[-1]} (max) matches; order then exactly right in {_pct(stop.right)} %")
        rows = [[m, s.until or "-", s.until_stays or "-", *map(_pct, s.right)] for m, s in sums.items()]
        lines.append(tabulate(rows, headers=["method", "95% at", "stays", *map(str, matches)]))
        rows = []
        for m, s in sums.items():
            if s.settled is None:
                continue
            if s.coverage is not None:
                rows.append([f"{m}: coverage", *map(_pct, s.coverage)])
            if s.coverage_own is not None:
                rows.append([f"{m}: coverage (own)", *map(_pct, s.coverage_own)])
            rows.append([f"{m}: settled", *map(_pct, s.settled)])
            rows.append([f"{m}: settled+right", *map(_pct, s.settled_right or [])])
        if rows:
            ref = res["reference_matches"]
            lines.append(f"intervals (95 %, {methods.assess_source()}, {args.replicas} replicas); coverage against "
                         f"the other half of the seeds' pooled round-robin mu ({ref} matches)"
                         + ("" if fmt.name == "round-robin"
                            else f", (own): against the other half's pooled {fmt.name} matches")
                         + "; settled+right is among the settled")
            lines.append(tabulate(rows, headers=["%", *map(str, matches)]))
    return "\n".join(lines)


def to_json(res: dict[str, Any]) -> dict[str, Any]:
    check: FieldCheck | None = res["check"]
    return {
        "ps": list(res["field"].ps), "bots": list(res["field"].names), "seeds": res["seeds"],
        "round_size": res["round_size"], "timing": res["timing"], "reference_matches": res["reference_matches"],
        "check": None if check is None else {**asdict(check), "monotone": check.monotone},
        "formats": {f: {m: {**asdict(s), "until": s.until, "until_stays": s.until_stays} for m, s in sums.items()}
                    for f, sums in res["summaries"].items()},
        "stops": {f: None if s is None else {**asdict(s), "median": s.quantile(0.5), "q95": s.quantile(0.95)}
                  for f, s in res["stops"].items()},
    }


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bots", type=int, nargs="+", default=[6, 12], help="field sizes (default 6 12)")
    ap.add_argument("--seeds", type=int, default=20, help="tournaments per field (default 20)")
    ap.add_argument("--max-rounds", type=int, default=None,
                    help=f"round-robin deal rounds (default by field size: {ROUNDS})")
    ap.add_argument("--formats", nargs="+", default=["round-robin", "swiss"], choices=["round-robin", "swiss"])
    ap.add_argument("--swiss-every", type=int, default=None,
                    help=f"Swiss checkpoint step in matches (default by field size: {SWISS_EVERY})")
    ap.add_argument("--swiss-max", type=int, default=None, help="Swiss budget in matches (default: arena's)")
    ap.add_argument("--spread", default="strength", choices=sorted(SPREADS),
                    help="p values of fields other than 6 (default: equal strength steps)")
    ap.add_argument("--rating", default="hands", choices=["hands", "matches"],
                    help="what arena's settling runs (the stop, Swiss's tables) rate as one game (default hands)")
    ap.add_argument("--replicas", type=int, default=200, help="bootstrap replicas of assess")
    ap.add_argument("--replica-tolerance", type=float, default=1e-3,
                    help="solver tolerance of assess's replicas (default 1e-3; 0: arena's own, "
                         "trueskill_batch.REPLICA_TOLERANCE, which takes longer on this data)")
    ap.add_argument("--cache", type=Path, default=None, help="keep played matches here (default: a temporary dir)")
    ap.add_argument("--keep-judged", action="store_true",
                    help="also cache each seed's judgements in --cache, to add seeds run by run "
                         "(stale once arena.ranking changes: delete the judged-*.jsonl files then)")
    ap.add_argument("--shuffle", action="store_true",
                    help="list each tournament's bots in a shuffled order, not their true one (issue 29)")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--json", type=Path, default=None, help="write the results here")
    ap.add_argument("--quick", action="store_true", help="6 bots, 4 seeds, 2 rounds: a smoke test")
    args = ap.parse_args(argv)
    if args.quick:
        args.bots, args.seeds, args.max_rounds = [6], 4, 2
        args.swiss_every, args.swiss_max, args.replicas = 40, 120, 50
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse(argv)
    args.replica_tolerance = args.replica_tolerance or None
    methods.set_replica_tolerance(args.replica_tolerance)
    out: dict[str, Any] = {"assess": methods.assess_source(), "replicas": args.replicas, "fields": {}}
    with tempfile.TemporaryDirectory() as tmp:
        cache = args.cache or Path(tmp)
        for n in args.bots:
            res = run_field(field_for(n, args.spread, args.shuffle), args, cache)
            print(report(res, args), flush=True)
            print()
            out["fields"][str(n)] = to_json(res)
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main()
