"""Protocol overhead: the arena's CPU per decision, and a match's decision
rate next to a bare echo loop that moves the same bytes.  Not a test.

Run: python benchmarks/protocol.py [--pairs 7] [--seats 4] [--protocol 2] [--no-affinity]

Four (``--seats``) subprocess bots that do only the JSON work (parse every
line with ``json.loads``, answer each request with a minimal reply) play
matches of three hands.  For each seed:

1. record: the match is played once with the arena's writes recorded, so
   the floor can replay exactly the bytes each bot got (notices + request,
   one write per decision);
2. floor: four warm echo children (the same JSON work as the bots) get
   those batches in the same order from a bare loop: one ``os.write``, one
   blocking line read.  No engine, no views, no encoding, no threads;
3. subject: the same match through ``run_match``, its bot processes kept
   warm in a ``BotPool`` (as a tournament's workers keep them).

Floor and subject alternate, one pair per seed, ``--pairs`` pairs (at least
5).  Both run on one CPU, as a tournament plays each match (its worker and
its bots pinned to a CPU of their own, ``arena.process.confine.affinity``): this
script pins itself before it starts any child, so the floor's parent and
children share one CPU exactly as the arena and its bots do.
``--no-affinity`` leaves both to the scheduler (``affinity: false``).

CPU is counted per process: the arena's own (``getrusage``, every thread),
the echo parent's (``process_time``), and each child's and bot's, which they
report themselves (``process_time``, exact; not the 10 ms ticks
of /proc).  Per pair:

- rate ratio = (subject decisions per CPU-second of arena + bots) /
  (floor round trips per CPU-second of parent + children): the share of the
  floor's throughput a match reaches on the same CPU;
- arena CPU per decision, next to the echo parent's per round trip.

Printed: each figure's median with min and max over the pairs, and the
request sizes (the request line alone, and all bytes written per decision).
``results()`` returns the figures with issue 9's aims (arena CPU per
decision, the mean request line of each match, the rate ratio), for
``benchmarks/all.py``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from figures import Figure  # noqa: E402 (benchmarks/ is on sys.path)

from arena.match import BotPool, MatchSpec, SeatSpec, run_match
from arena.process import BotProcess, SandboxPolicy, TimeControl
from arena.process.confine import affinity

RULES = {"contracts": ["2S3", "S3+R4", "2R4"]}
# Bots and echo children do the same work per line; both report their CPU.
BOT = r"""
import json, sys, time
protocol_1 = "--protocol-1" in sys.argv
out = sys.stdout
for line in sys.stdin:
    msg = json.loads(line)
    kind = msg.get("type")
    if kind == "request":
        k = msg["kind"]
        if k == "draw":
            reply = {"id": msg["id"], "draw": "stock"}
        elif k == "buy":
            reply = {"id": msg["id"], "buy": False}
        else:
            reply = {"id": msg["id"], "discard": msg["options"][0]}
        out.write(json.dumps(reply) + "\n")
        out.flush()
    elif kind == "start":
        ready = {"type": "ready", "name": "bench"}
        if not protocol_1:
            ready["protocol"] = 2
        out.write(json.dumps(ready) + "\n")
        out.flush()
    elif kind in ("end", "cpu"):          # 'cpu' is the echo parent's question
        print(f"cpu {time.process_time():.9f}", file=sys.stderr if kind == "end" else out, flush=True)
    elif kind == "quit":
        break
