"""tests/lanes.py against xdist's own work-stealing scheduler: the shares it
hands its workers first are the ones ``deal`` cut, each led by its long
tests, and the long waits are spread over the workers, not queued on one."""

from __future__ import annotations

import random
from types import SimpleNamespace

import lanes
import pytest
from xdist.scheduler import WorkStealingScheduling


class FakeWorker:
    def __init__(self, name: str) -> None:
        self.name, self.sent, self.shutting_down = name, [], False
        self.gateway = SimpleNamespace(id=name)

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.extend(indices)


def first_shares(collection: list[str], workers: int) -> list[list[str]]:
    config = SimpleNamespace(getvalue=lambda name: {"tx": [f"{workers}*popen"]}[name])
    scheduler = WorkStealingScheduling(config)      # type: ignore[arg-type]
    nodes = [FakeWorker(f"gw{i}") for i in range(workers)]
    for node in nodes:
        scheduler.add_node(node)                    # type: ignore[arg-type]
    for node in nodes:
        scheduler.add_node_collection(node, collection)   # type: ignore[arg-type]
    scheduler.schedule()
    return [[collection[i] for i in node.sent] for node in nodes]


@pytest.mark.parametrize("count, workers", [(1817, 4), (40, 3), (9, 4), (100, 8)])
def test_each_worker_starts_with_its_long_tests_and_they_are_spread(count: int, workers: int) -> None:
    picks = random.Random(count).sample(range(count), min(count // 3, 12))
    seconds = [0.0] * count
    for rank, index in enumerate(sorted(picks)):
        seconds[index] = 10.0 + 7 * rank                  # the longest last in file order, as test_ray_nodes
    names = [f"t{i:04d}" for i in range(count)]
    long = {names[i]: seconds[i] for i in picks}
    order = lanes.deal(names, seconds, workers)
    assert sorted(order) == names                          # a reordering, nothing lost or doubled
    shares = first_shares(order, workers)
    assert [len(s) for s in shares] == lanes.share_sizes(count, workers)
    loads = []
    lanes_ = lanes.long_lanes(workers)
    for lane, share in enumerate(shares):
        leading = [n for n in share if n in long]
        if lane >= lanes_:                                 # the short lanes: no long test
            assert not leading
        else:
            assert share[:len(leading)] == leading         # long ones first, longest first
            assert leading == sorted(leading, key=lambda n: -long[n])
            loads.append(sum(long[n] for n in leading))
        rest = [n for n in share if n not in long]
        assert rest == sorted(rest)                        # the others keep their order
    # Longest first to the least loaded of the long lanes: no lane's long
    # tests exceed another's by more than the longest one.
    assert max(loads) - min(loads) <= max(long.values())
    assert sum(loads) == sum(long.values())              # every long test in a long lane


def test_without_long_tests_the_order_is_the_file_order() -> None:
    names = [f"t{i}" for i in range(50)]
    assert lanes.deal(names, [0.0] * 50, 4) == names


def test_long_tests_beyond_the_long_lanes_room_go_with_the_others() -> None:
    names = [f"t{i}" for i in range(8)]
    order = lanes.deal(names, [5.0] * 6 + [0.0] * 2, 4)        # room for 4 in the 2 long lanes
    assert sorted(order) == names
    assert order[:4] == ["t0", "t2", "t1", "t3"]              # the two lanes, each led by two
