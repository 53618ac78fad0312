"""A Python bot's start-up CPU: a shipped bot's start against the interpreter's floor.

Not a test.  Run: python benchmarks/botstart.py [--pairs 5] [--starts 10] [--bot FILE ...]

Every tournament starts bot processes (``--jobs 2`` more than ``--jobs 1``,
``arena check`` and ``arena play`` every time), so what a bot costs before
it answers counts in issue 9's "CPU of --jobs 2 / --jobs 1".  Measured here:

- subject: a shipped bot (default: bots/random_bot.py and bots/greedy_bot.py,
  both written with ``arena.botkit``) started with this interpreter, sent a
  ``start`` message, read until its ``ready`` line, sent ``quit``, reaped;
- floor: the same interpreter (so the same ``site``, venv and editable
  install) started with a few lines that read the ``start`` line with the
  standard library's ``json``, answer ``ready`` and read ``quit``: what any
  Python bot pays before its first line of its own.

CPU per start is user + system CPU of the reaped child
(``getrusage(RUSAGE_CHILDREN)``), averaged over ``--starts`` starts in a row.
Floor and subjects run interleaved, ``--pairs`` times (floor, bot, bot, floor,
bot, bot...); each pair gives, per bot, its CPU per start and its ratio to
that pair's floor.  Printed: the median with min and max of each.
``results()`` returns them as informational figures (no aim) for
``benchmarks/all.py``.

Python's bytecode caches matter most here: an untimed start of each program
first writes them where it can; the header says whether this interpreter
writes them (PYTHONDONTWRITEBYTECODE unset) or not.  To compare commits,
give another checkout's bots (``--bot DIR/bots/random_bot.py``): a shipped
bot imports the arena of the checkout it lies in.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

from figures import Figure  # noqa: E402 (benchmarks/ is on sys.path)

ROOT = Path(__file__).resolve().parent.parent
BOTS = (ROOT / "bots" / "random_bot.py", ROOT / "bots" / "greedy_bot.py")

# A start as the arena sends it: protocol 2, 4 seats, the default rules written out.
START = json.dumps({
    "type": "start", "protocol": 2, "match": "botstart-1", "seat": 1, "players": 4,
    "names": ["a", "b", "c", "d"],
    "rules": {"preset": "shanghai",
              "contracts": ["2S3", "S3+R4", "2R4", "3S3", "2S3+R4", "S3+2R4", "3R4", "4S3", "3S3+R4", "2S3+2R4"],
              "deal_size": [11] * 10, "decks": {str(p): 2 if p < 5 else 3 if p < 7 else 4 for p in range(2, 9)},
              "wild_deuces": True, "distinct_set_ranks": True, "buy_penalty": 2, "buy_priority": "dealer_left",
              "buy_limits": [3] * 8 + [4] * 2, "turn_cap_per_player": 60, "max_reshuffles": 1},
    "time": {"startup": 10.0, "decision": 1.0, "bank": None},
}, separators=(",", ":")) + "\n"
QUIT = '{"type":"quit"}\n'

# The floor: the least a Python bot does to answer ``start``.
FLOOR = """\
import json, sys
msg = json.loads(sys.stdin.readline())
print(json.dumps({"type": "ready", "name": "floor", "protocol": msg["protocol"]}), flush=True)
sys.stdin.readline()
"""


def one_start(argv: list[str], env: dict[str, str]) -> None:
    """Start ``argv``, send ``start``, read ``ready``, send ``quit``, reap it."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=ROOT, env=env, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(START)
    proc.stdin.flush()
    line = proc.stdout.readline()
    proc.stdin.write(QUIT)
    proc.stdin.close()
    proc.stdout.close()
    err = proc.stderr.read() if proc.stderr else ""
    if proc.wait() != 0 or not line.startswith('{"type":') or json.loads(line)["type"] != "ready":
        sys.exit(f"{' '.join(argv[1:])[:80]}: no ready line (exit {proc.returncode}): {line!r} {err[-300:]}")


