"""Fair tables: does a bot's place in the ``bots:`` list decide its rank?  (issue 29)

Not a test.  Run: python benchmarks/fairness.py [--seeds 40] [--seats 3 4 5]
[--formats round_robin swiss] [--seatings rotate balanced] [--jobs 2] [--cache DIR]

Two studies, each with ``seating: rotate`` (every deal in the rotations of
the listed order, as before) and ``seating: balanced``, on the same
tournament seeds, so the same tables are dealt the same cards:

* **Twins.**  Two copies of one program (greedy) in a field of weaker
  graded players (``benchmarks/rankbench/graded.py``: greedy with a random
  move at probability ``p``, down to ``p = 1``, random play), listed first
  and last, or next to each other in the middle.  For each configuration: how often the twins'
  rank ranges (the leaderboard's) share no rank ("separated"; the aim is at
  most 5 %), how often the pair test separates them, and the mean rating gap
  of the first-listed twin over the other, with its standard error (a list
  order effect shows as a gap whose sign does not change from seed to seed).
  Round robin: ``n = k + 1`` bots at tables of ``k``, deals chosen for about
  120 matches (a multiple of ``k - 1``, so balanced seating is exact).  Swiss
  (``format: swiss``, arena's own rounds and stopping rule): ``2k + 1`` bots,
  budget 120 matches.
* **Graded field.**  Six graded players of known order (issue 8's field),
  listed in a shuffled order (another per seed), round robin at tables of
  ``k``: how often the ratings give the exact true order after each deal
  round (60 matches at 3 and 4 seats).  The aim: 95 % of seeds by 120.

Matches are played in-process by the rules engine, as ``arena run`` plays
built-in players (no subprocess, no sandbox), from arena's own schedule
(``arena.tournament.pairing.schedule`` and ``rounds``); rated by hands, assessed by
``arena.ranking.assess`` as the leaderboard is.  ``--cache DIR`` keeps each
finished tournament's outcome, so an interrupted run goes on where it was.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rankbench.graded import P6, GradedPlayer  # noqa: E402
from rankbench.methods import hand_games  # noqa: E402
from rankbench.simulate import MatchRecord  # noqa: E402

from arena.match.spec import forfeit_places  # noqa: E402
from arena.players.base import play_match  # noqa: E402
from arena.ranking import Assessment, assess  # noqa: E402
from arena.shanghai.game import Game  # noqa: E402
from arena.shanghai.ruleset import Ruleset  # noqa: E402
from arena.tournament.config.model import ROUND_ROBIN, SWISS, BotConfig, Settle, TournamentConfig  # noqa: E402
from arena.tournament.pairing.rounds import StopRule, round_assessment, round_entries  # noqa: E402
from arena.tournament.pairing.schedule import ScheduleEntry, build_schedule, derive_seed  # noqa: E402

#: The twins play greedy; the others are weaker, down to random play, so
#: whom a twin sits after matters (the issue's field: greedy twins beside
#: the random and passive players).
TWIN_P = 0.0
#: The others of a twins field at tables of k: k - 1 graded players for round robin.
OTHERS = {3: (0.5, 1.0), 4: (0.3, 0.6, 1.0), 5: (0.25, 0.5, 0.75, 1.0)}
SWISS_BUDGET = 120
VARIANTS = ("ends", "middle")


@dataclass(frozen=True)
class Job:
    study: str          # "twins" or "graded"
    fmt: str
    seats: int
    variant: str        # twins: where they are listed; graded: "shuffled"
    seating: str
    seed: int

    @property
    def key(self) -> str:
        return f"{self.study}/{self.fmt}/{self.seats}/{self.variant}/{self.seating}/{self.seed}"


def twins_field(fmt: str, k: int, variant: str) -> list[tuple[str, float]]:
    """(name, p) in list order: twins ``t1`` (listed first) and ``t2``."""
    others = OTHERS[k] if fmt == ROUND_ROBIN else tuple(round((i + 1) / (2 * k - 1), 3) for i in range(2 * k - 1))
    bots = [(f"o{i}", p) for i, p in enumerate(others)]
    if variant == "ends":
        return [("t1", TWIN_P), *bots, ("t2", TWIN_P)]
    middle = len(bots) // 2
    return [*bots[:middle], ("t1", TWIN_P), ("t2", TWIN_P), *bots[middle:]]


def graded_field(seed: int) -> list[tuple[str, float]]:
    """Issue 8's six, named by strength (``g1`` best), listed in a shuffled order."""
    bots = [(f"g{i + 1}", p) for i, p in enumerate(P6)]
    random.Random(derive_seed(seed, "fairness-order")).shuffle(bots)
    return bots


def config_of(job: Job, bots: Sequence[tuple[str, float]]) -> TournamentConfig:
    k = job.seats
    if job.fmt == SWISS:
        deals, settle = 1, Settle(0.95, SWISS_BUDGET)
    elif job.study == "graded":
        deals, settle = 2, None
    else:
        per_deal = math.comb(len(bots), k) * k
        deals, settle = max(k - 1, round(120 / per_deal / (k - 1)) * (k - 1)), None
    return TournamentConfig(path=Path("fairness"), dir=Path.cwd(), name="fairness",
                            bots=tuple(BotConfig(n, builtin="greedy") for n, _ in bots), players=k,
                            format=job.fmt, deals=deals, settle=settle, seed=job.seed, seating=job.seating)