"""

Batch = tuple[int, bytes, int]    # (seat, the bytes written at once, size of the request line)


def spec_for(bot: Path | Sequence[str], seed: int, seats: int, protocol: int, log_dir: str) -> MatchSpec:
    """A match of ``bot`` (a Python script, or a whole command) against itself."""
    argv = [sys.executable, str(bot)] if isinstance(bot, Path) else list(bot)
    argv += ["--protocol-1"] if protocol == 1 else []
    # No sandbox: the bot's pid is then the Python process that reports its CPU.
    bots = tuple(SeatSpec.command(argv, name=f"bot{i}", sandbox=SandboxPolicy(mode="none"))
                 for i in range(seats))
    return MatchSpec(f"bench-{seed}", bots, RULES, seed=seed, log_dir=log_dir,
                     time=TimeControl(startup_seconds=10, per_decision_seconds=5))


def record(spec: MatchSpec) -> list[Batch]:
    """Play once with ``BotProcess.request_data`` wrapped to keep what each
    decision writes: the notices since the seat's last request, then the
    request, in one write."""
    batches: list[Batch] = []
    original = BotProcess.request_data
    seats = {f"bot{i}": i for i in range(len(spec.seats))}

    def spy(self: BotProcess, data: bytes, *args: Any) -> tuple[Any, float]:
        request = data[data.rfind(b"\n", 0, len(data) - 1) + 1:]
        assert request.startswith(b'{"type":"request"'), request[:40]
        batches.append((seats[self.name], data, len(request)))
        return original(self, data, *args)

    BotProcess.request_data = spy  # type: ignore[method-assign]
    try:
        run_match(spec)
    finally:
        BotProcess.request_data = original  # type: ignore[method-assign]
    return batches


class EchoFloor:
    """Warm echo children and the bare loop that feeds them."""

    def __init__(self, bot: Path | Sequence[str], seats: int) -> None:
        argv = [sys.executable, str(bot)] if isinstance(bot, Path) else list(bot)
        self.children = [subprocess.Popen(argv, stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, bufsize=0) for _ in range(seats)]
        self.fds = [p.stdin.fileno() for p in self.children]  # type: ignore[union-attr]
        self.readers = [os.fdopen(os.dup(p.stdout.fileno()), "rb") for p in self.children]  # type: ignore[union-attr]
        for seat in range(seats):            # warm up: interpreter start, first parse
            os.write(self.fds[seat], b'{"type":"request","id":0,"kind":"buy","options":[true,false]}\n')
            self.readers[seat].readline()

    def children_cpu(self) -> float:
        total = 0.0
        for fd, reader in zip(self.fds, self.readers):
            os.write(fd, b'{"type":"cpu"}\n')
            total += float(reader.readline().split()[1])
        return total

    def run(self, batches: list[Batch]) -> tuple[float, float, float]:
        """(parent CPU, children CPU, wall seconds) for one replay."""
        child0 = self.children_cpu()
        w0 = time.perf_counter()
        parent = self.replay(batches)
        wall = time.perf_counter() - w0
        return parent, self.children_cpu() - child0, wall

    def replay(self, batches: list[Batch]) -> float:
        """The parent's CPU seconds for one replay (children that cannot report theirs too)."""
        t0 = time.process_time()
        fds, readers = self.fds, self.readers
        for seat, data, _ in batches:
            view = memoryview(data)
            while view:
                view = view[os.write(fds[seat], view):]
            readers[seat].readline()
        return time.process_time() - t0

    def close(self) -> None:
        for p, reader in zip(self.children, self.readers):
            p.stdin.close()  # type: ignore[union-attr]
            p.wait(timeout=5)
            reader.close()
            p.stdout.close()  # type: ignore[union-attr]


@dataclass
class Pair:
    ratio: float
    arena_us: float
    parent_us: float
    bots_us: float
    children_us: float
    wall_ratio: float


def subject(spec: MatchSpec, pool: BotPool) -> tuple[int, float, list[float], float]:
    """(decisions, arena CPU, each bot's CPU at the end, wall) of one pooled match."""
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    result = run_match(spec, pool)
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    assert all(result.reused) and not result.faults, (result.reused, result.faults)
    arena = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    # The paths the match writes to, not ``result.stderr_logs``: a log exists only once its
    # reader thread has written the bot's first stderr byte, which may come after run_match returns.
    after = [stats_cpu(spec.stderr_log(i)) for i in range(len(spec.seats))]
    return result.decisions, arena, after, result.wall_seconds - result.startup_seconds


def stats_cpu(path: str | None) -> float:
    """The CPU a bot reported on stderr at 'end' (its log is written by a
    reader thread: wait for the line)."""
    assert path is not None
    deadline = time.monotonic() + 5.0
    while True:
        text = Path(path).read_text() if os.path.exists(path) else ""
        if "cpu " in text and text.endswith("\n"):
            return float(text.split("cpu ")[-1].split()[0])
        if time.monotonic() > deadline:
            raise RuntimeError(f"no CPU report in {path}")
        time.sleep(0.005)


