"""Every figure issue 9 names, in one command and one table: figure, target,
measured median [min .. max], met, and the command that measures it alone.

Not a test.  Run:
    python benchmarks/all.py [--pairs 5] [--quick] [--json FILE] [--fastchess PATH]

The benchmarks run one after another, never two at once (they would slow each
other down), each with its floor and subject interleaved in ``--pairs`` pairs:

- benchmarks/protocol.py: the arena's CPU per decision at 4 seats (<= 40 us),
  the mean request line (<= 2 KB), and a match's decision rate against a bare
  echo loop moving the same bytes (>= 0.8x); on one CPU, as a tournament
  plays a match, and again with no affinity (floor and subject alike);
- benchmarks/decision_floor.py: the least CPU per decision an arena in this
  Python spends, the echo loop with the engine's and codec's work and no
  process layer, and with the process layer (information; no aim);
- benchmarks/affinity.py: the same match pinned against free, as ratios of
  the arena's CPU, the bots' CPU and the wall time (information; no aim);
- benchmarks/workers.py: arena's peak PSS at --jobs 2 (<= 60 MB) and the CPU
  of --jobs 2 against --jobs 1 (<= 1.03x), playing tournaments/demo.yaml
  through the ``arena`` command, with the bot processes each started; then
  the same ratios (information) for benchmarks/tournaments/five_random.yaml,
  whose 4 rotations per table two workers can share without starting more
  bot processes than one (the demo's 3 cannot: 12 against 9);
- benchmarks/engine.py: decisions per CPU-second in-process, random players
  at 4 seats (>= 40,000) and 8 seats (>= 30,000), greedy at 4 (>= 20,000);
  and each against the passive floor of its pair (information: the host's
  speed, which moves the rates from run to run, cancels out of it);
- benchmarks/tournament.py: the start-up share of match time with process
  reuse, as tournaments run (information; no aim);
- benchmarks/botstart.py: the CPU of a shipped Python bot's start (to its
  ``ready`` line, then quit) against the same interpreter answering
  ``start`` with only the standard json module (information; no aim): what
  every bot process a tournament starts costs before it plays;
- benchmarks/peer.py, with ``--fastchess PATH`` (a fastchess binary built
  from its public source): the arena's CPU per decision against fastchess's
  per move, trivial C and Python players on both sides, 2 seats, no sandbox,
  unpinned (issue 34: <= 1.0x), with each one's CPU (information).

"measured" is the median over the pairs with the min and max; "met" compares
the median with the target.  Each script's own ``main()`` prints more (the
floors, per-pair lines); the table's last column is the command for that.

The default run takes about 3 to 4 minutes on a 2-core machine (196 s wall
measured under ``nice -n 19`` with other work running; most of it the --jobs 1
/ --jobs 2 tournaments of workers.py and tournament.py, 20 runs of the demo);
``--quick`` (smaller workloads: 2 matches per engine sample, the demo
tournament cut to two short hands; still --pairs pairs) about 75 s, for a
smoke run, not for figures.  ``--json FILE`` also writes every figure with
all its samples.  A benchmark that fails is reported in one line and the
others still run; the exit status is then 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))  # the sibling benchmarks, when imported (as the tests do)

from figures import Figure  # noqa: E402
from tabulate import tabulate  # noqa: E402

HEADERS = ("figure", "target", "measured: median [min .. max]", "met", "alone: command")
DEMO = ROOT / "tournaments" / "demo.yaml"
FIVE = HERE / "tournaments" / "five_random.yaml"


def met_text(figure: Figure) -> str:
    met = figure.met
    return "-" if met is None else "met" if met else "NOT met"


def table(figures: Iterable[Figure]) -> str:
    """The table all.py prints: one row per figure."""
    rows = [(f.name, f.target, f.measured, met_text(f), f.command) for f in figures]
    return tabulate(rows, headers=HEADERS, tablefmt="github", disable_numparse=True)


def quick_tournament(directory: Path, source: Path = DEMO) -> Path:
    """``source`` (tournaments/demo.yaml) cut to two short hands per match,
    written into ``directory`` (its bots still run from the repository's root)."""
    relative = "../.." if source.parent != DEMO.parent else ".."
    text = source.read_text(encoding="utf-8").replace(f"dir: {relative}", f"dir: {json.dumps(str(ROOT))}")
    path = directory / f"quick-{source.name}"
    path.write_text(text + "\nrules:\n  contracts: [2S3, S3+R4]\n  deal_size: 7\n", encoding="utf-8")
    return path


Bench = tuple[str, Callable[[], list[Figure]]]


def benches(pairs: int, quick: bool, tmp: Path, fastchess: str | None = None) -> list[Bench]:
    """(name, the call that measures it), in the order they run; the peer
    (``benchmarks/peer.py``) only with a fastchess binary."""
    import affinity
    import botstart
    import decision_floor
    import engine
    import peer
    import protocol
    import tournament
    import workers
    matches = 2 if quick else 10

    def on(file_results: Callable[[int, Path], list[Figure]], source: Path = DEMO) -> Callable[[], list[Figure]]:
        # The quick tournament is a temporary file: name what it was made from.
        if not quick:
            return lambda: file_results(pairs, source)
        file, shown = quick_tournament(tmp, source), str(source.relative_to(ROOT))
        return lambda: [replace(f, command=f"{f.command.replace(str(file), shown)} (--quick: two short hands)")
                        for f in file_results(pairs, file)]

    def four_seats(pairs: int, file: Path) -> list[Figure]:
        """The --jobs ratios where 4 rotations split evenly over 2 workers:
        information next to the demo's, whose 3 rotations cannot."""
        return [replace(f, name=f"{f.name}; {FIVE.stem} (4-seat tables)", aim=None)
                for f in workers.results(pairs, file) if f.unit == "x" and "host" not in f.name]

    return [
        ("protocol", lambda: protocol.results(pairs)),
        ("protocol", lambda: [f for f in protocol.results(pairs, pin=False) if f.unit != "B"]),
        ("decision_floor", lambda: decision_floor.results(pairs)),
        ("affinity", lambda: affinity.results(pairs)),
        ("workers", on(workers.results)),
        ("workers", on(four_seats, FIVE)),
        ("engine", lambda: engine.results(pairs, matches)),
        ("tournament", on(tournament.results)),
        ("botstart", lambda: botstart.results(pairs, starts=3 if quick else 10)),
    ] + ([("peer", lambda: peer.results(pairs, fastchess, matches=2 if quick else 8))] if fastchess else [])


def run_all(pairs: int, quick: bool, echo: Callable[[str], None] = print,
            fastchess: str | None = None) -> tuple[list[Figure], list[str]]:
    """The figures, and a line for each benchmark that failed (the others still run)."""
    figures: list[Figure] = []
    failed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="bench-all-") as tmp:
        for name, measure in benches(pairs, quick, Path(tmp), fastchess):
            t0 = time.perf_counter()
            try:
                got = measure()
            except (Exception, SystemExit) as exc:   # a benchmark's sys.exit("why") too
                reason = " ".join(str(exc).split()) or type(exc).__name__
                failed.append(f"{name}: failed: {reason}")
                echo(failed[-1])
                continue
            echo(f"{name}: {len(got)} figures in {time.perf_counter() - t0:.0f} s wall")
            figures += got
    return figures, failed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=5, help="interleaved floor/subject pairs per benchmark (at least 5)")
    ap.add_argument("--quick", action="store_true", help="smaller workloads: a smoke run, not figures to quote")
    ap.add_argument("--json", type=Path, metavar="FILE", help="also write every figure, with its samples, here")
    ap.add_argument("--fastchess", metavar="PATH", help="a fastchess binary: also the arena against it (peer.py)")
    args = ap.parse_args(argv)
    if args.pairs < 5:
        ap.error("--pairs must be at least 5")
    if args.json is not None and not args.json.parent.is_dir():   # say so now, not after the run
        ap.error(f"--json {args.json}: no directory {args.json.parent}")
    if args.fastchess is not None and not os.access(args.fastchess, os.X_OK):
        ap.error(f"--fastchess {args.fastchess}: not an executable file")
    start = time.perf_counter()
    print(f"issue 9's figures: {args.pairs} pairs per benchmark{', quick workloads' if args.quick else ''}; "
          "run the benchmarks on a quiet machine", flush=True)
    figures, failed = run_all(args.pairs, args.quick, echo=lambda line: print(line, flush=True),
                              fastchess=args.fastchess)
    print(table(figures))
    missed = [f.name for f in figures if f.met is False]
    print(f"{sum(f.met is True for f in figures)} of {sum(f.met is not None for f in figures)} targets met"
          f"{'; not met: ' + '; '.join(missed) if missed else ''} ({time.perf_counter() - start:.0f} s wall)")
    for line in failed:
        print(f"error: {line}", file=sys.stderr)
    if args.json is not None:
        try:
            args.json.write_text(json.dumps({"pairs": args.pairs, "quick": args.quick, "failed": failed,
                                             "figures": [f.to_json() for f in figures]}, indent=1) + "\n")
        except OSError as exc:
            print(f"error: cannot write {args.json}: {exc.strerror}", file=sys.stderr)
            return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
