"""How often the demo's shipped bots are flagged for CPU between their
turns on a loaded machine (issue 30, point 5).  Not a test.

Run: python benchmarks/flagged_demo.py [--runs 3] [--hogs N] [--jobs 2] [--arena PATH]

Each run plays tournaments/demo.yaml (12 matches: greedy, random and the js
bot, three a table, with duplicate deals) with ``--hogs`` processes
computing without end beside it (one per CPU by default: a loaded
machine), a fresh seed each run, and counts per bot the matches in which
it was flagged (``arena show RESULTS --json``: its ``caught`` matches).
Honest bots: every flag is a false one.

``--arena PATH`` runs the arena of another checkout (the code before a
change: ``--arena /path/to/main``) on the same bots and the same seeds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def demo_file(where: Path, seed: int) -> Path:
    """The demo tournament, its bots' dir: made absolute (this checkout's bots)."""
    text = (ROOT / "tournaments" / "demo.yaml").read_text()
    text = text.replace("dir: ..", f"dir: {json.dumps(str(ROOT))}")
    text = "\n".join(line for line in text.splitlines() if not line.startswith("seed:"))
    path = where / "demo.yaml"
    path.write_text(f"{text}\nseed: {seed}\n")
    return path


def one_run(arena: Path, seed: int, jobs: int) -> tuple[Counter[str], Counter[str]]:
    """Matches played and matches flagged, per bot."""
    with tempfile.TemporaryDirectory(prefix="flagged-demo-") as folder:
        where = Path(folder)
        tfile = demo_file(where, seed)
        env = {**os.environ, "PYTHONPATH": str(arena)}
        run = subprocess.run([sys.executable, "-m", "arena", "run", str(tfile), "--out", str(where / "out"),
                              "--jobs", str(jobs)], capture_output=True, text=True, env=env, cwd=where)
        if run.returncode != 0:
            raise SystemExit(f"arena run failed:\n{run.stderr[-2000:]}")
        shown = subprocess.run([sys.executable, "-m", "arena", "show", str(where / "out"), "--json"],
                               capture_output=True, text=True, env=env, cwd=where, check=True)
    bots = json.loads(shown.stdout)["bots"]
    return (Counter({b["bot"]: b["matches"] for b in bots}),
            Counter({b["bot"]: len(b["caught"]) for b in bots}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--hogs", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--arena", type=Path, default=ROOT, help="the checkout whose arena runs")
    args = ap.parse_args()
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.hogs)]
    played: Counter[str] = Counter()
    flagged: Counter[str] = Counter()
    try:
        for run in range(args.runs):
            p, f = one_run(args.arena, 1_000_003 * (run + 1) + 12_345_678_901, args.jobs)
            played.update(p)
            flagged.update(f)
            print(f"run {run + 1}: flagged {dict(f)} of {dict(p)}; load {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    print(f"{args.arena}: {args.runs} demo tournaments, {args.hogs} CPU hog(s), --jobs {args.jobs}")
    for bot in sorted(played):
        if bot != "greedy-builtin":
            print(f"  {bot}: flagged in {flagged[bot]} of {played[bot]} matches")


if __name__ == "__main__":
    main()
