"""The start-up estimate of ``arena run`` against the run's own time, on a
class of bots that are slow but legal.

Not a test.  Run: python benchmarks/estimate.py [--per-decision 0.5] [--jobs 2] [--spin]

Four bot programs, each spending most of its per-decision limit before every
reply (sleeping, or with ``--spin`` computing in a busy loop): two play as
the built-in greedy player (60 % and 70 % of the limit), two as passive
(never going down; 60 % and 70 %).  Tables of 3, two hands, a turn cap of
15: 12 matches, about 7 minutes at a 0.5 s limit and 2 jobs.  A first run,
so ``arena run`` probes the bots before it plays, and prints its estimate
('timed each bot's start and first decisions: estimated 7.1 min'); printed
here: that estimate, the time the matches took ('played 12 matches in
401.9 s'), and their ratio.  On a busy machine a bot at 70 % of a 0.5 s
limit can time out and forfeit, which no estimate foresees.  With
``--unflushed`` the last bot never flushes its output, so it misses its
start-up limit and forfeits every match, as a student's bot that forgets to
flush does: the estimate counts that from its probe.

With ``--class`` (use ``--per-decision 1``, the default limit) the class is
greedy beside four bot programs (``CLASS``): a healthy one, one that never
flushes, and two that answer at once for a dozen decisions and then past
their limit at each play, which the probe sees only by asking a prompt bot
on (``estimate.DEEPER``).  ``--load N`` runs N busy loops beside it,
``--repeat N`` runs it N times and prints the ratio's median, min and max.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

BOT = '''\
"""A slow but legal bot: a built-in player, using FRACTION of its limit a decision."""
import json
import sys
import time

sys.path.insert(0, {repo!r})
from arena.botkit import BotSession  # noqa: E402
from arena.players.registry import make_player  # noqa: E402

role, fraction = sys.argv[1], float(sys.argv[2])
spin, flush = "spin" in sys.argv[3:], "noflush" not in sys.argv[3:]
# midgame: prompt (1 % of its limit) until its twelfth request, then FRACTION on each play
midgame = "midgame" in sys.argv[3:]
limit, asked = 1.0, 0
session = BotSession(make_player=lambda info: make_player(role, info.rng()), name="slow-" + role)
for line in sys.stdin:
    if not line.strip():
        continue
    msg = json.loads(line)
    if msg.get("type") == "start":
        limit = (msg.get("time") or {{}}).get("decision") or 1.0
    elif msg.get("type") == "request":
        asked += 1
        share = 0.01 if midgame and (asked <= 12 or msg.get("kind") != "play") else fraction
        end = time.monotonic() + share * limit
        if not spin:
            time.sleep(share * limit)
        while time.monotonic() < end:
            pass
    reply = session.handle(msg)
    if reply is not None:
        sys.stdout.write(json.dumps(reply) + "\\n")
        if flush:
            sys.stdout.flush()
    if session.done:
        break
'''

BOTS = (("g70", "greedy", 0.7), ("g60", "greedy", 0.6), ("p70", "passive", 0.7), ("p60", "passive", 0.6))


def write_class(folder: Path, per_decision: float, spin: bool, unflushed: bool = False) -> Path:
    rows = [(name, role, share, ", noflush" if unflushed and i == len(BOTS) - 1 else "")
            for i, (name, role, share) in enumerate(BOTS)]
    return _write(folder, "slow", per_decision, spin, 10, rows)


def _write(folder: Path, name: str, per_decision: float, spin: bool, startup: float,
           rows: Sequence[tuple[str, str, float, str]], builtins: str = "") -> Path:
    """The tournament file ``name``.yaml of slow_bot.py bots, one per row
    (name, the built-in player it plays as, its share of the limit, extra
    arguments), after the ``builtins`` lines."""
    (folder / "slow_bot.py").write_text(BOT.format(repo=str(REPO)))
    mode = ", spin" if spin else ""
    bots = "\n".join(f"  - {{name: {bot}, command: [{sys.executable}, slow_bot.py, {role}, '{share}'{mode}{extra}], "
                     f"sandbox: {{read: [{REPO / 'arena'}]}}}}" for bot, role, share, extra in rows)
    path = folder / f"{name}.yaml"
    path.write_text(textwrap.dedent(f"""\
        name: {name}
        players: 3
        seed: 8811223344556677889
        rules: {{contracts: [2S3, 2R4], turn_cap_per_player: 15}}
        time: {{per_decision: {per_decision}, startup: {startup}}}
        bots:
        """) + builtins + bots + "\n")
    return path


# A class as a teacher runs it: a built-in player, a healthy bot, and the
# bots that run into their limits: two that turn slow only after their first
# dozen decisions, past their limit on each play (a search that grows with
# the hand; a loop in a branch reached later, as a hang), which a probe of
# a bot's first three to six decisions does not see, and one that never
# flushes.
CLASS = (("ok", "greedy", 0.02, ""), ("mid", "greedy", 1.5, ", midgame"), ("hang", "passive", 5.0, ", midgame"),
         ("unfl", "greedy", 0.02, ", noflush"))


def write_mixed(folder: Path, per_decision: float, spin: bool) -> Path:
    return _write(folder, "class", per_decision, spin, 3, CLASS, "  - {name: greedy, builtin: greedy}\n")


def hogs(count: int) -> list[subprocess.Popen[bytes]]:
    """``count`` busy loops beside the run: a moderately busy machine."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def one_run(args: argparse.Namespace) -> tuple[float, float, list[str]]:
    """One first run of the class: (its estimate, its matches' seconds, its fault lines)."""
    with tempfile.TemporaryDirectory(prefix="arena-estimate-") as tmp:
        if args.mixed:
            config = write_mixed(Path(tmp), args.per_decision, args.spin)
        else:
            config = write_class(Path(tmp), args.per_decision, args.spin, args.unflushed)
        run = subprocess.run([sys.executable, "-m", "arena", "run", str(config), "--jobs", str(args.jobs),
                              "--out", str(Path(tmp) / "results")],
                             cwd=REPO, capture_output=True, text=True, check=False,
                             # a bot that never flushes would pass where PYTHONUNBUFFERED is set
                             env={k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"})
    said = re.search(r"timed each bot's start and first decisions: estimated ([\d.]+) min.*", run.stderr)
    took = re.search(r"played (\d+) matches in ([\d.]+) s", run.stderr)
    if said is None or took is None:
        sys.exit(f"arena run exited with {run.returncode} without the lines measured:\n{run.stderr}")
    estimate, actual = float(said.group(1)) * 60, float(took.group(2))
    print(f"estimated {estimate / 60:.1f} min, played {took.group(1)} matches in {actual:.1f} s "
          f"({actual / 60:.1f} min): estimate / actual = {estimate / actual:.2f}", flush=True)
    line = said.group(0)
    faults = [line.strip() for line in run.stderr.splitlines() if "timeouts" in line or "forfeited" in line]
    if faults:
        print(f"  {line}", *faults, sep="\n  ", flush=True)
    return estimate, actual, faults


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-decision", type=float, default=0.5)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--spin", action="store_true", help="compute in a busy loop instead of sleeping")
    parser.add_argument("--unflushed", action="store_true",
                        help="the last bot never flushes its output (a student's usual bug): it never says "
                             "'ready' in time, and forfeits every match at its start-up limit")
    parser.add_argument("--class", dest="mixed", action="store_true",
                        help="a class instead: greedy and four bots that run into their limits (CLASS)")
    parser.add_argument("--load", type=int, default=0, metavar="N", help="N busy loops run beside it")
    parser.add_argument("--repeat", type=int, default=1, metavar="N", help="N runs, one after another")
    args = parser.parse_args()
    hogging = hogs(args.load)
    try:
        ratios = [estimate / actual for estimate, actual, _ in (one_run(args) for _ in range(args.repeat))]
    finally:
        for hog in hogging:
            hog.kill()
            hog.wait()
    if len(ratios) > 1:
        print(f"estimate / actual over {len(ratios)} runs: median {statistics.median(ratios):.2f}, "
              f"min {min(ratios):.2f}, max {max(ratios):.2f}")


if __name__ == "__main__":
    main()
