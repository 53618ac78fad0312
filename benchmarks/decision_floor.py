"""Where the arena's CPU per decision goes: a match taken apart into its layers.  Not a test.

Run: python benchmarks/decision_floor.py [--reps 7] [--no-affinity]

``protocol.py`` compares a whole match with a bare echo loop.  This script
builds the match up from that loop, one layer at a time, on the same bytes,
so the gap between the two can be split into its parts.  The same four echo
bots (``protocol.BOT``) answer every variant; the bytes are those of a
recorded match (``protocol.record``).  Variants, interleaved, ``--reps`` times:

- ``echo``: the bare loop of ``protocol.py``'s floor (one write, a blocking
  line read) over the recorded batches;
- ``engine``: no processes: the engine and codec work of one decision per
  batch (notices, the request, decoding a reply, applying it), in process;
- ``echo + engine``: both in one loop, a decision's work between two round
  trips, as a match must do them;
- ``process``: ``BotProcess.request`` (drain, write, poll, read, stamps,
  decoding) over the recorded batches, no engine;
- ``process + engine``: both;
- ``match``: ``run_match`` on the recorded match, its bots kept in a pool.

Everything runs on one CPU, as a tournament plays a match
(``--no-affinity``: where the scheduler puts it).  Each figure is the arena process's CPU (every thread, ``process_time``) per
decision, median with min and max over the repetitions.  The gap between
``echo + engine`` and the sum of ``echo`` and ``engine`` is what interleaving
costs (each wake-up finds the caches cold); the gap between ``process +
engine`` and ``echo + engine`` is the process layer; between ``match`` and
``process + engine``, the match loop.

``results()`` gives ``benchmarks/all.py`` the first of those that bounds
issue 9's aim of 40 us: ``echo + engine``, the least CPU per decision any
arena written in this Python spends (measured: 44-46 us on one CPU, 41 us
with no affinity, against 59-61 us for the whole match), with
``process + engine`` next to it.  ``benchmarks/compiled_engine.py`` measures
the same layers with the engine compiled by mypyc.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from figures import Figure  # noqa: E402
from protocol import BOT, RULES, EchoFloor, minimal_reply, record, spec_for  # noqa: E402

from arena.match import BotPool, run_match  # noqa: E402
from arena.process import BotProcess, BotSpec, SandboxPolicy  # noqa: E402
from arena.process.confine import affinity  # noqa: E402
from arena.protocol.encoder import MatchEncoder  # noqa: E402
from arena.protocol.messages import decode_reply_line, reply_action  # noqa: E402
from arena.shanghai.game import Game  # noqa: E402
from arena.shanghai.ruleset import Ruleset  # noqa: E402

SEATS = 4


def decisions(rules: Ruleset) -> Iterator[Callable[[], None]]:
    """One decision's engine and codec work at a time, over fresh seeded games."""
    seed = 100
    while True:
        game = Game.seeded(rules, SEATS, seed)
        encoder = MatchEncoder(game)
        sent = [1] * SEATS
        while game.decision() is not None:
            def step(game: Game = game, encoder: MatchEncoder = encoder, sent: list[int] = sent) -> None:
                d = game.decision()
                assert d is not None
                encoder.notices(sent[d.seat])
                sent[d.seat] = len(game.log)
                req_id = len(game.actions) + 1
                encoder.request(req_id, d, 2)
                line, _ = decode_reply_line(minimal_reply(d, req_id))
                game.apply(reply_action(line, req_id, d.kind), d.seat)
            yield step
        seed += 1


def measure(reps: int, pin: bool = True) -> tuple[dict[str, list[float]], int]:
    """Every variant ``reps`` times, interleaved: the arena's CPU per decision (us),
    each run's; and the decisions of a run.  ``pin``: all on one CPU (as a
    tournament plays a match)."""
    before = affinity.pin(affinity.plan(1)[0]) if pin else None   # before any child starts: they inherit it
    try:
        return _measure(reps)
    finally:
        affinity.unpin(before)


