"""A bot computes on its own turns only (arena/process/confine/turns.py).

A bot that goes on computing after its reply takes the CPU from whichever
bot's turn it is.  The watchdog holds each bot's CPU time against its turns;
one caught computing between them is stopped (SIGSTOP) after each reply and
continued just before the arena writes to it again.  Real processes: the
bot ``tests/bots/ponder.py`` computes in a thread or a ``setsid()`` child.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.match.pool import BotPool
from arena.process import BotProcess, BotSpec, SandboxPolicy, TimeControl
from arena.process.confine import procfs, sandbox
from arena.process.confine.turns import (
    MEASURED_SLACK,
    OFF_TURN_DEBT,
    OFF_TURN_LEAK,
    OFF_TURN_SLACK,
    OWN_TIME,
    PER_TURN_SLACK,
    WAIT_PER_TURN,
    TurnClock,
)

BOT = Path(__file__).parent / "bots" / "ponder.py"
TICK = os.sysconf("SC_CLK_TCK")
WAIT = 10.0           # a bound for things that take a watchdog scan or two (0.25 s each)

needs_bwrap = pytest.mark.skipif(sandbox.resolve(sandbox.AUTO).mode != sandbox.BWRAP,
                                 reason="bubblewrap does not work here")


@pytest.fixture
def loaded_cpu() -> Iterator[None]:
    """This process, the bots it starts and a process that computes without
    end share one CPU: a loaded machine, where every turn waits for the CPU."""
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {max(before)})
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        hog.kill()
        hog.wait()
        os.sched_setaffinity(0, before)


def start(tmp_path: Path, *args: str, mode: str = "bwrap", guard: bool = True) -> BotProcess:
    spec = BotSpec([sys.executable, str(BOT), *args], sandbox=SandboxPolicy(mode), turn_guard=guard)
    bot = BotProcess(spec, stderr_log=tmp_path / "ponder.log",
                     time_control=TimeControl(startup_seconds=30, per_decision_seconds=30))
    bot.start()
    bot.handshake({"type": "start", "id": 0})
    return bot


def ask(bot: BotProcess, n: int) -> int:
    reply, _elapsed = bot.request({"type": "request", "id": n})
    return int(reply["spun"])


def assert_never_caught(bot: BotProcess, requests: int, pause: float) -> None:
    """``requests`` requests with ``pause`` between them: the bot is never caught or stopped."""
    assert bot.pipe._turns is not None
    for n in range(1, requests + 1):
        ask(bot, n)
        time.sleep(pause)
    assert not bot.pipe._turns.caught and bot.pipe._pauser is None


def play_until_caught(bot: BotProcess, pause: float = 0.1, why: str = "") -> int:
    """Requests with ``pause`` between them (the other bots' turns) until the
    watchdog has caught the bot; the next request id."""
    assert bot.pipe._turns is not None
    n = 1
    deadline = time.monotonic() + WAIT
    while not bot.pipe._turns.caught and time.monotonic() < deadline:
        ask(bot, n)
        n += 1
        time.sleep(pause)
    assert bot.pipe._turns.caught, f"a bot computing between its turns was not caught{why}"
    return n


def bot_pids(bot: BotProcess) -> list[int]:
    """The bot's own processes: in the sandbox, not bubblewrap's two."""
    assert bot.pid is not None
    if bot.pipe._sandbox_init is None:
        return [bot.pid]
    return [p.pid for p in procfs.process_tree(bot.pipe._sandbox_init) if p.pid != bot.pipe._sandbox_init]


def states(pid: int) -> set[str]:
    """The state of every thread of ``pid`` ('T': stopped)."""
    out = set()
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/stat", "rb") as f:
            data = f.read()
        out.add(data[data.rfind(b")") + 2:].split()[0].decode())
    return out


def wait_stopped(pids: list[int]) -> dict[int, set[str]]:
    deadline = time.monotonic() + WAIT
    while True:
        seen = {pid: states(pid) for pid in pids}
        if all(s == {"t"} or s == {"T"} for s in seen.values()) or time.monotonic() > deadline:
            return seen
        time.sleep(0.01)


# ------------------------------------------------------------------ the clock

def test_clock_counts_open_and_closed_turns() -> None:
    clock = TurnClock(opened=10.0)
    assert clock.seconds(10.5) == 0.5
    clock.close(11.0)
    assert clock.seconds(20.0) == pytest.approx(1.0 + PER_TURN_SLACK)
    clock.open(20.0)
    clock.open(20.5)                  # still open: counted up to here, and goes on
    clock.close(21.0)
    assert clock.seconds(30.0) == pytest.approx(2.0 + 2 * PER_TURN_SLACK)


def test_clock_catches_cpu_beyond_the_turns_only() -> None:
    clock = TurnClock(opened=None)
    assert clock.observe(0, 0.0) is None                  # the first scan only sets the base
    clock.open(0.0)
    clock.close(0.2)
    assert clock.observe(int(0.2 * TICK) / TICK, 0.25) is None   # all its CPU within its turn
    assert not clock.caught
    # A child that died unreaped drops out of the sum, then comes back with
    # its parent: neither is CPU between turns.
    assert clock.observe(0, 0.5) is None
    assert clock.observe(int(0.2 * TICK) / TICK, 0.75) is None
    assert not clock.caught
    # Some slack per turn: a bot often finishes writing its reply after the turn.
    for i in range(100):
        clock.open(1.0 + i * 0.001)
        clock.close(1.0 + i * 0.001)
    allowed = OFF_TURN_SLACK + 100 * PER_TURN_SLACK
    assert clock.observe(int((0.2 + allowed * 0.9) * TICK) / TICK, 1.25) is None
    # 0.1 s of CPU with no turn at all: caught.
    excess = clock.observe(int((0.2 + allowed * 0.9 + 0.1) * TICK) / TICK, 1.5)
    assert excess is not None and excess > OFF_TURN_SLACK and clock.caught


def test_clock_allows_a_cpu_per_cpu_the_bot_may_use() -> None:
    clock = TurnClock(opened=None, cpus=2)
    clock.observe(0, 0.0)
    clock.open(0.0)
    clock.close(0.25)
    assert clock.observe(int(0.5 * TICK) / TICK, 0.25) is None and not clock.caught


def test_own_time_after_end_runs_out() -> None:
    clock = TurnClock(opened=None)
    clock.own_time(0.0)                            # 'end'
    assert clock.seconds(OWN_TIME / 2) == pytest.approx(OWN_TIME / 2)
    assert clock.seconds(OWN_TIME + 5) == pytest.approx(OWN_TIME)   # idle in the pool since
    clock.open(OWN_TIME + 5)                       # its next match's 'start'
    assert clock.seconds(OWN_TIME + 6) == pytest.approx(OWN_TIME + 1)
    clock.close(OWN_TIME + 6)
    clock.own_time(10.0)
    clock.open(10.5)                               # the next turn came sooner: all of it counts
    clock.close(11.0)
    assert clock.seconds(20.0) == pytest.approx(OWN_TIME + 2 + 2 * PER_TURN_SLACK)


def test_own_time_runs_out_for_the_watchdog_too() -> None:
    clock = TurnClock(opened=None)
    clock.observe(0, 0.0)
    clock.own_time(0.0)
    assert clock.observe(int(0.25 * TICK) / TICK, 0.25) is None      # summing up the match
    for scan in range(2, 20):                                  # and on, idle, past its own time
        clock.observe(int(0.25 * scan * TICK) / TICK, 0.25 * scan)
    assert clock.caught


def test_a_little_cpu_between_turns_all_the_time_adds_up() -> None:
    clock = TurnClock(opened=None)
    clock.observe(0, 0.0)
    per_scan = OFF_TURN_SLACK * 0.75                     # under the slack of one scan
    cpu = 0.0
    scans = 0
    while not clock.caught and scans < 200:
        scans += 1
        cpu += per_scan
        clock.observe(int(cpu * TICK) / TICK, 0.25 * scans)
    assert clock.caught
    assert scans <= OFF_TURN_DEBT / (per_scan - OFF_TURN_LEAK) + 4     # about 2.5 s at 6 % of a CPU


def test_tick_rounding_alone_never_adds_up() -> None:
    """CPU read in whole clock ticks: a bot that uses exactly its turns'
    time is seen a tick over in one scan and a tick under in the next."""
    clock = TurnClock(opened=None)
    clock.observe(0, 0.0)
    used = 0.0
    for scan in range(1, 2000):
        clock.open(0.25 * scan - 0.2)
        clock.close(0.25 * scan - 0.0123)          # turns of 0.1877 s, never whole ticks
        used += 0.1877
        clock.observe(int(used * TICK) / TICK, 0.25 * scan)
    assert not clock.caught


def test_what_a_loaded_machine_kept_from_the_turns_is_no_cover() -> None:
    """On a loaded machine a turn lasts longer than the CPU the bot got in
    it; what its threads waited on the run queue is not time it could use."""
    def scan(waits: dict[int, tuple[int, int, int]] | None) -> TurnClock:
        clock = TurnClock(opened=None, taken=lambda: 0)
        clock.observe(0, 0.0, {} if waits is not None else None)
        clock.open(0.0)
        clock.close(0.2)              # a turn of 0.2 s in which it had the CPU for 0.1 s
        clock.observe(int(0.15 * TICK) / TICK, 0.25, waits)     # and computed 0.05 s after it
        return clock
    assert not scan(None).caught                         # what the wall time hid
    assert scan({7: (150_000_000, 100_000_000, 10)}).caught
    # Its threads wait at the same time: the longest wait counts, not their sum.
    assert not scan({7: (100_000_000, 50_000_000, 10), 8: (50_000_000, 50_000_000, 10)}).caught


def test_an_honest_bot_on_a_loaded_machine_is_not_caught() -> None:
    """Its turns last twice the CPU it gets, and it waits a little more after
    each reply (the arena's reading of it goes first)."""
    turns = 0
    clock = TurnClock(opened=None, taken=lambda: turns)
    clock.observe(0, 0.0, {})
    ran = waited = slices = 0
    for scan in range(1, 400):
        for k in range(10):
            clock.open(0.25 * scan - 0.2 + k * 0.02)
            clock.close(0.25 * scan - 0.19 + k * 0.02)
        turns += 10
        ran += 50_000_000                             # 5 ms in each 10 ms turn
        waited += 50_000_000 + 10 * int(WAIT_PER_TURN * 1e9 * 0.9)
        slices += 20                                  # woken, and put aside once, each turn
        clock.observe(ran * TICK // 1_000_000_000 / TICK, 0.25 * scan, {7: (ran, waited, slices)})
    assert not clock.caught


def test_the_wait_after_each_turn_is_forgiven_per_turn_taken_in_this_match() -> None:
    """A pool gives a bot new decision stats each match: a count lower than
    the last one seen is a new count, all of whose turns are new."""
    taken = [1000]
    clock = TurnClock(opened=None, taken=lambda: taken[0])
    clock.observe(0, 0.0, {})
    clock.open(0.0)
    clock.close(0.1)
    taken[0] = 10                                    # its next match: 10 turns so far
    # Half the turn's time waiting for the CPU, and a little after each reply.
    wait = int((0.05 + 10 * WAIT_PER_TURN * 0.9) * 1e9)
    clock.observe(int(0.05 * TICK) / TICK, 0.25, {7: (50_000_000, wait, 20)})
    assert not clock.caught
    clock.open(0.25)
    clock.close(0.35)
    # The same with no turn taken by the count: all the wait is taken from the turn's time.
    clock.observe(int(0.1 * TICK) / TICK, 0.5, {7: (100_000_000, 2 * wait, 40)})
    assert clock.caught


@pytest.mark.skipif(not procfs.SCHEDSTAT, reason="no /proc/PID/task/TID/schedstat here")
def test_thread_times_reads_every_thread_of_the_processes() -> None:
    import threading
    stop = threading.Event()
    helper = threading.Thread(target=stop.wait)
    helper.start()
    try:
        start = time.thread_time()
        while time.thread_time() - start < 0.02:
            pass
        times = procfs.thread_times([os.getpid(), 999_999_999])     # the second: no such process
    finally:
        stop.set()
        helper.join()
    assert set(times) == {int(t) for t in os.listdir("/proc/self/task")} | {helper.native_id}
    assert times[threading.get_native_id()][0] >= 20_000_000          # ns of CPU, at least ours
    assert all(waited >= 0 and slices >= 1 for _ran, waited, slices in times.values())


# ------------------------------------------------------------ real processes

@needs_bwrap
@pytest.mark.parametrize("how", ["--thread", "--setsid"])
def test_sandboxed_bot_computing_between_turns_is_stopped_between_them(tmp_path: Path, how: str) -> None:
    bot = start(tmp_path, how)
    try:
        n = play_until_caught(bot)
        ask(bot, n)
        pids = bot_pids(bot)
        assert len(pids) == (2 if how == "--setsid" else 1)
        seen = wait_stopped(pids)
        assert all(s <= {"t", "T"} for s in seen.values()), seen   # every thread, the setsid child too
        # Continued for its next turn: it answers, and counts on meanwhile.
        assert ask(bot, n + 1) >= 0
        assert bot.alive
    finally:
        bot.close(grace=0.5, term_grace=0.2)
    assert bot.returncode == 0      # it got 'quit' although it had been stopped


def test_unsandboxed_bot_computing_between_turns_is_stopped_between_them(tmp_path: Path) -> None:
    bot = start(tmp_path, "--thread", mode="none")
    try:
        n = play_until_caught(bot)
        ask(bot, n)
        seen = wait_stopped(bot_pids(bot))
        assert all(s <= {"t", "T"} for s in seen.values()), seen
        assert ask(bot, n + 1) >= 0 and bot.alive     # continued for its turn
    finally:
        bot.close(grace=0.5, term_grace=0.2)


@pytest.mark.parametrize("mode", [pytest.param("bwrap", marks=needs_bwrap), "none"])
def test_bot_that_only_answers_is_never_stopped(tmp_path: Path, mode: str) -> None:
    bot = start(tmp_path, mode=mode)
    try:
        assert_never_caught(bot, 15, pause=0.1)      # about six watchdog scans
    finally:
        bot.close()


def test_work_after_end_is_the_bots_own_time(tmp_path: Path) -> None:
    """What a bot computes on 'end' (own_time) is no CPU taken from another's
    turn; the same work on a notice the arena sent without it is."""
    bot = start(tmp_path, "--busy-after-end", mode="none")
    try:
        assert bot.pipe._turns is not None
        bot.send({"type": "end"}, own_time=True)
        ask(bot, 1)                       # answered after its 0.3 s on 'end'
        time.sleep(0.6)                   # two scans more
        assert not bot.pipe._turns.caught
        # Without it, each 'end' is 0.3 s between turns: the first makes the
        # bot a suspect, the next one is measured (one burst is no habit).
        deadline = time.monotonic() + WAIT
        while not bot.pipe._turns.caught and time.monotonic() < deadline:
            bot.send({"type": "end"})
            time.sleep(0.6)
        assert bot.pipe._turns.caught and bot.pipe._turns.off_turn > MEASURED_SLACK, bot.pipe._turns.off_turn
    finally:
        bot.close()


def test_turn_guard_off_lets_a_bot_compute_between_turns(tmp_path: Path) -> None:
    bot = start(tmp_path, "--thread", mode="none", guard=False)
    try:
        assert bot.pipe._turns is None
        ask(bot, 1)
        time.sleep(0.6)
        assert states(bot_pids(bot)[0]) - {"t", "T"}     # running, not stopped
    finally:
        bot.close()


@pytest.mark.parametrize("mode", [pytest.param("bwrap", marks=needs_bwrap), "none"])
def test_a_bot_computing_a_little_all_the_time_is_caught(tmp_path: Path, mode: str) -> None:
    bot = start(tmp_path, "--duty", "5", mode=mode)     # 12.5 ms a scan: under the slack of one
    try:
        assert bot.pipe._turns is not None
        n = 1
        deadline = time.monotonic() + 4 * WAIT
        while not bot.pipe._turns.caught and time.monotonic() < deadline:
            ask(bot, n)
            n += 1
            time.sleep(0.3)
        assert bot.pipe._turns.caught
        ask(bot, n)                                  # stopped after this reply
        assert set().union(*wait_stopped(bot_pids(bot)).values()) <= {"t", "T"}
    finally:
        bot.close()


@pytest.mark.parametrize("mode", [pytest.param("bwrap", marks=needs_bwrap), "none"])
def test_a_pooled_bot_computing_while_it_waits_for_its_next_match_is_stopped(tmp_path: Path,
                                                                             mode: str) -> None:
    spec = BotSpec([sys.executable, str(BOT), "--spin-after-end"], sandbox=SandboxPolicy(mode))
    tc = TimeControl(startup_seconds=30, per_decision_seconds=30)
    with BotPool() as pool:
        handle, reused = pool.acquire(spec, name="idler", stderr_log=None, time_control=tc, deal=1)
        bot = handle.proc
        bot.handshake({"type": "start", "id": 0})
        ask(bot, 1)
        bot.send({"type": "end"}, own_time=True)
        pool.release(handle, keep=True)                  # kept for a later match: parked
        assert bot.pipe._turns is not None
        deadline = time.monotonic() + OWN_TIME + WAIT
        while not bot.pipe._turns.caught and time.monotonic() < deadline:
            time.sleep(0.05)
        assert bot.pipe._turns.caught, "a bot computing while parked in the pool was not caught"
        assert set().union(*wait_stopped(bot_pids(bot)).values()) <= {"t", "T"}
        # Its next match: continued, and it plays.
        again, reused = pool.acquire(spec, name="idler", stderr_log=None, time_control=tc, deal=2)
        assert reused and again is handle
        bot.handshake({"type": "start", "id": 2})
        assert ask(bot, 3) >= 0 and bot.alive
        pool.release(again, keep=True)
    assert bot.returncode == 0           # it got 'quit' although it had been stopped while parked


def test_a_pooled_bot_that_sums_up_within_its_own_time_is_left_alone(tmp_path: Path) -> None:
    spec = BotSpec([sys.executable, str(BOT), "--busy-after-end"], sandbox=SandboxPolicy("none"))
    tc = TimeControl(startup_seconds=30, per_decision_seconds=30)
    with BotPool() as pool:
        handle, _ = pool.acquire(spec, name="summer", stderr_log=None, time_control=tc, deal=1)
        bot = handle.proc
        bot.handshake({"type": "start", "id": 0})
        ask(bot, 1)
        bot.send({"type": "end"}, own_time=True)         # 0.3 s of CPU on it
        pool.release(handle, keep=True)
        time.sleep(OWN_TIME + 0.75)                      # and three scans past its own time
        assert bot.pipe._turns is not None and not bot.pipe._turns.caught


@pytest.mark.parametrize("mode", [pytest.param("bwrap", marks=needs_bwrap), "none"])
def test_on_a_loaded_cpu_a_bot_computing_between_turns_is_caught(tmp_path: Path, mode: str,
                                                                  loaded_cpu: None) -> None:
    """A bot that computes 5 ms a turn, with the other bots' turns between
    them: its turns last twice that with the hog on its CPU, which hid a
    thread computing between them (never caught in 3 tries of 12 s before
    the run-queue waits were counted)."""
    bot = start(tmp_path, "--work", "5", "--thread", mode=mode)
    try:
        play_until_caught(bot, pause=0.02, why=" on a loaded CPU")
    finally:
        bot.close()


@pytest.mark.parametrize("mode", [pytest.param("bwrap", marks=needs_bwrap), "none"])
def test_on_a_loaded_cpu_a_bot_that_only_computes_on_its_turns_is_not_caught(
        tmp_path: Path, mode: str, loaded_cpu: None) -> None:
    bot = start(tmp_path, "--work", "20", mode=mode)
    try:
        assert_never_caught(bot, 59, pause=0.02)     # about twelve watchdog scans
    finally:
        bot.close()