def cpu_per_start(argv: list[str], starts: int, env: dict[str, str]) -> float:
    """User + system CPU-seconds of one start, averaged over ``starts``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    for _ in range(starts):
        one_start(argv, env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ((after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)) / starts


def measure(bots: list[Path], pairs: int, starts: int, env: dict[str, str],
            echo=print) -> tuple[list[float], dict[Path, list[float]]]:
    """Per pair: the floor's CPU per start, and each bot's (seconds)."""
    floor_argv = [sys.executable, "-c", FLOOR]
    subjects = {bot: [sys.executable, str(bot)] for bot in bots}
    for argv in (floor_argv, *subjects.values()):
        one_start(argv, env)             # untimed: writes the bytecode caches where it can
    floors: list[float] = []
    per_bot: dict[Path, list[float]] = {bot: [] for bot in bots}
    for i in range(pairs):
        floors.append(cpu_per_start(floor_argv, starts, env))
        for bot, argv in subjects.items():
            per_bot[bot].append(cpu_per_start(argv, starts, env))
        echo(f"  pair {i + 1}: floor {floors[-1] * 1e3:5.1f} ms; "
             + "; ".join(f"{_shown(b)} {v[-1] * 1e3:5.1f} ms" for b, v in per_bot.items()))
    return floors, per_bot


def _shown(file: Path) -> str:
    try:
        return str(file.resolve().relative_to(ROOT))
    except ValueError:
        return str(file)


def spread(values: list[float], fmt: str) -> str:
    return (f"median {format(statistics.median(values), fmt)} "
            f"(min {format(min(values), fmt)}, max {format(max(values), fmt)})")


def results(pairs_n: int = 5, starts: int = 10, bots: tuple[Path, ...] = BOTS) -> list[Figure]:
    """Each bot's CPU per start (ms) and its ratio to the floor: information, no aim."""
    floors, per_bot = measure(list(bots), pairs_n, starts, dict(os.environ), echo=lambda _line: None)
    command = f"python benchmarks/botstart.py --pairs {pairs_n} --starts {starts}"
    figures = [Figure("Python bot start floor: CPU to answer start with stdlib json",
                      tuple(f * 1e3 for f in floors), "ms", None, higher_is_better=False, command=command)]
    for bot, values in per_bot.items():
        figures += [
            Figure(f"{_shown(bot)}: CPU per start (to ready, then quit)", tuple(v * 1e3 for v in values), "ms",
                   None, higher_is_better=False, command=command),
            Figure(f"{_shown(bot)}: CPU per start / the floor's", tuple(v / f for v, f in zip(values, floors)),
                   "x", None, higher_is_better=False, command=command, fmt=".2f"),
        ]
    return figures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--starts", type=int, default=10, help="starts in a row per measurement (averaged)")
    ap.add_argument("--bot", type=Path, action="append", help="a Python bot file (repeatable); default: the shipped bots")
    args = ap.parse_args()
    if args.pairs < 1 or args.starts < 1:
        ap.error("--pairs and --starts must be at least 1")
    env = dict(os.environ)
    bots = [b.resolve() for b in args.bot] if args.bot else list(BOTS)
    caches = "off (PYTHONDONTWRITEBYTECODE)" if sys.dont_write_bytecode else "on"
    print(f"{args.pairs} pairs of floor and bot starts interleaved, {args.starts} starts per measurement; "
          f"bytecode caches {caches}; load {os.getloadavg()[0]:.2f}", flush=True)
    floors, per_bot = measure(bots, args.pairs, args.starts, env, echo=lambda line: print(line, flush=True))
    print(f"floor (python answering start with stdlib json): CPU per start {spread([f * 1e3 for f in floors], '.1f')} ms")
    for bot, values in per_bot.items():
        print(f"{_shown(bot)}: CPU per start {spread([v * 1e3 for v in values], '.1f')} ms; "
              f"over the floor {spread([v / f for v, f in zip(values, floors)], '.2f')}")


if __name__ == "__main__":
    main()
