"""Tournament throughput: the demo tournament with --jobs 1 and --jobs 2.

Not a test. Run: python benchmarks/tournament.py [FILE]

Prints matches per minute for each job count, measured in the same run, the
speed-up of two jobs over one, and the share of match time spent starting
bot processes (process start plus handshake, as recorded by each match).
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from arena.tournament.config import load_config
from arena.tournament.runner import run_tournament

ROOT = Path(__file__).resolve().parent.parent


def measure(file: Path, jobs: int) -> tuple[float, int, float]:
    with tempfile.TemporaryDirectory() as tmp:
        config = load_config(file).with_overrides(jobs=jobs, output=tmp)
        start = time.perf_counter()
        summary = run_tournament(config, jobs, echo=lambda _line: None, progress_stream=open("/dev/null", "w"))
        wall = time.perf_counter() - start
        with sqlite3.connect(summary.db) as db:
            match_seconds = db.execute("select sum(duration_seconds) from matches").fetchone()[0] or 0.0
        return wall, summary.played, match_seconds


def startup_share(file: Path) -> float:
    """Share of match wall time spent starting bots, without process reuse."""
    from arena.match import run_match
    from arena.tournament.runner import entry_spec
    from arena.tournament.schedule import build_schedule

    config = load_config(file)
    total = startup = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for entry in build_schedule(config):
            result = run_match(entry_spec(config, entry, Path(tmp)))
            total += result.wall_seconds
            startup += result.startup_seconds
    return startup / total if total else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("file", nargs="?", default=str(ROOT / "tournaments" / "demo.yaml"))
    args = ap.parse_args()
    file = Path(args.file)
    rates = {}
    for jobs in (1, 2):
        wall, played, _ = measure(file, jobs)
        rates[jobs] = played / wall * 60
        print(f"--jobs {jobs}: {played} matches in {wall:.1f} s = {rates[jobs]:.1f} matches/min")
    print(f"speed-up of 2 jobs over 1: {rates[2] / rates[1]:.2f}x")
    share = startup_share(file)
    print(f"share of match time spent starting bots (no process reuse): {share:.1%}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
