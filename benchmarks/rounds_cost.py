"""CPU per match of a 12-bot Swiss tournament played until settled, against a round-robin match.

Not a test.  Run: python benchmarks/rounds_cost.py [--matches 480] [--pairs 3] [--resume]

The subject is ``arena run`` of a Swiss ``settle:`` tournament (``run_tournament``,
``--jobs 1``, its budget ``--matches``): twelve built-in players at tables of
4, four each of greedy, random and passive, listed in a shuffled order (not
by strength), so that the order is really found.  Equal players are never
told apart, so the run plays its whole budget, deciding every round from an
assessment of all the rounds before (the cost issue 29, point 4, is about).
The floor is as many matches of the same twelve players' round robin (its
tables drawn at random, every rotation of each), played and stored as
``arena run`` plays a round robin's schedule, with the same progress line.
Both store every match in a results database in a new directory; the
players are in-process, so the CPU is this process's (children included,
should an executor start any).

Floor and subject are interleaved, ``--pairs`` times.  Prints each pair's CPU
per match and the ratio subject/floor (median, min and max): the issue's aim
is at most 1.5x; and the share of the Swiss run's CPU its assessments took.
``--resume`` also times a resume of the finished Swiss run with its last
round's matches deleted (as a run killed then leaves it): the CPU and wall
seconds before its first new match, which re-assessed every stored round
before round decisions were stored.
"""

from __future__ import annotations

import argparse
import io
import random
import resource
import sqlite3
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from arena.tournament.config.load import load_config
from arena.tournament.config.model import TournamentConfig
from arena.tournament.executors.choose import MatchFailure, make
from arena.tournament.pairing.schedule import build_schedule
from arena.tournament.progress import Progress
from arena.tournament.results.database import ResultStore
from arena.tournament.runner import entry_spec, run_tournament, stored_match

KINDS = ("greedy", "random", "passive")
SEED = 2410114748679867459


@dataclass(frozen=True)
class Run:
    matches: int
    cpu: float
    wall: float
    assessing: float = 0.0      # of ``cpu``: assessing rounds (and the final table's)

    @property
    def per_match(self) -> float:
        return self.cpu / self.matches


def _cpu_now() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def tournament_file(where: Path, extra: str, bots: int = 12) -> Path:
    """Twelve built-in players, their kinds shuffled over the names."""
    kinds = [KINDS[i % len(KINDS)] for i in range(bots)]
    random.Random(3).shuffle(kinds)
    lines = ["name: rounds-cost", "bots:"]
    lines += [f"  - {{name: b{i:02d}, builtin: {kind}}}" for i, kind in enumerate(kinds)]
    lines += ["players: 4", f"seed: {SEED}", f"output: {where / 'out'}", extra]
    path = where / "t.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def swiss(matches: int) -> Run:
    """``arena run`` of the Swiss settling tournament with a budget of ``matches``;
    ``Run.assessing``: the CPU its rounds' assessments took."""
    import arena.ranking

    spent: list[float] = []
    assess = arena.ranking.assess

    def timed(*args, **kwargs):
        cpu = _cpu_now()
        try:
            return assess(*args, **kwargs)
        finally:
            spent.append(_cpu_now() - cpu)
    with tempfile.TemporaryDirectory() as tmp:
        config = load_config(tournament_file(Path(tmp), f"format: swiss\nsettle: {{max_matches: {matches}}}"))
        arena.ranking.assess = timed
        try:
            cpu, start = _cpu_now(), time.perf_counter()
            summary = run_tournament(config, 1, echo=lambda _line: None, progress_stream=io.StringIO())
        finally:
            arena.ranking.assess = assess
        return Run(summary.played, _cpu_now() - cpu, time.perf_counter() - start, sum(spent))


def round_robin(matches: int) -> Run:
    """About ``matches`` matches of the round robin, played and stored as ``arena run`` does."""
    with tempfile.TemporaryDirectory() as tmp:
        config = load_config(tournament_file(Path(tmp), "deals: 1"))
        entries = _some_tables(config, matches)
        cpu, start = _cpu_now(), time.perf_counter()
        _play(config, entries, Path(tmp))
        return Run(len(entries), _cpu_now() - cpu, time.perf_counter() - start)


