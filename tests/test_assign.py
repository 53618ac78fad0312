"""Which match a worker plays next (executors/assign.py), and pools keyed by bot.

A process never plays two matches of one deal; with duplicate deals the
rotations of a table are adjacent in the schedule, so matches handed out in
schedule order make each worker start a process per rotation it gets.
"""

from __future__ import annotations

import random
import sys
from collections import Counter
from pathlib import Path

from arena.match import BotPool, MatchSpec, SeatSpec, pool_key, run_match
from arena.process import TimeControl
from arena.tournament.executors.assign import Assigner, PoolModel

GAMEBOTS = Path(__file__).parent / "gamebots"
MINIMAL = [sys.executable, str(GAMEBOTS / "minimal.py")]
RULES = {"contracts": ["2S3"]}


def _schedule(bots: int = 6, players: int = 4, deals: int = 2) -> list[MatchSpec]:
    """A duplicate round robin as ``schedule.py`` orders it: table, deal, rotation."""
    from itertools import combinations

    specs = []
    for t, table in enumerate(combinations(range(bots), players)):
        for d in range(deals):
            for r in range(players):
                seats = tuple(SeatSpec.command(MINIMAL, name=f"b{table[(i - r) % players]}")
                              for i in range(players))
                specs.append(MatchSpec(f"t{t}-r{r}-d{d}", seats, RULES, seed=1000 * t + d))
    return specs


def _processes(specs: list[MatchSpec], workers: int, lookahead: int, seed: int) -> int:
    """Bot processes started when ``workers`` workers play ``specs``, each free
    again after a random time (the same times for every lookahead)."""
    durations = random.Random(seed)
    assigner = Assigner(iter(specs), workers, lookahead)
    free = [0.0] * workers
    while True:
        worker = min(range(workers), key=free.__getitem__)
        if assigner.next_for(worker) is None:
            break
        free[worker] += durations.uniform(0.5, 1.5)
    return assigner.processes


def test_one_worker_plays_in_schedule_order_and_starts_a_process_per_rotation():
    specs = _schedule()
    assigner = Assigner(iter(specs), 1)
    order = [assigner.next_for(0) for _ in specs]
    assert order == specs and assigner.next_for(0) is None
    assert assigner.processes == 6 * 4     # 6 bots, 4 rotations each


def test_two_workers_start_fewer_processes_than_in_schedule_order():
    specs = _schedule()
    in_order = [_processes(specs, 2, 1, seed) for seed in range(20)]
    assigned = [_processes(specs, 2, 32, seed) for seed in range(20)]
    # Every match is handed out once, whatever the order.
    assert sum(assigned) < 0.85 * sum(in_order), (in_order, assigned)
    assert min(assigned) == 6 * 4                  # as few as one worker needs
    assert max(assigned) <= max(in_order)


def test_every_match_is_handed_out_once():
    specs = _schedule(bots=5, players=3, deals=1)
    assigner = Assigner(iter(specs), 3, 8)
    got = []
    for i in range(len(specs) + 3):
        spec = assigner.next_for(i % 3)
        if spec is not None:
            got.append(spec.match_id)
    assert Counter(got) == Counter(s.match_id for s in specs)


def test_the_model_counts_a_process_per_seat_and_deal():
    a, b = pool_key("a", SeatSpec.command(MINIMAL).bot), pool_key("b", SeatSpec.command(MINIMAL).bot)
    pool = PoolModel()
    assert pool.new_starts((a, b), 1) == 2
    pool.play((a, b), 1)
    assert pool.new_starts((a, b), 2) == 0            # another deal: the same processes
    assert pool.new_starts((a, b), 1) == 2            # the same deal: new ones
    assert pool.new_starts((a, a), 2) == 1            # two seats of one bot: two processes
    pool.play((a, a), 2)
    assert pool.new_starts((a,), 1) == 0              # the second one has not seen deal 1


