"""A bot computing between its turns, and what it costs the bot whose turn it
is, with and without the turn guard (``arena.process.confine.turns``).  Not a test.

Run: python benchmarks/turns.py [--pairs 5] [--decisions 60] [--work-ms 20]

Two sandboxed bots take turns on one CPU, as a match's bots do: a
neighbour, answered at once, then a victim that spends ``--work-ms`` of CPU
on each request.  Three neighbours, interleaved in each round (the order
turning from round to round):

- plain: it only reads and answers (the floor);
- pondering, guard off (``turn_guard=False``): it counts in a thread all
  the time, as a bot thinking on its opponents' time does;
- pondering, guard on (the default): the same bot, which the watchdog
  catches and stops between its turns.

Printed: the victim's mean decision time (wall ms, what its time limit
counts) for each, median [min .. max] over the rounds, and each one's median
ratio to plain with min and max.  The first decisions of each round, while
the watchdog has not yet caught the ponderer, are left out (``--settle``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from arena.process import BotProcess, BotSpec, SandboxPolicy, TimeControl

HERE = Path(__file__).resolve().parent.parent
PONDER = HERE / "tests" / "bots" / "ponder.py"
VICTIM = r"""
import json, sys, time
work = float(sys.argv[1])
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") == "quit":
        break
    t = time.process_time()
    while time.process_time() - t < work:
        pass
    sys.stdout.write(json.dumps({"id": msg.get("id")}) + "\n")
    sys.stdout.flush()
"""
KINDS = ("plain", "pondering, guard off", "pondering, guard on")
TIME = TimeControl(startup_seconds=30, per_decision_seconds=30)


def bot(argv: list[str], guard: bool, log: Path) -> BotProcess:
    spec = BotSpec(argv, sandbox=SandboxPolicy("auto"), turn_guard=guard)
    proc = BotProcess(spec, stderr_log=log, time_control=TIME).start()
    proc.handshake({"type": "start", "id": 0})
    return proc


def victim_ms(kind: str, victim_path: Path, work: float, decisions: int, settle: int, tmp: Path) -> float:
    """The victim's mean decision time, ms, next to a neighbour of ``kind``."""
    args = [] if kind == "plain" else ["--thread"]
    neighbour = bot([sys.executable, str(PONDER), *args], kind != KINDS[1], tmp / "n.log")
    victim = bot([sys.executable, str(victim_path), str(work)], True, tmp / "v.log")
    times: list[float] = []
    try:
        for n in range(1, decisions + settle + 1):
            neighbour.request({"type": "request", "id": n})
            _reply, elapsed = victim.request({"type": "request", "id": n})
            if n > settle:
                times.append(elapsed)
    finally:
        neighbour.close()
        victim.close()
    return statistics.mean(times) * 1000


def spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):7.1f} [{min(xs):.1f} .. {max(xs):.1f}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=5, help="rounds of the three (at least 5)")
    ap.add_argument("--decisions", type=int, default=60, help="victim decisions measured per sample")
    ap.add_argument("--settle", type=int, default=20, help="decisions left out first (the catch)")
    ap.add_argument("--work-ms", type=float, default=20.0, help="the victim's CPU per decision")
    args = ap.parse_args()
    if args.pairs < 5:
        ap.error("--pairs must be at least 5")
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})     # one CPU, as a match plays
    results: dict[str, list[float]] = {k: [] for k in KINDS}
    with tempfile.TemporaryDirectory(prefix="arena-turns-") as tmp_name:
        tmp = Path(tmp_name)
        victim_path = tmp / "victim.py"
        victim_path.write_text(VICTIM)
        for i in range(args.pairs):
            for kind in KINDS[i % 3:] + KINDS[:i % 3]:
                results[kind].append(victim_ms(kind, victim_path, args.work_ms / 1000,
                                               args.decisions, args.settle, tmp))
    plain = results[KINDS[0]]
    print(f"{args.pairs} rounds; the victim spends {args.work_ms:g} ms of CPU a decision; "
          "its mean decision time, ms, median [min .. max]:")
    for kind in KINDS:
        ratios = [x / p for x, p in zip(results[kind], plain)]
        print(f"  next to a {kind:22s} {spread(results[kind])}   / plain "
              f"{statistics.median(ratios):.2f} [{min(ratios):.2f} .. {max(ratios):.2f}]")


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"({time.perf_counter() - t0:.0f} s wall)")