def _measure(reps: int) -> tuple[dict[str, list[float]], int]:
    rules = Ruleset.from_mapping(RULES)
    tmp = tempfile.mkdtemp(prefix="bench-floor-")
    bot = Path(tmp) / "bench_bot.py"
    bot.write_text(BOT)
    batches = record(spec_for(bot, 1, SEATS, 2, f"{tmp}/rec"))
    requests = []
    for seat, data, _ in batches:
        lines = data.split(b"\n")[:-1]
        requests.append((seat, lines[:-1], lines[-1], json.loads(lines[-1])["id"]))
    floor = EchoFloor(bot, SEATS)
    procs = [BotProcess(BotSpec([sys.executable, str(bot)], sandbox=SandboxPolicy(mode="none")),
                        stderr_log=f"{tmp}/p{i}.log").start() for i in range(SEATS)]
    for proc in procs:
        proc.handshake({"type": "start", "id": 0})

    def echo_and(work: bool) -> float:
        steps = decisions(rules)
        t0 = time.process_time()
        for seat, data, _ in batches:
            view = memoryview(data)
            while view:
                view = view[os.write(floor.fds[seat], view):]
            floor.readers[seat].readline()
            if work:
                next(steps)()
        return time.process_time() - t0

    def engine() -> float:
        steps = decisions(rules)
        t0 = time.process_time()
        for _ in batches:
            next(steps)()
        return time.process_time() - t0

    def process_and(work: bool) -> float:
        steps = decisions(rules)
        t0 = time.process_time()
        for seat, before, request, req_id in requests:
            procs[seat].request(request, before=before, reply_id=req_id, decode=decode_reply_line)
            if work:
                next(steps)()
        return time.process_time() - t0

    variants: dict[str, Callable[[], float]] = {
        "echo": lambda: echo_and(False),
        "engine": engine,
        "echo + engine": lambda: echo_and(True),
        "process": lambda: process_and(False),
        "process + engine": lambda: process_and(True),
    }
    figures: dict[str, list[float]] = {name: [] for name in [*variants, "match"]}
    with BotPool() as pool:
        run_match(spec_for(bot, 0, SEATS, 2, f"{tmp}/warm"), pool)

        def match() -> float:
            t0 = time.process_time()
            result = run_match(spec_for(bot, 1, SEATS, 2, f"{tmp}/match"), pool)
            assert result.decisions == len(batches) and not result.faults
            return time.process_time() - t0

        variants["match"] = match
        try:
            for _ in range(reps):
                for name, run in variants.items():
                    figures[name].append(run() / len(batches) * 1e6)
        finally:
            floor.close()
            for proc in procs:
                proc.close()
    return figures, len(batches)


def results(reps: int = 5, pin: bool = True) -> list[Figure]:
    """For ``benchmarks/all.py`` (information, no aims): the least CPU per
    decision any arena in this Python can spend, the echo loop with the
    engine's and codec's work and no process layer at all, next to issue 9's
    40 us; and what the process layer adds to it."""
    figures, _ = measure(reps, pin)
    where = "one CPU per match" if pin else "no affinity"
    command = f"python benchmarks/decision_floor.py --reps {reps}" + ("" if pin else " --no-affinity")
    return [
        Figure(f"arena CPU per decision with no process layer: echo loop + engine and codec ({where})",
               tuple(figures["echo + engine"]), "us", None, higher_is_better=False, command=command),
        Figure(f"arena CPU per decision: process layer + engine and codec, no match loop ({where})",
               tuple(figures["process + engine"]), "us", None, higher_is_better=False, command=command),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=7, help="repetitions of every variant, at least 5")
    ap.add_argument("--no-affinity", dest="pin", action="store_false",
                    help="leave the processes to the scheduler (default: all on one CPU, as a tournament plays)")
    args = ap.parse_args()
    if args.reps < 5:
        ap.error("--reps: at least 5")
    figures, decisions_n = measure(args.reps, args.pin)
    print(f"{SEATS} seats, {decisions_n} decisions a run, {args.reps} runs of each variant, interleaved;")
    print("arena CPU per decision (us), median [min .. max]:")
    for name, values in figures.items():
        print(f"  {name:18} {statistics.median(values):6.1f} [{min(values):5.1f} .. {max(values):5.1f}]")
    med = {name: statistics.median(values) for name, values in figures.items()}
    print(f"interleaving costs {med['echo + engine'] - med['echo'] - med['engine']:.1f} us beyond echo + engine "
          f"apart; the process layer {med['process + engine'] - med['echo + engine']:.1f} us beyond the bare "
          f"loop; the match loop {med['match'] - med['process + engine']:.1f} us beyond that")


if __name__ == "__main__":
    main()