def play(entry: ScheduleEntry, p: dict[str, float]) -> MatchRecord:
    game = Game.seeded(Ruleset(), entry.players, entry.seed)
    players = [GradedPlayer(p[b], random.Random(derive_seed(entry.seed, entry.match_id, b)), b) for b in entry.seats]
    play_match(game, players)
    totals = tuple(game.totals)
    return MatchRecord(entry.match_id, entry.seed, entry.table, entry.rotation, entry.deal, entry.group, entry.seats,
                       totals, tuple(forfeit_places(totals, [False] * len(totals))),
                       tuple(tuple(h) for h in game.hand_scores))


def assessed(config: TournamentConfig, played: Sequence[MatchRecord], replicas: int | None = None,
             tolerance: float | None = None) -> Assessment:
    return assess(hand_games(played), config.bot_names, 0.95, replicas, seed=config.seed or 0, tolerance=tolerance)


def swiss_run(config: TournamentConfig, p: dict[str, float]) -> list[MatchRecord]:
    """arena's settling loop (runner._Rounds.play) on in-process players."""
    played: list[MatchRecord] = []
    rule = StopRule(SWISS_BUDGET, 0.95)
    round_no = 0
    while True:
        assessment = None
        if round_no >= config.deals:
            assessment = round_assessment(config, len(played), rule, lambda r, tol: assessed(config, played, r, tol))
            if rule.settled(len(played), assessment):
                return played
        entries = round_entries(config, round_no, assessment, len(played), [r.seats for r in played])
        if len(played) + len(entries) > SWISS_BUDGET:
            return played
        played += [play(e, p) for e in entries]
        round_no += 1


Z95 = statistics.NormalDist().inv_cdf(0.975)


def run_job(job: Job) -> dict[str, object]:
    start = time.process_time()
    bots = graded_field(job.seed) if job.study == "graded" else twins_field(job.fmt, job.seats, job.variant)
    p = dict(bots)
    config = config_of(job, bots)
    if job.fmt == SWISS:
        played = swiss_run(config, p)
    else:
        played = [play(e, p) for e in build_schedule(config)]
    out: dict[str, object] = {"key": job.key, "job": asdict(job), "matches": len(played)}
    if job.study == "graded":
        per_round = len(played) // config.deals
        out["right"] = {str(m): _exact(assessed(config, played[:m]).order)
                        for m in range(per_round, len(played) + 1, per_round)}
    else:
        a = assessed(config, played)
        (lo1, hi1), (lo2, hi2) = a.rank_range("t1"), a.rank_range("t2")
        i, j = sorted((a.order.index("t1"), a.order.index("t2")))
        # The pair test's statistic on the normal scale (its margin over what
        # separation needs, times 1.96): identical programs give a standard
        # normal if the test is calibrated, so its spread over seeds says how
        # well, far more precisely than counting the 5 % that pass 1.96.
        sign = 1.0 if a.order[i] == "t1" else -1.0
        out.update(ranges_apart=hi1 < lo2 or hi2 < lo1, pair_separated=a.pair_separated()[i][j],
                   gap=a.rows["t1"].mu - a.rows["t2"].mu,
                   z=sign * a.pair_margin(i, j) * Z95 / a.needed(0.95))
    out["cpu"] = time.process_time() - start
    return out


def _exact(order: Sequence[str]) -> bool:
    return list(order) == sorted(order, key=lambda n: int(n[1:]))


def jobs_of(args: argparse.Namespace) -> Iterator[Job]:
    """Seed by seed (an interrupted run's outcomes are whole seeds), each
    configuration with both seatings next to each other."""
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        for k in args.seats:
            for fmt in args.formats:
                if fmt == SWISS and k not in args.swiss_seats:
                    continue
                for variant in VARIANTS if fmt == ROUND_ROBIN and k in args.middle_seats else VARIANTS[:1]:
                    for seating in args.seatings:
                        yield Job("twins", fmt, k, variant, seating, seed)
        for k in args.graded_seats:
            for seating in args.seatings:
                yield Job("graded", ROUND_ROBIN, k, "shuffled", seating, seed)


