"""Protocol overhead: decisions per second of a match between four Python
subprocess bots, next to the round-trip rate of bare pipe echo children
doing the same JSON work, measured in the same run.

Not a test.  Run: python benchmarks/protocol.py [--matches 3] [--bot "python3 bots/random_bot.py"]
(default bot: tests/gamebots/minimal.py, which only does the JSON work).

1. A match between four copies of the bot is played once to record every
   batch of lines the arena writes to each bot (event notices + request).
2. The same matches are played again, timed (start-up excluded):
   decisions per second through ``run_match``.
3. Four echo children get exactly the recorded batches, in the recorded
   order, from a bare loop (one write, one blocking line read); each parses
   every line with ``json.loads`` like the bot does and answers each request
   with a reply the size of the minimal bot's.  That is the ceiling: the pipes
   and the bots' own JSON parsing, without the game engine, views, the
   process layer's threads or the arena's JSON encoding.

The ratio match/echo is the share of the ceiling the runner achieves.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from arena.match import MatchSpec, SeatSpec, run_match
from arena.process import BotProcess, TimeControl

REPO = Path(__file__).resolve().parent.parent
MINIMAL = REPO / "tests" / "gamebots" / "minimal.py"
RULES = {"contracts": ["2S3", "S3+R4", "2R4"]}

ECHO = r"""
import json, sys
out = sys.stdout
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") == "request":
        kind = msg["kind"]
        if kind == "draw":
            reply = {"id": msg["id"], "draw": "stock"}
        elif kind == "buy":
            reply = {"id": msg["id"], "buy": False}
        else:
            reply = {"id": msg["id"], "discard": msg["options"][0]}
        out.write(json.dumps(reply) + "\n")
        out.flush()
"""


def default_bot() -> list[str]:
    # The minimal bot does nothing but the JSON work, so the ratio measures
    # the arena; a real bot (bots/random_bot.py) adds its own thinking time,
    # which the echo children do not have.
    return [sys.executable, str(MINIMAL)]


def spec_for(argv: list[str], seed: int) -> MatchSpec:
    seats = tuple(SeatSpec.command(argv, name=f"bot{i}") for i in range(4))
    return MatchSpec(f"bench-{seed}", seats, RULES, seed=seed,
                     time=TimeControl(startup_seconds=10, per_decision_seconds=5))


Batch = tuple[str, bytes, bool]    # (bot name, the lines written at once, expects a reply)


def record(argv: list[str], seed: int) -> list[Batch]:
    """Play once with BotProcess._write_lines wrapped to keep what is written."""
    batches: list[Batch] = []
    original = BotProcess._write_lines

    def spy(self: BotProcess, objs: list[Any], deadline: float, limit: float) -> float:
        lines = [o if isinstance(o, bytes) else json.dumps(o, separators=(",", ":")).encode()
                 for o in objs]
        kinds = [json.loads(line).get("type") for line in lines]
        if "start" not in kinds and "quit" not in kinds and "end" not in kinds:
            batches.append((self.name, b"".join(line + b"\n" for line in lines),
                            "request" in kinds))
        return original(self, objs, deadline, limit)

    BotProcess._write_lines = spy  # type: ignore[method-assign]
    try:
        run_match(spec_for(argv, seed))
    finally:
        BotProcess._write_lines = original  # type: ignore[method-assign]
    # Notices are sent just before a request; glue them to it, as one write.
    merged: list[Batch] = []
    pending: dict[str, bytes] = {}
    for name, data, is_request in batches:
        data = pending.pop(name, b"") + data
        if is_request:
            merged.append((name, data, True))
        else:
            pending[name] = data
    return merged


def echo_rate(batches: list[Batch]) -> tuple[float, int]:
    names = sorted({name for name, _, _ in batches})
    children = {
        name: subprocess.Popen([sys.executable, "-c", ECHO], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, bufsize=0)
        for name in names
    }
    try:
        readers = {name: os.fdopen(os.dup(p.stdout.fileno()), "rb") for name, p in children.items()}  # type: ignore[union-attr]
        fds = {name: p.stdin.fileno() for name, p in children.items()}  # type: ignore[union-attr]
        # Warm up (interpreter start) outside the timing.
        for name in names:
            os.write(fds[name], b'{"type":"request","id":0,"kind":"buy","options":[true,false]}\n')
            readers[name].readline()
        t0 = time.perf_counter()
        for name, data, _ in batches:
            view = memoryview(data)
            while view:
                view = view[os.write(fds[name], view):]
            readers[name].readline()
        elapsed = time.perf_counter() - t0
        for r in readers.values():
            r.close()
    finally:
        for p in children.values():
            p.stdin.close()  # type: ignore[union-attr]
            p.wait(timeout=5)
            p.stdout.close()  # type: ignore[union-attr]
    return len(batches) / elapsed, len(batches)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--matches", type=int, default=3)
    ap.add_argument("--bot", default=None, help="bot command line (default: the minimal test bot)")
    args = ap.parse_args()
    argv = shlex.split(args.bot) if args.bot else default_bot()
    print(f"bot: {' '.join(argv)}; 4 seats; contracts {RULES['contracts']}")

    batches: list[Batch] = []
    for seed in range(args.matches):
        batches += record(argv, seed)
    sizes = sorted(len(b) for _, b, _ in batches)
    print(f"recorded {len(batches)} requests; bytes written per request: "
          f"median {sizes[len(sizes) // 2]:,}, max {sizes[-1]:,}")

    decisions = 0
    play_time = 0.0
    startup = 0.0
    for seed in range(args.matches):
        result = run_match(spec_for(argv, seed))
        decisions += result.decisions
        play_time += result.wall_seconds - result.startup_seconds
        startup += result.startup_seconds
    match_rate = decisions / play_time
    print(f"match: {decisions} decisions in {play_time:.3f} s = {match_rate:,.0f} decisions/s "
          f"(start-up of 4 bots: {startup / args.matches * 1000:.0f} ms per match, not counted)")

    rate, n = echo_rate(batches)
    print(f"echo:  {n} round trips = {rate:,.0f} round trips/s")
    print(f"ratio match/echo: {match_rate / rate:.2f}")


if __name__ == "__main__":
    main()
