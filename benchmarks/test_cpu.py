"""Where the test suite's CPU goes: by test module and by test.

Not a test.  Run the suite with ``ARENA_TEST_CPU=DIR`` set (tests/conftest.py
then writes each test's CPU and wall seconds to DIR), then:

    python benchmarks/test_cpu.py DIR [--top 30]

Prints the total CPU and worker wall seconds, the modules by CPU, and the
most expensive tests; ``--timeline SECONDS``: for each slice of the run that
long, how many workers were in a test, in a long one (``@pytest.mark.long``
or over 30 s), and the CPU their tests took then (a test's CPU spread evenly
over its wall time): where the cores stood idle.  CPU is the worker's own plus its reaped children's
(bots, arenas started by the test, Ray's daemons once ended); on two cores
it bounds the suite's wall time from below (CPU / 2) whatever the load.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", type=Path)
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--timeline", type=float, default=0.0, metavar="SECONDS")
    args = ap.parse_args()
    tests: list[tuple[str, float, float]] = []
    spans: list[tuple[str, float, float, float]] = []      # worker, start, end, CPU
    for path in sorted(args.dir.glob("*.tsv")):
        for line in path.read_text(encoding="utf-8").splitlines():
            nodeid, own, kids, wall, *started = line.split("\t")
            tests.append((nodeid, float(own) + float(kids), float(wall)))
            if started:
                spans.append((path.stem, float(started[0]), float(started[0]) + float(wall), tests[-1][1]))
    by_module: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for nodeid, cpu, wall in tests:
        row = by_module[nodeid.split("::")[0]]
        row[0] += cpu
        row[1] += wall
        row[2] += 1
    total = sum(cpu for _, cpu, _ in tests)
    print(f"{len(tests)} tests: {total:.0f} CPU-s, {sum(w for _, _, w in tests):.0f} worker wall-s")
    print("\nmodules by CPU:")
    for module, (cpu, wall, n) in sorted(by_module.items(), key=lambda kv: -kv[1][0])[:args.top]:
        print(f"  {cpu:7.1f} CPU-s {cpu / total:5.1%}  {wall:7.1f} wall-s  {int(n):4d} tests  {module}")
    print(f"\n{args.top} tests by CPU:")
    for nodeid, cpu, wall in sorted(tests, key=lambda t: -t[1])[:args.top]:
        print(f"  {cpu:7.1f} CPU-s  {wall:7.1f} wall-s  {nodeid}")
    if args.timeline > 0 and spans:
        timeline(spans, args.timeline)


def timeline(spans: list[tuple[str, float, float, float]], step: float) -> None:
    """Per slice of ``step`` seconds: workers in a test, in a long test, and the cores' worth of CPU."""
    first = min(s for _, s, _, _ in spans)
    end = max(e for _, _, e, _ in spans)
    print(f"\ntimeline ({step:g} s slices; cores: the tests' CPU per second of the slice):")
    at = first
    while at < end:
        busy = long_ = 0.0
        cpu = 0.0
        for _worker, start, stop, used in spans:
            overlap = min(stop, at + step) - max(start, at)
            if overlap > 0:
                busy += overlap / step
                if stop - start > 30:
                    long_ += overlap / step
                cpu += used * overlap / max(stop - start, 1e-9)
        print(f"  {at - first:6.0f} s  workers {busy:4.1f}  in long tests {long_:4.1f}  cores {cpu / step:4.2f}")
        at += step


if __name__ == "__main__":
    main()