def minimal_reply(d: Any, req_id: int) -> bytes:
    """The reply the benchmark bots give to decision ``d``: the stock, no buy, the first card."""
    if d.kind == "draw":
        return b'{"id": %d, "draw": "stock"}' % req_id
    if d.kind == "buy":
        return b'{"id": %d, "buy": false}' % req_id
    return b'{"id": %d, "discard": "%s"}' % (req_id, d.options[0].text.encode())


def in_process(seeds: list[int], seats: int, protocol: int) -> tuple[float, float]:
    """(codec, engine) CPU per decision of the same matches without processes:
    the codec makes the notices and the request and reads a minimal reply;
    the engine answers ``decision()``, ``view()`` and ``apply()``.  The
    request needs one ``view()``: it is timed apart (a second call on the same
    state) and counted as the engine's."""
    from arena.match import fallback_action
    from arena.protocol.encoder import MatchEncoder
    from arena.protocol.messages import decode_reply_line, reply_action
    from arena.shanghai.game import Game
    from arena.shanghai.ruleset import Ruleset
    rules = Ruleset.from_mapping(RULES)
    codec = engine = 0.0
    decisions = 0
    clock = time.process_time
    for seed in seeds:
        game = Game.seeded(rules, seats, seed)
        enc = MatchEncoder(game)
        sent = [1] * seats
        while True:
            t0 = clock()
            d = game.decision()
            if d is None:
                break
            tv = clock()
            game.view(d.seat)
            t1 = clock()
            view = t1 - tv
            _data, sent[d.seat] = enc.request_data(sent[d.seat], decisions, d, protocol)
            action = fallback_action(d)
            line, _ = decode_reply_line(minimal_reply(d, decisions))
            action = reply_action(line, decisions, d.kind)
            t2 = clock()
            game.apply(action, d.seat)
            t3 = clock()
            codec += t2 - t1 - view
            engine += (t1 - t0) + (t3 - t2)
            decisions += 1
    return codec / decisions * 1e6, engine / decisions * 1e6


def spread(values: list[float], fmt: str) -> str:
    return (f"{format(statistics.median(values), fmt)} "
            f"(min {format(min(values), fmt)}, max {format(max(values), fmt)})")


@dataclass
class Measured:
    requests: list[int]           # every request line's size, sorted
    written: list[int]            # all bytes written per decision (notices + request)
    match_request_means: list[float]   # each match's mean request line
    pairs: list[Pair]


def measure(pairs_n: int, seats: int, protocol: int, echo: Any = print, pin: bool = True) -> Measured:
    """Record one match per seed, then ``pairs_n`` interleaved floor/subject
    pairs; ``pin``: all on one CPU, as a tournament's worker plays."""
    before = affinity.pin(affinity.plan(1)[0]) if pin else None
    try:
        return _measure(pairs_n, seats, protocol, echo)
    finally:
        affinity.unpin(before)


def _measure(pairs_n: int, seats: int, protocol: int, echo: Any) -> Measured:
    tmp = tempfile.mkdtemp(prefix="bench-protocol-")
    bot = Path(tmp) / "bench_bot.py"
    bot.write_text(BOT)
    seeds = list(range(1, pairs_n + 1))
    recorded = {s: record(spec_for(bot, s, seats, protocol, f"{tmp}/rec")) for s in seeds}
    requests = sorted(size for s in seeds for _, _, size in recorded[s])
    written = [len(data) for s in seeds for _, data, _ in recorded[s]]
    means = [statistics.fmean(size for _, _, size in recorded[s]) for s in seeds]
    pairs: list[Pair] = []
    floor = EchoFloor(bot, seats)
    with BotPool() as pool:
        warm_spec = spec_for(bot, 0, seats, protocol, f"{tmp}/warm")
        run_match(warm_spec, pool)
        cpu = [stats_cpu(warm_spec.stderr_log(i)) for i in range(seats)]
        try:
            for seed in seeds:
                batches = recorded[seed]
                parent, children, floor_wall = floor.run(batches)
                n, arena, after, wall = subject(spec_for(bot, seed, seats, protocol, f"{tmp}/s"), pool)
                assert n == len(batches), (n, len(batches))
                bots = sum(after) - sum(cpu)
                cpu = after
                floor_rate = n / (parent + children)
                match_rate = n / (arena + bots)
                pairs.append(Pair(match_rate / floor_rate, arena / n * 1e6, parent / n * 1e6,
                                  bots / n * 1e6, children / n * 1e6, floor_wall / wall))
                echo(f"  seed {seed}: {n} decisions; arena {arena / n * 1e6:5.1f} us, bots "
                     f"{bots / n * 1e6:5.1f} us | echo parent {parent / n * 1e6:5.1f} us, children "
                     f"{children / n * 1e6:5.1f} us per decision; ratio {pairs[-1].ratio:.2f}")
        finally:
            floor.close()
    return Measured(requests, written, means, pairs)


