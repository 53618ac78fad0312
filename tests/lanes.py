"""The order the suite's tests are handed to xdist's workers in.

``--dist worksteal`` gives each of N workers one contiguous share of the
collected tests at the start, then moves tests from the end of the longest
queue to a worker that has run dry.  Left in file order, every Ray test
fell into one share: one worker ran them one after another for 630 s while
the other three had finished at 558 s (2 cores, 4 workers).  A test marked
``@pytest.mark.long(SECONDS)`` (its wall time on a quiet 2-core machine,
roughly) is dealt instead to the lane whose long tests add up to least,
longest first, and leads its share; the other tests, in file order, fill the
shares up to the sizes worksteal cuts.  Nothing but the order changes.

The long tests go to half the workers (``long_lanes``), not all: they
mostly wait (on Ray, on timeouts), and when every worker began with one the
two cores stood half idle for the first 80 s of the run (benchmarks/
test_cpu.py --timeline); the other workers start on the short tests and use
those waits.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import TypeVar

Item = TypeVar("Item")


def share_sizes(count: int, workers: int) -> list[int]:
    """The sizes of the shares worksteal's first schedule cuts: the i-th
    idle worker takes len(pending) // (workers - i) of what is left."""
    sizes, left = [], count
    for i in range(workers):
        size = left // (workers - i)
        sizes.append(size)
        left -= size
    return sizes


def long_lanes(workers: int) -> int:
    """How many workers' shares the long tests are dealt to."""
    return max(1, workers // 2)


def deal(items: Sequence[Item], seconds: Sequence[float], workers: int) -> list[Item]:
    """``items`` reordered into ``workers`` shares, the first ``long_lanes``
    of them each led by the long ones (``seconds[i] > 0``) dealt to it; the
    rest keep their order."""
    sizes = share_sizes(len(items), workers)
    shares: list[list[Item]] = [[] for _ in sizes]
    heap = [(0.0, lane) for lane in range(long_lanes(workers))]
    longest_first = sorted((i for i, s in enumerate(seconds) if s > 0), key=lambda i: -seconds[i])
    dealt: set[int] = set()
    for index in longest_first:
        while heap:
            load, lane = heapq.heappop(heap)
            if len(shares[lane]) < sizes[lane]:
                shares[lane].append(items[index])
                dealt.add(index)
                heapq.heappush(heap, (load + seconds[index], lane))
                break
    # (long tests beyond the long lanes' room, in a tiny run, go with the rest)
    rest = iter(item for i, item in enumerate(items) if i not in dealt)
    for lane, size in enumerate(sizes):
        shares[lane].extend(next(rest) for _ in range(size - len(shares[lane])))
    return [item for share in shares for item in share]
