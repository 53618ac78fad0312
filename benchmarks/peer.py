"""The arena's CPU per decision against a real peer: fastchess, the C++ runner
chess engine testers use (issue 34).  Not a test.

Run: python benchmarks/peer.py [--fastchess PATH] [--pairs 5] [--matches 8] [--plies N]

fastchess is in no package index: build it from its public source
(``make -j2`` in a checkout of Disservin/fastchess; a C++17 compiler) and give
the binary with ``--fastchess``.  Without one, the arena's own echo floor
(``protocol.EchoFloor``: a bare loop writing the same bytes to the same bots,
one blocking line read each) stands in for the peer, and the output says so.

Both runners play with trivial players that answer at once, one kind in C
(compiled here with ``cc``) and one in Python, 2 seats, no sandbox, no CPU
affinity, the players kept between games (fastchess's engine cache, the
arena's ``BotPool``):

- fastchess: two UCI engines that play a fixed legal line
  (``peer_line.txt``: 1,000 plies with no capture, check or repeated
  position, a pawn move at least every 60 plies; ``--make-line`` writes it
  again, with python-chess) by counting the moves of ``position``;
  ``-maxmoves`` ends each game as a draw after ``--plies`` plies (default: the
  decisions of one arena match, so a game and a match are the same length);
- arena: ``run_match`` of a 2-seat match (``protocol.RULES``) between two
  bots that answer every request with the first legal option.

A sample is one fastchess process playing ``--matches`` games, or one fresh
``BotPool`` playing ``--matches`` matches: each starts its two players
once.  The CPU counted is the runner's own, every thread, not its players':
fastchess's utime + stime from /proc/PID/stat, read once it has exited and
before it is reaped (its children's are apart there); the arena's from
``getrusage(RUSAGE_SELF)`` around the matches (bots are children).  Peer and
arena alternate, ``--pairs`` pairs per language; printed: each one's CPU per
move or decision, median [min .. max], of it the arena's watchdog scans, and
the median ratio arena / peer with its min and max.  ``results()`` gives the
ratios (aim: <= 1.0) and the absolute figures (no aim) to
``benchmarks/all.py --fastchess PATH``.

The first line says whether the arena's process layer runs its optional C
part (``arena/process/_fastpipe.c``: a decision's write, wait and read in one
call); ``ARENA_PURE_PYTHON=1`` measures the Python path it stands in for.

``--idle N`` starts N sleeping processes first and keeps them for the run:
the arena's CPU per decision must not depend on what else runs on the host
(compare ``--idle 100`` with ``--idle 1000``; ``--idle-pairs 100 1000``
alternates the two within one run, the arena alone: issue 34's aim is a
ratio within 10 %).

``--one-cpu`` pins this process to one CPU before anything starts: fastchess,
its engines, the arena and its bots then all share it, as a tournament plays
each match (``arena.process.confine.affinity``; fastchess's own
``-use-affinity`` is not used).  The issue's aim is measured without it.

Each arena figure comes with its context switches per decision, every
thread's (``getrusage``): voluntary (it slept in its wait for a reply) and
involuntary (preempted: often by the bot it has just written to, on its own
CPU).  The arena's instructions per decision are the same with C and Python
bots (callgrind); what differs is what runs between its steps, a tiny C
program or an interpreter (docs/PERFORMANCE.md).
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine import pairs  # noqa: E402
from figures import Figure  # noqa: E402
from protocol import BOT, EchoFloor, record, spec_for  # noqa: E402

from arena.match import BotPool, run_match  # noqa: E402
from arena.process.confine.limits import WATCHDOG  # noqa: E402

HERE = Path(__file__).resolve().parent
LINE = HERE / "peer_line.txt"
SEATS = 2
_CLK_TCK = os.sysconf("SC_CLK_TCK")

# The UCI engines: the ply to play is the number of moves in ``position``.
C_ENGINE = r"""
#include <stdio.h>
#include <string.h>
static const char *LINE[] = {%s};
int main(void) {
    static char buf[1 << 16];
    size_t ply = 0;
    while (fgets(buf, sizeof buf, stdin)) {
        if (strncmp(buf, "position", 8) == 0) {
            const char *moves = strstr(buf, " moves");
            ply = 0;
            if (moves) for (const char *p = moves + 6; *p; p++) ply += *p == ' ';
        } else if (strncmp(buf, "go", 2) == 0) {
            printf("bestmove %%s\n", LINE[ply]);
            fflush(stdout);
        } else if (strncmp(buf, "isready", 7) == 0) {
            fputs("readyok\n", stdout);
            fflush(stdout);
        } else if (strncmp(buf, "uci", 3) == 0 && (buf[3] == '\n' || buf[3] == '\r')) {
            fputs("id name trivial-c\nid author arena\nuciok\n", stdout);
            fflush(stdout);
        } else if (strncmp(buf, "quit", 4) == 0) {
            break;
        }
    }
    return 0;
}
"""
PY_ENGINE = r"""
import sys
line = open(sys.argv[1]).read().split()
ply = 0
out = sys.stdout
for command in sys.stdin:
    if command.startswith("position"):
        words = command.split()
        ply = len(words) - 3 if "moves" in words else 0
    elif command.startswith("go"):
        out.write(f"bestmove {line[ply]}\n")
        out.flush()
    elif command.startswith("isready"):
        out.write("readyok\n")
        out.flush()
    elif command.strip() == "uci":
        out.write("id name trivial-py\nid author arena\nuciok\n")
        out.flush()
    elif command.startswith("quit"):
        break
