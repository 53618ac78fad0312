"""The memory watchdog's scan of unsandboxed bots (``sandbox: none``) with
1,000 idle processes on the machine: the pass over every process of the
host it made before (the floor), against what it reads now (the subject):
the bot's own cgroup where arena can make one, else its own process tree.
Not a test.

Run: python benchmarks/watchdog.py [--pairs 5] [--bots 4] [--scans 200] [--idle 1000]

The watchdog (``arena.process.confine.limits.MemoryWatchdog``) checks every watched
bot every 0.25 s, in every worker process.  ``--idle`` sleeping processes
stand for a busy host; ``--bots`` stand-in bots (a shell that forks two
sleeping children, in a session of its own, as ``sandbox: none`` starts a
bot), each with a turn clock as the turn guard gives it, are watched at once.
Floor and subject alternate, ``--pairs`` pairs, ``--scans`` scans each;
printed: CPU ms per scan (``time.process_time``), median [min .. max], the
median ratio floor / subject with its min and max, and the CPU per decision
for a bot deciding every 10 ms (the demo's bots' pace on a quiet machine).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import time

from engine import pairs, ratio  # benchmarks/engine.py

from arena.process.confine import cgroups, limits
from arena.process.confine.turns import TurnClock


def per_scan(watchdog: limits.MemoryWatchdog, scans: int, tree: bool) -> float:
    """CPU ms per ``check()``: by the bots' own files (cgroup or tree), or,
    as before, by a pass over /proc (no children lists, no cgroup)."""
    saved = limits.CHILDREN_LISTS
    groups = {pgid: w.cgroup for pgid, w in watchdog._groups.items()}
    limits.CHILDREN_LISTS = tree
    if not tree:
        for w in watchdog._groups.values():
            w.cgroup = None
    try:
        t0 = time.process_time()
        with watchdog._lock:
            for _ in range(scans):
                watchdog.check()
        return (time.process_time() - t0) / scans * 1000
    finally:
        limits.CHILDREN_LISTS = saved
        for pgid, group in groups.items():
            watchdog._groups[pgid].cgroup = group


def watched(bots: list[subprocess.Popen[bytes]]) -> tuple[limits.MemoryWatchdog, list[cgroups.BotCgroup]]:
    """A watchdog of the stand-in bots as ``sandbox: none`` bots, each in a
    cgroup of its own where this machine gives one."""
    watchdog = limits.MemoryWatchdog()
    made = []
    found = cgroups.backend()
    for bot in bots:
        group = None
        if found is not None:
            group = found.create(1 << 40, 1000)
            for pid in [bot.pid, *map(int, open(f"/proc/{bot.pid}/task/{bot.pid}/children").read().split())]:
                group.attach(pid)
            made.append(group)
        clock = TurnClock(time.monotonic())
        watchdog._groups[bot.pid] = limits._Watched(f"bot{bot.pid}", 1 << 40, lambda _r: None, None, 1000,
                                                    clock, None, None, group)
    return watchdog, made


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--bots", type=int, default=4)
    ap.add_argument("--scans", type=int, default=200)
    ap.add_argument("--idle", type=int, default=1000)
    args = ap.parse_args()
    if not limits.CHILDREN_LISTS and cgroups.backend() is None:
        raise SystemExit("no /proc children lists and no cgroups here: the watchdog scans /proc")
    idle = [subprocess.Popen(["sleep", "600"]) for _ in range(args.idle)]
    bots = [subprocess.Popen(["sh", "-c", "sleep 600 & sleep 600 & wait"], start_new_session=True)
            for _ in range(args.bots)]
    made: list[cgroups.BotCgroup] = []
    try:
        time.sleep(0.3)          # let each shell fork its children
        watchdog, made = watched(bots)
        scan, own = pairs(lambda _i: per_scan(watchdog, args.scans, False),
                          lambda _i: per_scan(watchdog, args.scans, True), args.pairs)
    finally:
        for bot in bots:
            os.killpg(bot.pid, 9)
            bot.wait()
        for proc in idle:
            proc.kill()
            proc.wait()
        for group in made:
            cgroups.release(group)
    processes = sum(1 for name in os.listdir("/proc") if name.isdigit())
    found = cgroups.backend()
    how = found.describe() if found is not None else "their process trees"
    print(f"{args.bots} watched bots (sandbox: none), {args.idle} idle processes started "
          f"({processes} on the machine after), {args.pairs} pairs of {args.scans} scans")
    print(f"  floor (a pass over /proc, before):  {statistics.median(scan):.3f} ms per scan "
          f"[{min(scan):.3f} .. {max(scan):.3f}]")
    print(f"  subject (the bots' own: {how}):  {statistics.median(own):.3f} ms per scan "
          f"[{min(own):.3f} .. {max(own):.3f}]")
    print(f"  floor / subject: {ratio(scan, own)}")
    # 4 scans a second; a bot deciding every 10 ms takes 25 decisions a scan.
    per = [s * 1000 / args.bots / 25 for s in scan]
    per_own = [s * 1000 / args.bots / 25 for s in own]
    print(f"  per decision of a bot deciding every 10 ms: {statistics.median(per):.1f} us before, "
          f"{statistics.median(per_own):.2f} us now")


if __name__ == "__main__":
    main()