def test_the_pools_outlive_one_run_of_matches():
    """An executor plays a Swiss tournament's rounds one run() each: its
    workers keep their bot pools from one round to the next, and so does the
    model of them (``pools``)."""
    specs = _schedule(bots=4, players=4, deals=2)
    pools: dict = {}
    first = Assigner(iter(specs[:4]), 2, pools=pools)
    while first.next_for(len(pools) % 2) is not None:
        pass
    kept = sum(sum(p.kept.values()) for p in pools.values())
    second = Assigner(iter(specs[4:]), 2, pools=pools)
    assert second.processes == kept > 0


def test_a_replaced_worker_starts_from_an_empty_pool():
    specs = _schedule(bots=4, players=4, deals=1)
    assigner = Assigner(iter(specs), 2)
    assigner.next_for(0)
    assigner.forget(0)
    assert assigner.processes == 0


# --------------------------------------------------------------- pools by bot

def test_bots_of_one_program_keep_their_own_processes(tmp_path):
    """Four bots running one program, two deals of four rotations: each bot
    needs a process per rotation, 16 in all, and plays only with its own.
    Keyed by program alone, the pool kept 8 of the 16 and started 8 more for
    the second deal, and a process played as several bots."""
    fast = TimeControl(startup_seconds=10, per_decision_seconds=2, bank_seconds=5)
    names = "abcd"
    pids: dict[str, set[int]] = {n: set() for n in names}
    with BotPool() as pool:
        for deal in (1, 2):
            for r in range(4):
                seated = [names[(i - r) % 4] for i in range(4)]
                seats = tuple(SeatSpec.command(MINIMAL, name=n) for n in seated)
                spec = MatchSpec(f"d{deal}-r{r}", seats, RULES, seed=deal, time=fast, log_dir=str(tmp_path))
                result = run_match(spec, pool)
                assert result.faults == ()
                for name, pid in zip(seated, result.pids):
                    pids[name].add(pid)
        assert pool.started == 16
    assert all(len(p) == 4 for p in pids.values())
    assert len(set().union(*pids.values())) == 16          # no process played as two bots


# ------------------------------------------------------------ in the executor

class _FakeWorker:
    def poll(self) -> None:
        return None


def test_the_process_executor_hands_matches_out_through_the_assigner(monkeypatch):
    """Workers that finish at once, in turn: the executor gives each the
    match the assigner picks for it, not the next in schedule order."""
    import pickle
    import socket

    from arena.tournament.executors import local
    from arena.tournament.executors.outcome import MatchFailure

    theirs: list[socket.socket] = []
    handed: list[tuple[int, str]] = []

    def start(self, cpu):
        ours, other = socket.socketpair()
        theirs.append(other)
        return local._Slot(_FakeWorker(), ours)

    def send(self, index, task):
        handed.append((index, pickle.loads(task).match_id))
        theirs[index].send(b"x")

    def receive(self, index):
        slot = self.slots[index]
        slot.conn.recv(1)
        match_id, slot.match_id = slot.match_id, None
        return MatchFailure(match_id, "not played")

    monkeypatch.setattr(local.ProcessExecutor, "_start", start)
    monkeypatch.setattr(local.ProcessExecutor, "_send", send)
    monkeypatch.setattr(local.ProcessExecutor, "_receive", receive)
    specs = _schedule()
    rounds = (specs[:37], specs[37:])          # two runs, as a Swiss tournament's rounds
    executor = local.ProcessExecutor(2, pin=False)
    outcomes = [o for part in rounds for o in executor.run(iter(part))]
    for s in theirs + [slot.conn for slot in executor.slots]:
        s.close()
    assert sorted(o.match_id for o in outcomes) == sorted(s.match_id for s in specs)
    pools: dict = {}                           # the workers' pools, kept from one run to the next
    replays = iter([Assigner(iter(part), 2, pools=pools) for part in rounds])
    replay = next(replays)
    expected = []
    for worker, _ in handed:
        spec = replay.next_for(worker)
        if spec is None:
            replay = next(replays)
            spec = replay.next_for(worker)
        expected.append((worker, spec.match_id))
    assert handed == expected
    assert [m for _, m in handed] != [s.match_id for s in specs]       # reordered