"""
# The arena bot in C: the first legal option, read from the compact lines the arena writes.
C_BOT = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) {
    static char buf[1 << 20];
    while (fgets(buf, sizeof buf, stdin)) {
        if (strncmp(buf, "{\"type\":\"request\"", 17) == 0) {
            long id = strtol(strstr(buf, "\"id\":") + 5, NULL, 10);
            const char *kind = strstr(buf, "\"kind\":\"") + 8;
            if (strncmp(kind, "draw", 4) == 0) {
                printf("{\"id\":%ld,\"draw\":\"stock\"}\n", id);
            } else if (strncmp(kind, "buy", 3) == 0) {
                printf("{\"id\":%ld,\"buy\":false}\n", id);
            } else {
                const char *card = strstr(buf, "\"options\":[\"") + 12;
                printf("{\"id\":%ld,\"discard\":\"%.*s\"}\n", id, (int)strcspn(card, "\""), card);
            }
            fflush(stdout);
        } else if (strncmp(buf, "{\"type\":\"start\"", 15) == 0) {
            fputs("{\"type\":\"ready\",\"name\":\"trivial-c\",\"protocol\":2}\n", stdout);
            fflush(stdout);
        } else if (strncmp(buf, "{\"type\":\"quit\"", 14) == 0) {
            break;
        }
    }
    return 0;
}
"""


@dataclass(frozen=True)
class Players:
    """One language's trivial players: the UCI engine's command and the arena bot's."""
    language: str
    engine: list[str]
    bot: list[str]


def build(tmp: Path) -> list[Players]:
    """Compile the C players with ``cc`` and write the Python ones into ``tmp``."""
    moves = LINE.read_text().split()
    sources = {"engine": C_ENGINE % ", ".join(f'"{m}"' for m in moves), "bot": C_BOT}
    for name, source in sources.items():
        (tmp / f"{name}.c").write_text(source)
        subprocess.run(["cc", "-O2", "-o", str(tmp / name), str(tmp / f"{name}.c")], check=True)
    (tmp / "engine.py").write_text(PY_ENGINE)
    (tmp / "bot.py").write_text(BOT)
    return [Players("C", [str(tmp / "engine")], [str(tmp / "bot")]),
            Players("Python", [sys.executable, str(tmp / "engine.py"), str(LINE)],
                    [sys.executable, str(tmp / "bot.py")])]


