"""Where the bots' extra CPU in a match comes from.  Not a test.

Run: python benchmarks/shared_cpu.py [--pairs 5] [--steps 4]

``benchmarks/protocol.py`` compares a match with a bare echo loop moving the
same bytes, and the bots of a match (the same JSON work per line as the echo
children) cost more CPU per decision than the echo children do, although
each reads once per decision (strace) and gets the same bytes.  This replays
one recorded match's batches (notices + request, one write per decision) to
four warm children in three ways, interleaved, all on one CPU as a match
plays:

1. bare: the echo floor's loop (one ``os.write``, one blocking line read);
2. busy: the same loop, the parent first playing ``--steps`` in-process
   engine decisions (decision, view, apply of a seeded match of its own),
   work that touches nothing the children see: what they pay for it is the
   CPU's caches and predictors, shared with more than a bare loop;
3. process layer: the same bytes through ``BotProcess.request_data`` (the
   arena's path for a decision: polls, stamps, the turn clock) to children
   started by ``BotProcess``, no engine.

Each child's CPU is read from /proc/PID/schedstat (ns).  Printed: per pair
and as median (min, max), the parent's and the children's CPU per round trip
in each way, and the children's ratio to the bare loop's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import protocol  # noqa: E402 (benchmarks/ is on sys.path)

from arena.match import fallback_action
from arena.process import BotProcess, BotSpec, SandboxPolicy, TimeControl
from arena.shanghai.game import Game
from arena.shanghai.ruleset import Ruleset


def engine_work(steps: int) -> Callable[[], None]:
    """A function that plays ``steps`` decisions of an in-process match per
    call, starting a new match when one ends."""
    rules = Ruleset.from_mapping(protocol.RULES)
    game = Game.seeded(rules, 4, 7)

    def step() -> None:
        nonlocal game
        for _ in range(steps):
            d = game.decision()
            if d is None:
                game = Game.seeded(rules, 4, 7)
                d = game.decision()
                assert d is not None
            game.view(d.seat)
            game.apply(fallback_action(d), d.seat)
    return step


def schedstat_cpu(pids: list[int]) -> float:
    """CPU seconds the processes ``pids`` have run, from the scheduler (ns)."""
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/schedstat") as f:
            total += int(f.read().split()[0])
    return total / 1e9


def replay(floor: protocol.EchoFloor, batches: list[protocol.Batch], work: Callable[[], None]) -> tuple[float, float]:
    """(parent, children) CPU seconds of one replay of ``batches`` by the
    bare loop, the parent calling ``work`` before each write."""
    pids = [p.pid for p in floor.children]
    child0, t0 = schedstat_cpu(pids), time.process_time()
    fds, readers = floor.fds, floor.readers
    for seat, data, _ in batches:
        work()
        view = memoryview(data)
        while view:
            view = view[os.write(fds[seat], view):]
        readers[seat].readline()
    return time.process_time() - t0, schedstat_cpu(pids) - child0


def request_id(data: bytes) -> int:
    """The id of the request line, the last of ``data``."""
    return int(json.loads(data[data.rfind(b"\n", 0, len(data) - 1) + 1:])["id"])


def start_processes(bot: Path) -> list[BotProcess]:
    time_control = TimeControl(startup_seconds=10, per_decision_seconds=5)
    spec = BotSpec([sys.executable, str(bot)], sandbox=SandboxPolicy(mode="none"))
    procs = [BotProcess(spec, name=f"bot{i}", time_control=time_control).start() for i in range(4)]
    for proc in procs:
        proc.handshake({"type": "start", "protocol": 2, "match": "m", "seat": 0})
    return procs


def through_processes(procs: list[BotProcess], batches: list[tuple[int, bytes, int]]) -> tuple[float, float]:
    """(parent, children) CPU seconds of one replay through ``request_data``."""
    pids = [p.pid for p in procs]
    child0, t0 = schedstat_cpu(pids), time.process_time()
    for seat, data, req_id in batches:
        procs[seat].request_data(data, req_id)
    return time.process_time() - t0, schedstat_cpu(pids) - child0


def spread(values: list[float], fmt: str = "{:.1f}") -> str:
    return (f"median {fmt.format(statistics.median(values))} "
            f"(min {fmt.format(min(values))}, max {fmt.format(max(values))})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--steps", type=int, default=4, help="engine decisions the parent plays per round trip")
    args = ap.parse_args()
    if args.pairs < 5:
        ap.error("--pairs: at least 5")
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})           # before any child: they inherit it
    tmp = tempfile.mkdtemp(prefix="bench-shared-")
    bot = Path(tmp) / "bench_bot.py"
    bot.write_text(protocol.BOT)
    batches = protocol.record(protocol.spec_for(bot, 1, 4, 2, f"{tmp}/rec"))
    n = len(batches)
    with_ids = [(seat, data, request_id(data)) for seat, data, _ in batches]
    floor = protocol.EchoFloor(bot, 4)
    procs = start_processes(bot)
    bare, busy = engine_work(0), engine_work(args.steps)
    ways = ("bare", f"busy ({args.steps} engine decisions)", "process layer")
    rows: list[list[tuple[float, float]]] = []
    print(f"one recorded match, {n} round trips, 4 echo children per way, all on CPU {cpu}")
    try:
        for i in range(args.pairs):
            rows.append([replay(floor, batches, bare), replay(floor, batches, busy),
                         through_processes(procs, with_ids)])
            print(f"  round {i + 1}: " + " | ".join(
                f"{way}: parent {p / n * 1e6:5.1f} us, children {c / n * 1e6:5.1f} us"
                for way, (p, c) in zip(ways, rows[-1])))
    finally:
        floor.close()
        for proc in procs:
            proc.close()
    for k, way in enumerate(ways):
        print(f"{way}: parent per round trip (us) " + spread([r[k][0] / n * 1e6 for r in rows])
              + "; children " + spread([r[k][1] / n * 1e6 for r in rows])
              + ("" if k == 0 else "; children / bare's " + spread([r[k][1] / r[0][1] for r in rows], "{:.3f}")))


if __name__ == "__main__":
    main()
