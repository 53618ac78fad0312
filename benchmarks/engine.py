"""Engine ceilings: full matches and decisions per second, in-process players.

Not a test. Run: python benchmarks/engine.py [--matches N] [--players 4]

Reports, for four random players and for four greedy players, matches per
second and decisions per second on one core, next to a floor measured in the
same run (a bare loop doing as many dict look-ups and list appends as
decisions), so figures from different machines can be compared as ratios.
"""

from __future__ import annotations

import argparse
import random
import time

from arena.players import play_match
from arena.players.registry import make_player
from arena.shanghai.game import Game
from arena.shanghai.ruleset import Ruleset


def run(kind: str, matches: int, players: int, preset: str) -> tuple[float, float, int]:
    rules = Ruleset.preset(preset)
    decisions = 0
    start = time.perf_counter()
    for seed in range(matches):
        game = Game.seeded(rules, players, seed)
        seats = [make_player(kind, random.Random(f"{seed}/{i}")) for i in range(players)]
        play_match(game, seats)
        decisions += len(game.actions)
    elapsed = time.perf_counter() - start
    return matches / elapsed, decisions / elapsed, decisions


def floor(ops: int) -> float:
    """Operations per second of a trivial Python loop: the machine's yardstick."""
    d: dict[int, int] = {}
    out: list[int] = []
    start = time.perf_counter()
    for i in range(ops):
        d[i & 1023] = i
        out.append(d[i & 1023])
    return ops / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--matches", type=int, default=20)
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--preset", default="shanghai")
    args = ap.parse_args()
    base = floor(2_000_000)
    print(f"floor: {base:,.0f} loop operations/s")
    for kind in ("random", "greedy"):
        mps, dps, total = run(kind, args.matches, args.players, args.preset)
        print(
            f"{args.players} x {kind:6s}: {mps:7.2f} matches/s  {dps:9,.0f} decisions/s "
            f"({total} decisions in {args.matches} matches; floor/decision ratio {base / dps:,.0f})"
        )


if __name__ == "__main__":
    main()
