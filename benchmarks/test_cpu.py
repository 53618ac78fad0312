"""Where the test suite's CPU goes: by test module and by test.

Not a test.  Run the suite with ``ARENA_TEST_CPU=DIR`` set (tests/conftest.py
then writes each test's CPU and wall seconds to DIR), then:

    python benchmarks/test_cpu.py DIR [--top 30]

Prints the total CPU and worker wall seconds, the modules by CPU, and the
most expensive tests.  CPU is the worker's own plus its reaped children's
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
    args = ap.parse_args()
    tests: list[tuple[str, float, float]] = []
    for path in sorted(args.dir.glob("*.tsv")):
        for line in path.read_text(encoding="utf-8").splitlines():
            nodeid, own, kids, wall = line.split("\t")
            tests.append((nodeid, float(own) + float(kids), float(wall)))
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


if __name__ == "__main__":
    main()