def _some_tables(config: TournamentConfig, matches: int) -> list:
    by_table: dict[int, list] = {}
    for e in build_schedule(config):
        by_table.setdefault(e.table, []).append(e)
    chosen = random.Random(5).sample(sorted(by_table), max(1, matches // config.players))
    return [e for t in sorted(chosen) for e in by_table[t]]


def _play(config: TournamentConfig, entries: list, tmp: Path) -> None:
    """What the runner does with a schedule: each match played, stored, shown in the progress."""
    store = ResultStore(tmp / "results.sqlite")
    try:
        store.init_tournament(config.name, config.to_mapping(), seed=config.seed, bots=config.bot_names)
        progress = Progress(total=len(entries), stream=io.StringIO(), rating=config.rating)
        by_id = {e.match_id: e for e in entries}
        executor = make(config, 1, len(entries))
        try:
            for outcome in executor.run(entry_spec(config, e, tmp, "none") for e in entries):
                if isinstance(outcome, MatchFailure):
                    sys.exit(f"{outcome.match_id} failed: {outcome.reason}")
                entry = by_id[outcome.match_id]
                store.add_match(stored_match(entry, outcome, "2025-01-01T00:00:00+00:00"))
                progress.add(entry, outcome)
        finally:
            executor.close()
    finally:
        store.close()


def resume(matches: int) -> tuple[float, float, int]:
    """CPU and wall seconds from a resume's start to its first new match, and the rounds it assessed."""
    import arena.ranking
    import arena.tournament.runner as runner

    with tempfile.TemporaryDirectory() as tmp:
        config = load_config(tournament_file(Path(tmp), f"format: swiss\nsettle: {{max_matches: {matches}}}"))
        run_tournament(config, 1, echo=lambda _line: None, progress_stream=io.StringIO())
        db = Path(tmp) / "out" / "results.sqlite"
        with sqlite3.connect(db) as c:
            c.execute("PRAGMA foreign_keys = ON")
            last = c.execute("SELECT max(deal) FROM matches").fetchone()[0]
            c.execute("DELETE FROM matches WHERE deal = ?", (last,))
        first: list[tuple[float, float]] = []
        assessed: list[int] = []
        feed, assess = runner._feed, arena.ranking.assess

        def timed_feed(*args, **kwargs):        # the first new match starts here
            first.append((_cpu_now(), time.perf_counter()))
            return feed(*args, **kwargs)

        def counted(*args, **kwargs):
            if sys._getframe(1).f_code.co_filename == runner.__file__:    # not the final table's
                assessed.append(1)
            return assess(*args, **kwargs)
        runner._feed, arena.ranking.assess = timed_feed, counted
        try:
            cpu, start = _cpu_now(), time.perf_counter()
            run_tournament(config, 1, echo=lambda _line: None, progress_stream=io.StringIO())
        finally:
            runner._feed, arena.ranking.assess = feed, assess
        return first[0][0] - cpu, first[0][1] - start, len(assessed)


def spread(values: list[float], fmt: str = "{:.3f}") -> str:
    return (f"median {fmt.format(statistics.median(values))} "
            f"(min {fmt.format(min(values))}, max {fmt.format(max(values))})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--matches", type=int, default=480, help="the Swiss run's budget (settle.max_matches)")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--resume", action="store_true", help="also time a resume of a finished Swiss run")
    args = ap.parse_args()
    print(f"12 built-in bots at tables of 4, Swiss settle: budget {args.matches} (subject) against as many "
          f"round-robin matches (floor), {args.pairs} pairs interleaved; CPU per match, this process and children")
    ratios: list[float] = []
    shares: list[float] = []
    for _ in range(args.pairs):
        floor = round_robin(args.matches)
        subject = swiss(args.matches)
        ratios.append(subject.per_match / floor.per_match)
        shares.append(subject.assessing / subject.cpu)
        print(f"  round robin {floor.matches} matches, {floor.cpu:6.1f} CPU-s, {floor.per_match:.3f} CPU-s/match; "
              f"Swiss {subject.matches} matches, {subject.cpu:6.1f} CPU-s, {subject.per_match:.3f} CPU-s/match "
              f"({subject.assessing:.1f} CPU-s assessing); ratio {ratios[-1]:.2f}x", flush=True)
    print("CPU per match, Swiss / round robin: " + spread(ratios, "{:.2f}x") + " (aim: at most 1.50x)")
    print("share of the Swiss run's CPU spent assessing: " + spread([100 * s for s in shares], "{:.0f} %"))
    if args.resume:
        cpu, wall, assessed = resume(args.matches)
        print(f"resume with the last round's matches deleted: {cpu:.1f} CPU-s, {wall:.1f} s wall before the "
              f"first new match; {assessed} round(s) assessed")


if __name__ == "__main__":
    main()
