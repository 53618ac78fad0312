"""The memory watchdog's scan: reading a sandboxed bot's own process tree
against a pass over every process of the machine.  Not a test.

Run: python benchmarks/watchdog.py [--pairs 5] [--bots 4] [--scans 200]

The watchdog (``arena.process.limits.MemoryWatchdog``) checks every watched
bot every 0.25 s, in every worker process.  A sandboxed bot's processes are
bubblewrap's descendants, read from /proc children lists (the subject); the
floor is what every scan did before, and what it still does for an
unsandboxed bot: one pass over every /proc/*/stat, with the PID namespace of
each process looked up.

``--bots`` stand-in bots (a shell that forks two sleeping children, in a
session of its own, as bubblewrap and its init are) are watched at once.
Floor and subject alternate, ``--pairs`` pairs, ``--scans`` scans each;
printed: CPU ms per scan (``time.process_time``), median [min .. max], the
median ratio floor / subject with its min and max, and how many processes
the machine runs (the floor's cost grows with it, the subject's does not).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time

from engine import pairs, ratio  # benchmarks/engine.py

from arena.process import limits


def per_scan(watchdog: limits.MemoryWatchdog, scans: int, tree: bool) -> float:
    """CPU ms per ``check()``, by process trees or by a pass over /proc."""
    saved = limits.CHILDREN_LISTS
    limits.CHILDREN_LISTS = tree
    try:
        t0 = time.process_time()
        with watchdog._lock:
            for _ in range(scans):
                watchdog.check()
        return (time.process_time() - t0) / scans * 1000
    finally:
        limits.CHILDREN_LISTS = saved


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--bots", type=int, default=4)
    ap.add_argument("--scans", type=int, default=200)
    args = ap.parse_args()
    if not limits.CHILDREN_LISTS:
        raise SystemExit("this kernel has no /proc children lists: the watchdog always scans")
    bots = [subprocess.Popen(["sh", "-c", "sleep 600 & sleep 600 & wait"], start_new_session=True)
            for _ in range(args.bots)]
    try:
        time.sleep(0.2)          # let each shell fork its children
        watchdog = limits.MemoryWatchdog()
        own_ns = limits.pid_namespace(os.getpid())
        for bot in bots:         # a PID namespace given: watched as a sandboxed bot
            watchdog._groups[bot.pid] = limits._Watched(f"bot{bot.pid}", 1 << 40, lambda _r: None,
                                                        own_ns, None)
        scan, tree = pairs(lambda _i: per_scan(watchdog, args.scans, False),
                           lambda _i: per_scan(watchdog, args.scans, True), args.pairs)
    finally:
        for bot in bots:
            os.killpg(bot.pid, 9)
            bot.wait()
    processes = sum(1 for name in os.listdir("/proc") if name.isdigit())
    print(f"{args.bots} watched bots, {processes} processes on the machine, {args.pairs} pairs of "
          f"{args.scans} scans")
    print(f"  floor (a pass over /proc):      {statistics.median(scan):.3f} ms per scan "
          f"[{min(scan):.3f} .. {max(scan):.3f}]")
    print(f"  subject (the bots' own trees):  {statistics.median(tree):.3f} ms per scan "
          f"[{min(tree):.3f} .. {max(tree):.3f}]")
    print(f"  floor / subject: {ratio(scan, tree)}")
    print(f"  at one scan per 0.25 s: {statistics.median(scan) * 4 / 10:.2f} % against "
          f"{statistics.median(tree) * 4 / 10:.3f} % of a CPU, per worker")


if __name__ == "__main__":
    main()