def fastchess_command(binary: str, engine: list[str], games: int, plies: int) -> list[str]:
    args = [f"args={' '.join(engine[1:])}"] if len(engine) > 1 else []
    return [binary,
            "-engine", f"cmd={engine[0]}", *args, "name=white",
            "-engine", f"cmd={engine[0]}", *args, "name=black",
            "-each", "proto=uci", "st=10",
            "-rounds", str(games), "-games", "1", "-maxmoves", str(plies // 2), "-concurrency", "1"]


def own_cpu_at_exit(proc: subprocess.Popen[bytes]) -> float:
    """The CPU seconds of ``proc`` itself, every thread, not its children:
    read from /proc once it has exited, before it is reaped (then reaped)."""
    os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
    with open(f"/proc/{proc.pid}/stat", "rb") as f:
        data = f.read()
    fields = data[data.rfind(b")") + 2:].split()
    proc.wait()
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK     # utime, stime; cutime, cstime follow


def fastchess_sample(binary: str, engine: list[str], games: int, plies: int, tmp: Path) -> tuple[int, float]:
    """(moves, fastchess's own CPU seconds) of one run of ``games`` games."""
    out = tmp / "fastchess.out"
    with open(out, "wb") as sink:
        proc = subprocess.Popen(fastchess_command(binary, engine, games, plies), cwd=tmp,
                                stdout=sink, stderr=subprocess.STDOUT)
        cpu = own_cpu_at_exit(proc)
    text = out.read_text(errors="replace")
    finished = [line for line in text.splitlines() if line.startswith("Finished game")]
    if proc.returncode != 0 or len(finished) != games or not all("adjudication" in f for f in finished):
        tail = "\n".join(text.splitlines()[-5:])
        raise SystemExit(f"fastchess did not play {games} games of {plies} plies (exit {proc.returncode}):\n{tail}")
    return games * plies, cpu


class WatchdogMeter:
    """The CPU the watchdog's scans take (their thread's time, summed)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._lock = threading.Lock()

    @contextmanager
    def counting(self) -> Iterator[None]:
        check = WATCHDOG.check

        def timed() -> None:
            t0 = time.thread_time()
            check()
            with self._lock:
                self.seconds += time.thread_time() - t0

        WATCHDOG.check = timed  # type: ignore[method-assign]
        try:
            yield
        finally:
            del WATCHDOG.check


def arena_sample(bot: list[str], matches: int, first_seed: int, tmp: Path,
                 meter: WatchdogMeter) -> tuple[int, float, float, int, int]:
    """(decisions, the arena's CPU seconds, of it the watchdog's, its
    voluntary and its involuntary context switches) of ``matches`` matches in
    a fresh pool: its bots started once, as fastchess's engines."""
    decisions = 0
    scans0 = meter.seconds
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    with BotPool() as pool:
        for seed in range(first_seed, first_seed + matches):
            result = run_match(spec_for(bot, seed, SEATS, 2, str(tmp / "logs")), pool)
            assert not result.faults, result.faults
            decisions += result.decisions
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    return (decisions, (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime), meter.seconds - scans0,
            r1.ru_nvcsw - r0.ru_nvcsw, r1.ru_nivcsw - r0.ru_nivcsw)


def frozen_as_a_worker() -> None:
    """What lives now is never walked by a full collection again: a
    tournament's worker is forked after ``gc.freeze()`` (``executors/local.py``),
    and a full collection here walked every module's objects (10-30 ms, one
    every 20 or so matches: 0.6-1 us a decision, in some samples and not others)."""
    gc.freeze()


@dataclass(frozen=True)
class Measured:
    language: str
    arena_us: list[float]
    watchdog_us: list[float]
    peer_us: list[float]
    sleeps: list[float]           # the arena's voluntary context switches per decision
    preempted: list[float]        # and its involuntary ones

    @property
    def ratios(self) -> list[float]:
        return [a / p for a, p in zip(self.arena_us, self.peer_us)]


def measure_language(players: Players, fastchess: str | None, pairs_n: int, matches: int,
                     plies: int | None, tmp: Path) -> Measured:
    """``pairs_n`` interleaved pairs of peer and arena samples for one language."""
    meter = WatchdogMeter()
    batches = record(spec_for(players.bot, 1, SEATS, 2, str(tmp / "rec")))
    game = plies if plies is not None else len(batches) + len(batches) % 2
    floor = None if fastchess is not None else EchoFloor(players.bot, SEATS)
    scans: list[float] = []
    sleeps: list[float] = []
    preempted: list[float] = []

    def peer(_i: int) -> float:
        if floor is not None:
            return sum(floor.replay(batches) for _ in range(matches)) / (matches * len(batches)) * 1e6
        assert fastchess is not None
        moves, cpu = fastchess_sample(fastchess, players.engine, matches, game, tmp)
        return cpu / moves * 1e6

    def arena(i: int) -> float:
        decisions, cpu, watchdog, slept, taken = arena_sample(players.bot, matches, 1 + i * matches, tmp,
                                                              meter)
        scans.append(watchdog / decisions * 1e6)
        sleeps.append(slept / decisions)
        preempted.append(taken / decisions)
        return cpu / decisions * 1e6

    with meter.counting():
        arena(-1)                     # warm: the first match imports and fills caches
        frozen_as_a_worker()
        scans.clear()
        sleeps.clear()
        preempted.clear()
        try:
            arena_us, peer_us = pairs(arena, peer, pairs_n)
        finally:
            if floor is not None:
                floor.close()
    return Measured(players.language, arena_us, scans, peer_us, sleeps, preempted)


def measure(fastchess: str | None, pairs_n: int, matches: int, plies: int | None,
            echo: Callable[[str], None] = print) -> list[Measured]:
    with tempfile.TemporaryDirectory(prefix="bench-peer-") as name:
        tmp = Path(name)
        found = []
        for players in build(tmp):
            found.append(measure_language(players, fastchess, pairs_n, matches, plies, tmp))
            echo(f"  {players.language}: {pairs_n} pairs done")
        return found


def spread(values: list[float], fmt: str = ".1f") -> str:
    return f"{format(statistics.median(values), fmt)} [{format(min(values), fmt)} .. {format(max(values), fmt)}]"


def results(pairs_n: int, fastchess: str, matches: int = 8) -> list[Figure]:
    """For ``benchmarks/all.py --fastchess PATH``: arena / fastchess per
    language (aim <= 1.0, issue 34), and each one's CPU (no aim)."""
    command = f"python benchmarks/peer.py --fastchess {fastchess} --pairs {pairs_n} --matches {matches}"
    figures = []
    for m in measure(fastchess, pairs_n, matches, None, echo=lambda _line: None):
        where = f"trivial {m.language} players, 2 seats, no sandbox, unpinned"
        figures += [
            Figure(f"arena CPU per decision / fastchess CPU per move ({where})", tuple(m.ratios), "x", 1.0,
                   higher_is_better=False, command=command, fmt=".2f"),
            Figure(f"arena CPU per decision ({where})", tuple(m.arena_us), "us", None,
                   higher_is_better=False, command=command),
            Figure(f"fastchess CPU per move ({where})", tuple(m.peer_us), "us", None,
                   higher_is_better=False, command=command),
        ]
    return figures


@contextmanager
def idle_processes(n: int) -> Iterator[None]:
    """``n`` sleeping processes for the duration: a busier host."""
    idle = [subprocess.Popen(["sleep", "3600"]) for _ in range(n)]
    try:
        if idle:
            time.sleep(1.0)       # let them load and settle: a busy host, not one starting up
        yield
    finally:
        for proc in idle:
            proc.kill()
        for proc in idle:
            proc.wait()


def measure_idle(pairs_n: int, matches: int, low: int, high: int) -> list[tuple[str, list[float], list[float]]]:
    """Per language: the arena's CPU per decision beside ``low`` and beside
    ``high`` sleeping processes, interleaved (the extra ones started and
    ended outside the samples)."""
    found = []
    with tempfile.TemporaryDirectory(prefix="bench-peer-") as name, idle_processes(low):
        tmp = Path(name)
        meter = WatchdogMeter()

        def sample(i: int, bot: list[str]) -> float:
            decisions, cpu, _scans, _slept, _taken = arena_sample(bot, matches, 1 + i * matches, tmp, meter)
            return cpu / decisions * 1e6

        def busier(i: int, bot: list[str]) -> float:
            with idle_processes(high - low):
                return sample(i, bot)

        for players in build(tmp):
            sample(-1, players.bot)
            frozen_as_a_worker()
            beside_high, beside_low = pairs(lambda i: busier(i, players.bot),
                                            lambda i: sample(i, players.bot), pairs_n)
            found.append((players.language, beside_low, beside_high))
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fastchess", metavar="PATH", help="a fastchess binary (default: the arena's echo floor)")
    ap.add_argument("--pairs", type=int, default=5, help="peer/arena pairs per language, at least 5")
    ap.add_argument("--matches", type=int, default=8, help="games or matches per sample")
    ap.add_argument("--plies", type=int, help="plies per fastchess game (default: the decisions of a match)")
    ap.add_argument("--idle", type=int, default=0, help="sleeping processes started first, kept for the run")
    ap.add_argument("--one-cpu", action="store_true",
                    help="both runners and their players on one CPU (this process pinned first)")
    ap.add_argument("--make-line", action="store_true", help=f"write {LINE.name} again (needs python-chess)")
    ap.add_argument("--idle-pairs", nargs=2, type=int, metavar=("LOW", "HIGH"),
                    help="no peer: the arena beside LOW and beside HIGH sleeping processes, interleaved")
    args = ap.parse_args()
    if args.make_line:
        LINE.write_text(" ".join(make_line(1000)) + "\n")
        return
    if args.pairs < 5:
        ap.error("--pairs: at least 5")
    if args.fastchess is not None and not os.access(args.fastchess, os.X_OK):
        ap.error(f"--fastchess {args.fastchess}: not an executable file")
    if args.plies is not None and not 2 <= args.plies <= len(LINE.read_text().split()):
        ap.error(f"--plies: 2 to the {len(LINE.read_text().split())} of {LINE.name}")
    pinned = one_cpu() if args.one_cpu else "unpinned"
    if args.idle_pairs is not None:
        low, high = sorted(args.idle_pairs)
        print(f"the arena alone beside {low} and beside {high} sleeping processes started here, {pinned}, "
              f"{args.pairs} pairs of {args.matches} matches", flush=True)
        for language, beside_low, beside_high in measure_idle(args.pairs, args.matches, low, high):
            print(f"{language}: arena {spread(beside_low)} us per decision beside {low}, "
                  f"{spread(beside_high)} beside {high}; ratio {high} / {low}: "
                  f"{spread([h / lo for h, lo in zip(beside_high, beside_low)], '.3f')}")
        return
    peer = "fastchess" if args.fastchess else "the arena's echo floor (no --fastchess binary given)"
    with idle_processes(args.idle):
        processes = sum(1 for name in os.listdir("/proc") if name.isdigit())
        print(f"arena against {peer}: 2 seats, no sandbox, {pinned}; {args.pairs} pairs of "
              f"{args.matches} games or matches; {processes} processes on the machine; {c_part()}", flush=True)
        found = measure(args.fastchess, args.pairs, args.matches, args.plies)
    unit = "per move" if args.fastchess else "per round trip"
    for m in found:
        print(f"{m.language}: arena {spread(m.arena_us)} us per decision "
              f"(of it the watchdog's scans {spread(m.watchdog_us, '.2f')}; "
              f"per decision it slept {spread(m.sleeps, '.2f')} and was preempted "
              f"{spread(m.preempted, '.2f')} times); "
              f"{'fastchess' if args.fastchess else 'echo floor'} {spread(m.peer_us)} us {unit}; "
              f"arena / {'fastchess' if args.fastchess else 'floor'} {spread(m.ratios, '.2f')}")


def one_cpu() -> str:
    """Pin this process to one CPU (its last usable one): every process it
    starts afterwards inherits it (fastchess and its engines, the arena's bots)."""
    cpu = max(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return f"everything on CPU {cpu}"


def c_part() -> str:
    """Whether the arena's decisions go through its C part (``arena/process/_fastpipe.c``)."""
    from arena.process import transport
    if transport._exchange is not None:
        return "the process layer's C part in use"
    if os.environ.get("ARENA_PURE_PYTHON"):
        return "the process layer in Python (ARENA_PURE_PYTHON)"
    return "the process layer in Python (its C part is not built)"


def make_line(plies: int, seed: int = 34) -> list[str]:
    """A legal line of ``plies`` plies that no rule ends: no capture, check or
    promotion, no position twice, a pawn move at least every 60 plies."""
    import chess  # python-chess, only for this
    rng = random.Random(seed)
    board = chess.Board()
    seen = {board._transposition_key()}
    line: list[str] = []
    while len(line) < plies:
        options = []
        for move in board.legal_moves:
            if board.is_capture(move) or board.gives_check(move) or move.promotion:
                continue
            board.push(move)
            if board._transposition_key() not in seen and not board.is_game_over(claim_draw=True):
                options.append(move)
            board.pop()
        pawn = [m for m in options if board.piece_type_at(m.from_square) == chess.PAWN]
        if board.halfmove_clock >= 60 and pawn:
            options = pawn
        elif len(pawn) < len(options):
            options = [m for m in options if m not in pawn]
        move = rng.choice(options)
        board.push(move)
        seen.add(board._transposition_key())
        line.append(move.uci())
    return line


if __name__ == "__main__":
    main()
