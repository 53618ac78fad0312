"""What the bubblewrap sandbox adds to a bot's start.

Not a test. Run: python benchmarks/sandbox.py [--pairs 15] [--starts 10]

One sample is ``--starts`` bot starts in a row, each: spawn, handshake (one
request and its reply), close.  The floor is the same bot started without
the sandbox (process-group containment only); floor and subject samples
alternate, ``--pairs`` times, so both see the same machine load.  Reported
per start: wall milliseconds (median of the samples, with min and max), the
added cost (median of the paired differences, min and max), the ratio
subject/floor, and the arena's own CPU milliseconds per start.

Two bots: a shell loop (starts in ~1 ms, so the sandbox's own cost shows)
and the shipped Python random bot (what a real start costs).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

from arena.process import BotProcess, BotSpec, SandboxPolicy, TimeControl

ROOT = Path(__file__).resolve().parent.parent
BOTS = {
    "sh loop": ["/bin/sh", "-c", 'while read -r l; do echo \'{"id":0}\'; done'],
    "python random_bot": [sys.executable, str(ROOT / "bots" / "random_bot.py")],
}
HELLO = {"type": "start", "id": 0}


def cpu() -> float:
    """The arena's own CPU time.  (Children's is not comparable: a sandboxed
    bot's CPU time does not reach its parent through bwrap's init.)"""
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def sample(argv: list[str], mode: str, starts: int) -> tuple[float, float]:
    """Wall and CPU seconds per start."""
    spec = BotSpec(argv, sandbox=SandboxPolicy(mode))
    tc = TimeControl(startup_seconds=20)
    wall0, cpu0 = time.perf_counter(), cpu()
    for _ in range(starts):
        bot = BotProcess(spec, time_control=tc).start()
        try:
            if argv[0] == "/bin/sh":
                bot.handshake(HELLO)
            else:   # a real bot answers 'start' with 'ready' (no id)
                bot.handshake({"type": "start", "protocol": 1, "match": "bench", "seat": 0,
                               "players": 2, "names": ["a", "b"], "rules": {},
                               "time": {"startup": 20, "decision": 1, "bank": None}})
        finally:
            bot.close(grace=2.0)
    return (time.perf_counter() - wall0) / starts, (cpu() - cpu0) / starts


def describe(values: list[float], scale: float = 1000.0) -> str:
    return (f"median {statistics.median(values) * scale:7.2f}  "
            f"min {min(values) * scale:7.2f}  max {max(values) * scale:7.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=15)
    parser.add_argument("--starts", type=int, default=10)
    args = parser.parse_args()
    print(f"{args.pairs} interleaved pairs of {args.starts} starts each; "
          f"figures per bot start; {os.cpu_count()} CPUs")
    for name, argv in BOTS.items():
        sample(argv, "bwrap", 2)          # warm caches (and the sandbox probe)
        sample(argv, "none", 2)
        floor_wall, floor_cpu, wall, cpu_used = [], [], [], []
        for _ in range(args.pairs):
            fw, fc = sample(argv, "none", args.starts)
            sw, sc = sample(argv, "bwrap", args.starts)
            floor_wall.append(fw)
            floor_cpu.append(fc)
            wall.append(sw)
            cpu_used.append(sc)
        added = [s - f for s, f in zip(wall, floor_wall)]
        ratio = [s / f for s, f in zip(wall, floor_wall)]
        added_cpu = [s - f for s, f in zip(cpu_used, floor_cpu)]
        print(f"\n{name}")
        print(f"  no sandbox   wall ms  {describe(floor_wall)}")
        print(f"  bwrap        wall ms  {describe(wall)}")
        print(f"  added        wall ms  {describe(added)}")
        print(f"  ratio bwrap/none      median {statistics.median(ratio):.2f}  "
              f"min {min(ratio):.2f}  max {max(ratio):.2f}")
        print(f"  no sandbox   arena CPU ms  {describe(floor_cpu)}")
        print(f"  bwrap        arena CPU ms  {describe(cpu_used)}")
        print(f"  added        arena CPU ms  {describe(added_cpu)}")


if __name__ == "__main__":
    main()