def results(pairs_n: int = 5, seats: int = 4, protocol: int = 2, pin: bool = True) -> list[Figure]:
    """Arena CPU per decision, mean request line (one sample per match) and
    match rate / echo rate, with the issue's aims; ``pin``: as tournaments
    play (one CPU per match), else as the scheduler places the processes."""
    m = measure(pairs_n, seats, protocol, echo=lambda _line: None, pin=pin)
    command = (f"python benchmarks/protocol.py --pairs {pairs_n} --seats {seats} --protocol {protocol}"
               + ("" if pin else " --no-affinity"))
    where = "one CPU per match" if pin else "no affinity"
    return [
        Figure(f"arena CPU per decision, {seats} seats (subprocess bots, {where})",
               tuple(p.arena_us for p in m.pairs), "us", 40.0, higher_is_better=False, command=command),
        Figure("mean request line, per match", tuple(m.match_request_means), "B", 2048.0,
               higher_is_better=False, command=command, fmt=",.0f"),
        Figure(f"match decision rate / echo round-trip rate, per CPU-second ({where})", tuple(p.ratio for p in m.pairs),
               "x", 0.8, higher_is_better=True, command=command, fmt=".2f"),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=7, help="floor/subject pairs, at least 5")
    ap.add_argument("--seats", type=int, default=4)
    ap.add_argument("--protocol", type=int, choices=(1, 2), default=2, help="what the bots ask for")
    ap.add_argument("--no-affinity", dest="pin", action="store_false",
                    help="leave the processes to the scheduler (default: all on one CPU, as a tournament plays)")
    args = ap.parse_args()
    if args.pairs < 5:
        ap.error("--pairs: at least 5")
    print(f"{args.seats} seats, protocol {args.protocol}, contracts {RULES['contracts']}, "
          f"{args.pairs} floor/subject pairs, one match each, "
          + ("all on one CPU (as a tournament plays)" if args.pin else "no affinity"))
    m = measure(args.pairs, args.seats, args.protocol, pin=args.pin)
    requests, pairs = m.requests, m.pairs
    p95 = requests[int(0.95 * (len(requests) - 1))]
    print(f"request line: mean {statistics.fmean(requests):,.0f} B, p95 {p95:,} B, max {requests[-1]:,} B; "
          f"all bytes written per decision (notices + request): mean {statistics.fmean(m.written):,.0f} B")
    print(f"arena CPU per decision:        {spread([p.arena_us for p in pairs], '.1f')} us "
          f"(echo parent per round trip: {spread([p.parent_us for p in pairs], '.1f')} us)")
    print(f"bots' CPU per decision:        {spread([p.bots_us for p in pairs], '.1f')} us "
          f"(echo children per round trip: {spread([p.children_us for p in pairs], '.1f')} us)")
    print(f"match rate / floor rate, per CPU-second of all processes: {spread([p.ratio for p in pairs], '.2f')}")
    codec, engine = in_process(list(range(1, args.pairs + 1)), args.seats, args.protocol)
    print(f"of the arena's CPU, measured in-process on the same matches: codec {codec:.1f} us, "
          f"engine (decision, view, apply) {engine:.1f} us per decision; the rest is the process "
          f"layer (pipes, polls, stamps) and the match loop")
    print(f"(the same per wall-clock second: {spread([p.wall_ratio for p in pairs], '.2f')})")


if __name__ == "__main__":
    main()