def run_all(args: argparse.Namespace) -> list[dict[str, object]]:
    cache = None if args.cache is None else Path(args.cache) / "fairness.jsonl"
    done: dict[str, dict[str, object]] = {}
    if cache is not None and cache.exists():
        for line in cache.read_text().splitlines():
            try:
                row = json.loads(line)
                done[row["key"]] = row
            except (ValueError, KeyError):
                continue        # a line cut short by an interrupted run
    todo = [j for j in jobs_of(args) if j.key not in done]
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
    with ProcessPoolExecutor(args.jobs) as pool:
        for n, row in enumerate(pool.map(run_job, todo, chunksize=1), 1):
            done[str(row["key"])] = row
            if cache is not None:
                with cache.open("a") as f:
                    f.write(json.dumps(row) + "\n")
            print(f"\r{n}/{len(todo)} tournaments", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    rows = [done[j.key] for j in jobs_of(args)]
    return sorted(rows, key=lambda r: [str(r["job"][f]) for f in ("study", "fmt", "seats", "variant", "seating")])  # type: ignore[index]


def _group(rows: Sequence[dict[str, object]], *fields: str) -> dict[tuple[object, ...], list[dict[str, object]]]:
    out: dict[tuple[object, ...], list[dict[str, object]]] = {}
    for r in rows:
        job = r["job"]
        assert isinstance(job, dict)
        out.setdefault(tuple(job[f] for f in fields), []).append(r)
    return out


def report(rows: Sequence[dict[str, object]]) -> str:
    lines = ["Twins (identical programs): how often they are separated, and the first-listed one's rating gap",
             "", "| format | seats | twins listed | seating | seeds | matches | rank ranges apart | pair test "
             "separates | mean gap first - second (s.e.) | mean abs gap | z: r.m.s. (1 if calibrated) "
             "| CPU-s a tournament |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    twins = [r for r in rows if r["job"]["study"] == "twins"]  # type: ignore[index]
    for (fmt, k, variant, seating), group in _group(twins, "fmt", "seats", "variant", "seating").items():
        gaps = [float(r["gap"]) for r in group]  # type: ignore[arg-type]
        se = statistics.stdev(gaps) / math.sqrt(len(gaps)) if len(gaps) > 1 else float("nan")
        lines.append(f"| {fmt} | {k} | {variant} | {seating} | {len(group)} | "
                     f"{statistics.median(float(r['matches']) for r in group):.0f} | "  # type: ignore[arg-type]
                     f"{_share(group, 'ranges_apart')} | {_share(group, 'pair_separated')} | "
                     f"{statistics.fmean(gaps):+.2f} ({se:.2f}) | {statistics.fmean(map(abs, gaps)):.2f} | "
                     f"{_rms_z(group)} | "
                     f"{statistics.fmean(float(r['cpu']) for r in group):.1f} |")  # type: ignore[arg-type]
    graded = [r for r in rows if r["job"]["study"] == "graded"]  # type: ignore[index]
    if graded:
        lines += ["", "Graded field of 6, listed in shuffled order: seeds with the exact true order",
                  "", "| seats | seating | seeds | " + " | ".join(f"at {m}" for m in graded[0]["right"]) + " |",  # type: ignore[union-attr]
                  "|---|---|---|" + "---|" * len(graded[0]["right"])]  # type: ignore[arg-type]
        for (k, seating), group in _group(graded, "seats", "seating").items():
            cells = [f"{sum(r['right'][m] for r in group)}/{len(group)}" for m in group[0]["right"]]  # type: ignore[index, union-attr]
            lines.append(f"| {k} | {seating} | {len(group)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _rms_z(group: Sequence[dict[str, object]]) -> str:
    """The r.m.s. of the twins' z over the seeds that recorded it, with a 95 % range (chi-square)."""
    zs = [float(r["z"]) for r in group if "z" in r]  # type: ignore[arg-type]
    if len(zs) < 2:
        return "-"
    rms = math.sqrt(statistics.fmean(z * z for z in zs))
    spread = 1.96 / math.sqrt(2 * len(zs))      # the r.m.s.'s relative standard error, normal approximation
    return f"{rms:.2f} ({rms / (1 + spread):.2f}-{rms / (1 - spread):.2f}, {len(zs)} seeds)"


def _share(group: Sequence[dict[str, object]], key: str) -> str:
    hits = sum(bool(r[key]) for r in group)
    return f"{hits}/{len(group)} ({100 * hits / len(group):.0f} %)"


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--first-seed", type=int, default=1,
                    help="seeds FIRST to FIRST + SEEDS - 1: fresh seeds to check a figure fitted on others")
    ap.add_argument("--seats", type=int, nargs="+", default=[3, 4, 5], choices=sorted(OTHERS))
    ap.add_argument("--middle-seats", type=int, nargs="*", default=[3],
                    help="table sizes whose round robin also lists the twins next to each other in the middle")
    ap.add_argument("--swiss-seats", type=int, nargs="*", default=[3, 4, 5], help="table sizes played Swiss too")
    ap.add_argument("--graded-seats", type=int, nargs="*", default=[4], choices=[3, 4])
    ap.add_argument("--formats", nargs="+", default=[ROUND_ROBIN, SWISS], choices=[ROUND_ROBIN, SWISS])
    ap.add_argument("--seatings", nargs="+", default=["rotate", "balanced"], choices=["rotate", "balanced"])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cache", default=None, help="a folder keeping finished tournaments (resume)")
    ap.add_argument("--json", default=None, help="also write every tournament's outcome here")
    return ap.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse(argv)
    started = time.monotonic()
    rows = run_all(args)
    print(report(rows))
    print(f"\n({len(rows)} tournaments, {time.monotonic() - started:.0f} s; "
          f"python benchmarks/fairness.py {' '.join(sys.argv[1:])})")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
