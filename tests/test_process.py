"""Tests of the process layer (arena.process) with tiny misbehaving bots.

Every bot started through the ``spawn`` fixture is closed afterwards and its
process group must then be empty: no bot process may outlive the test.
"""

from __future__ import annotations

import gc
import logging
import os
import resource
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from arena.process import (
    BotCrashed,
    BotFailure,
    BotMalformed,
    BotProcess,
    BotSpec,
    BotStartupError,
    BotTimeout,
    DecisionStats,
    LineSplitter,
    SandboxPolicy,
    TimeControl,
    describe_exit,
    group_members,
)
from arena.process.confine import cgroups

BOTS = Path(__file__).parent / "bots"
REPO = Path(__file__).parent.parent


def bot_argv(name: str, *args: str) -> list[str]:
    return [sys.executable, str(BOTS / f"{name}.py"), *args]


def wait_group_gone(pgid: int, timeout: float = 3.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while (left := group_members(pgid)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return left


@pytest.fixture
def spawn(tmp_path):
    started: list[BotProcess] = []

    def _spawn(name: str, *args: str, time_control: TimeControl | None = None,
               argv: list[str] | None = None, **limits) -> BotProcess:
        spec = BotSpec(argv or bot_argv(name, *args), **limits)
        bot = BotProcess(spec, stderr_log=tmp_path / f"{name}.stderr.log",
                         time_control=time_control)
        started.append(bot)
        return bot.start()

    yield _spawn
    for bot in started:
        bot.close(grace=0.2, term_grace=0.2)
    for bot in started:
        assert wait_group_gone(bot.pgid) == [], f"{bot} left processes behind"


# ---------------------------------------------------------------- pure parts

def test_line_splitter_chunks_and_cap():
    s = LineSplitter(max_line_bytes=10)
    assert s.feed(b'{"a"') == []
    assert s.feed(b':1}\n{"b":2}\n{"c"') == [("line", b'{"a":1}'), ("line", b'{"b":2}')]
    assert s.feed(b"0123456789") == [("toolong", (b'{"c"0123456789', 14))]
    assert s.feed(b"more junk") == []                       # still inside the long line
    assert s.feed(b"end\nok\n") == [("line", b"ok")]
    assert s.feed(b"0123456789\n") == [("line", b"0123456789")]   # exactly the cap is fine
    assert s.feed(b"01234567890\n")[0][0] == "toolong"           # one more is not
    assert s.feed(b"tail") == [] and s.finish() == [("line", b"tail")]


def test_decision_stats():
    st = DecisionStats()
    assert st.mean is None and st.p95 is None
    for i in range(1, 101):
        st.record(i / 100)
    assert st.count == 100 and st.max == 1.0 and st.p95 == 0.95
    assert st.mean == pytest.approx(0.505)
    assert st.as_dict()["count"] == 100


def test_describe_exit():
    assert describe_exit(3) == "exited with code 3"
    assert describe_exit(-9) == "killed by signal 9 (SIGKILL)"


def test_spec_validation():
    with pytest.raises(TypeError):
        BotSpec("python3 bot.py")                            # type: ignore[arg-type]
    with pytest.raises(ValueError):
        BotSpec([])
    assert BotSpec(["python3", "-u", "bots/x.py"]).display_name == "x.py"
    assert BotSpec(["./mybot", "--fast"]).display_name == "mybot"


# --------------------------------------------------------------- happy path

def test_echo_roundtrip_and_logging(spawn, caplog):
    caplog.set_level(logging.DEBUG, logger="arena.process")
    bot = spawn("echo", time_control=TimeControl(startup_seconds=5, per_decision_seconds=1))
    hello, t0 = bot.handshake({"type": "hello", "id": 0})
    # 0 is possible: a reply stamped before the writer took its timestamp counts as 0 s.
    assert hello["echo"]["type"] == "hello" and 0 <= t0 < 5
    for i in range(1, 6):
        reply, elapsed = bot.request({"id": i, "payload": "é" * i})
        assert reply == {"id": i, "echo": {"id": i, "payload": "é" * i}}
        assert 0 <= elapsed <= 1                           # within the limit, or it would have raised
    assert bot.stats.count == 5 and bot.stats.max is not None and bot.stats.p95 is not None
    assert bot.close() == 0                                   # it obeyed {"type": "quit"}
    logged = [r.getMessage() for r in caplog.records]
    assert any(">> " in m and '"id":3' in m for m in logged)
    assert any("<< " in m and '"id": 3' in m for m in logged)


def test_context_manager_and_quit_by_eof(tmp_path):
    with BotProcess(BotSpec(bot_argv("echo"))) as bot:
        assert bot.request({"id": 1})[0]["id"] == 1
        pgid = bot.pgid
    assert bot.returncode == 0 and group_members(pgid) == []
    bot2 = BotProcess(BotSpec(bot_argv("echo"))).start()
    assert bot2.close(quit_message=None, grace=2) == 0        # stdin EOF ends it (a kill would be < 0)


def test_python_bot_that_exits_at_once(spawn):
    bot = spawn("inline", argv=[sys.executable, "-c", "raise SystemExit(5)"])
    with pytest.raises(BotCrashed) as err:
        bot.handshake({"type": "hello"}, timeout=5)
    assert err.value.returncode == 5 and "exited with code 5" in str(err.value)


# ----------------------------------------------------------------- startup

def test_startup_errors(tmp_path):
    with pytest.raises(BotStartupError) as err:
        BotProcess(BotSpec([str(tmp_path / "no-such-bot")])).start()
    assert err.value.kind == "startup" and "no-such-bot" in str(err.value)
    assert isinstance(err.value, BotFailure)

    script = tmp_path / "not_executable.py"
    script.write_text("print('hi')\n")
    script.chmod(0o644)
    with pytest.raises(BotStartupError,
                       match=r"not_executable.py.*not executable \(chmod \+x .*, or name its interpreter: python3 "):
        BotProcess(BotSpec([str(script)])).start()

    with pytest.raises(BotStartupError, match="working directory"):
        BotProcess(BotSpec(bot_argv("echo"), cwd=tmp_path / "missing")).start()


# ------------------------------------------------------------------ timing

def test_silent_bot_times_out(spawn):
    # The time control's own limit is a minute: a timeout well before it shows
    # the request's 0.3 s was the one applied (no wall-clock bound asserted).
    bot = spawn("silent", time_control=TimeControl(per_decision_seconds=60))
    with pytest.raises(BotTimeout) as err:
        bot.request({"id": 1}, timeout=0.3)
    assert err.value.kind == "timeout" and err.value.limit == 0.3 and 0.3 <= err.value.elapsed < 60
    assert bot.stats.timeouts == 1
    assert bot.close(grace=0.1) == -signal.SIGTERM


def test_close_kills_bot_that_ignores_sigterm(spawn):
    bot = spawn("silent", "--ignore-term")
    time.sleep(0.2)                                           # let it install the handler
    assert bot.close(grace=0.1, term_grace=0.2) == -signal.SIGKILL


def test_bot_that_does_not_read_its_input(spawn):
    bot = spawn("silent")
    with pytest.raises(BotTimeout) as err:
        bot.request({"id": 1, "pad": "x" * 300_000}, timeout=0.3)   # more than a pipe holds
    assert err.value.phase == "write"
    with pytest.raises(BotTimeout):                           # the stream is broken for good
        bot.request({"id": 2}, timeout=0.3)


def test_late_replies_are_discarded(spawn):
    bot = spawn("late", "0.5")
    with pytest.raises(BotTimeout):
        bot.request({"id": 1}, timeout=0.2)
    time.sleep(0.5)                                           # the late reply arrives meanwhile
    assert bot.request({"id": 2, "delay": 0}, timeout=2)[0] == {"id": 2}
    assert bot.stale_lines == 1
    with pytest.raises(BotTimeout):
        bot.request({"id": 3, "delay": 0.3}, timeout=0.1)
    # the id-3 answer comes while we wait for id 4: recognised by its id
    assert bot.request({"id": 4, "delay": 0}, timeout=2)[0] == {"id": 4}
    assert bot.stale_lines == 2


def test_elapsed_excludes_arena_delays(spawn):
    bot = spawn("echo")
    bot.handshake({"type": "hello"})
    # Compared with the arena's own delay, not with a wall-clock bound: had the
    # delay been charged, the bot's time would be at least the delay.
    delay = 1.0
    time.sleep(delay)                                         # arena busy before the request
    _, elapsed = bot.request({"id": 1})
    assert elapsed < delay
    sent_at = bot.send({"id": 2})
    time.sleep(delay)                                         # arena busy while the bot answers
    reply, elapsed = bot.recv(timeout=5, since=sent_at)
    assert reply["id"] == 2 and elapsed < delay


def test_time_bank(spawn):
    tc = TimeControl(per_decision_seconds=0.1, bank_seconds=0.75)
    bot = spawn("late", "0.4", time_control=tc)
    bot.handshake({"type": "hello", "delay": 0})
    _, e1 = bot.request({"id": 1})                            # 0.3 s over: from the bank
    # Not >= 0.4: the arena stamps a request after its write returns, and on a
    # busy machine the bot may be reading (and sleeping) a few ms before that.
    assert e1 > 0.3 and bot.bank_remaining == pytest.approx(0.45, abs=0.06)
    _, e2 = bot.request({"id": 2})
    assert bot.bank_remaining == pytest.approx(0.15, abs=0.1)
    with pytest.raises(BotTimeout) as err:                    # needs 0.3 s more, has ~0.15
        bot.request({"id": 3})
    assert err.value.limit == pytest.approx(0.25, abs=0.1)
    assert bot.bank_remaining == 0.0
    assert bot.stats.count == 2 and bot.stats.timeouts == 1

    no_bank = spawn("late", "0.4", time_control=TimeControl(per_decision_seconds=0.2))
    no_bank.handshake({"type": "hello", "delay": 0})
    with pytest.raises(BotTimeout):
        no_bank.request({"id": 1})


# ------------------------------------------------------------------ crashes

def test_exit_code_3(spawn):
    bot = spawn("exit_midway", "1")
    assert bot.request({"id": 1})[0] == {"id": 1}
    with pytest.raises(BotCrashed) as err:
        bot.request({"id": 2})
    exc = err.value
    assert exc.kind == "crash" and exc.returncode == 3 and exc.signal is None
    assert "exited with code 3" in str(exc) and "giving up now" in exc.stderr_tail
    with pytest.raises(BotCrashed):                            # sticky
        bot.request({"id": 3})
    assert bot.close() == 3


def test_killed_by_signal(spawn):
    bot = spawn("signal_self")
    bot.request({"id": 1})
    with pytest.raises(BotCrashed) as err:
        bot.request({"id": 2})
    assert err.value.signal == 9 and "killed by signal 9 (SIGKILL)" in str(err.value)


# ------------------------------------------------------------- bad output

@pytest.mark.parametrize("mode, reason", [
    ("text", "not valid JSON"),
    ("array", "expected a JSON object, got array"),
    ("binary", "invalid UTF-8 at byte 8"),
    ("deep", "nesting deeper than 32"),
])
def test_garbage(spawn, mode, reason):
    bot = spawn("garbage", mode)
    with pytest.raises(BotMalformed) as err:
        bot.request({"id": 1})
    assert err.value.kind == "malformed" and reason in str(err.value)
    assert len(err.value.excerpt) <= 203


def test_100mb_line_without_buffering_it(spawn):
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    bot = spawn("long_line")
    with pytest.raises(BotMalformed) as err:
        bot.request({"id": 1}, timeout=10)
    assert "line too long" in str(err.value) and len(err.value.excerpt) <= 203
    assert err.value.excerpt.startswith('{"id": 1, "pad": "xxx')   # refused, not timed out
    bot.close(grace=0.1)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before) / 1024
    assert grown_mb < 40


def test_stderr_flood_never_blocks(spawn, tmp_path):
    bot = spawn("stderr_flood")
    reply, _ = bot.request({"id": 1}, timeout=15)
    assert reply == {"id": 1}
    bot.close()
    log = tmp_path / "stderr_flood.stderr.log"
    assert bot.spec.stderr_max_bytes <= log.stat().st_size < bot.spec.stderr_max_bytes + 200
    assert bot.stderr_dropped == 50 * 1024 * 1024 - bot.spec.stderr_max_bytes
    assert "dropped" in log.read_text()[-200:]


def test_stdout_is_read_while_the_arena_writes(spawn):
    """A bot that floods stdout before it reads its input would block on the
    full pipe while the arena blocks on its full stdin: the arena reads
    stdout while it waits to write."""
    bot = spawn("stdout_flood", "first-byte")
    big = "y" * (1 << 20)                                      # more than a pipe holds
    reply, _ = bot.request({"id": 1, "pad": big}, timeout=20)
    assert reply == {"id": 1}
    assert bot.close() == 0


def test_stdout_is_read_while_the_arena_waits_for_the_exit(spawn):
    bot = spawn("stdout_flood", "quit")
    assert bot.request({"id": 1}, timeout=10)[0] == {"id": 1}
    assert bot.close(grace=20) == 0                            # exited, not SIGTERMed


def test_stdout_is_read_on_the_owners_thread(spawn):
    """No reader thread (and no hand-over per line) for stdout: one thread
    per bot, for stderr."""
    before = set(threading.enumerate())
    bot = spawn("echo")
    assert bot.request({"id": 1})[0]["id"] == 1
    new = [t.name for t in threading.enumerate() if t not in before]
    assert [n for n in new if n.startswith("bot-echo")] == ["bot-echo.py-stderr"]


# ------------------------------------------------------ process groups

def running(script: str, pgid: int) -> int:
    """How many processes of group ``pgid`` run ``script`` (the bot reports
    pids of its own PID namespace when sandboxed, so count by command line)."""
    count = 0
    for pid in group_members(pgid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        count += any(a.endswith(script.encode()) for a in argv[:2])
    return count


def test_forked_child_dies_with_the_bot(spawn):
    bot = spawn("forker")
    bot.request({"id": 1})
    assert running("forker.py", bot.pgid) == 2                 # the bot and its child
    assert bot.request({"id": 2})[0]["id"] == 2                # parent keeps working
    bot.close()
    assert wait_group_gone(bot.pgid) == []


def test_closing_a_bot_reads_the_hosts_processes_only_while_its_group_lives(spawn, monkeypatch):
    """Issue 34: a pass over every process of the host (52 ms with 1,000 on
    it) at each close made the arena's CPU per decision grow with the host.
    A group left empty is told by a signal; a forked child still dies with
    its bot."""
    from arena.process import exits
    passes: list[int] = []
    members = exits.group_members
    monkeypatch.setattr(exits, "group_members", lambda pgid: passes.append(pgid) or members(pgid))
    alone = spawn("echo", sandbox=SandboxPolicy(mode="none"))
    alone.request({"id": 1})
    alone.close()
    assert alone.returncode == 0 and passes == []
    forked = spawn("forker", sandbox=SandboxPolicy(mode="none"))
    forked.request({"id": 1})
    forked.close()
    assert wait_group_gone(forked.pgid) == []


def test_parent_exits_child_keeps_stdout_open(spawn):
    bot = spawn("forker", "--exit-after-first")
    bot.request({"id": 1})
    with pytest.raises(BotCrashed, match="exited with code 0"):
        bot.request({"id": 2}, timeout=10)                     # death seen despite open stdout (not a timeout)
    assert wait_group_gone(bot.pgid) == []                     # the orphan was killed at once


def test_garbage_collected_bot_is_killed():
    bot = BotProcess(BotSpec(bot_argv("forker"))).start()
    bot.request({"id": 1})
    pgid = bot.pgid
    assert running("forker.py", pgid) == 2
    del bot
    gc.collect()
    assert wait_group_gone(pgid) == []


def test_no_bot_outlives_the_arena():
    script = textwrap.dedent(f"""
        import sys
        from arena.process import BotProcess, BotSpec
        bot = BotProcess(BotSpec({bot_argv("forker")!r})).start()
        bot.request({{"id": 1}})
        print(bot.pgid, flush=True)
        # exits without close()
    """)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, timeout=20, check=True)
    assert wait_group_gone(int(out.stdout)) == []


# ----------------------------------------------------------------- limits

def test_memory_limit(spawn):
    bot = spawn("memhog", memory_mb=200)
    with pytest.raises(BotCrashed) as err:                    # killed, not timed out
        bot.request({"id": 1}, timeout=10)
    assert "memory limit 200 MB" in str(err.value)
    assert "MemoryError" in err.value.stderr_tail


def test_group_memory_watchdog(spawn):
    bot = spawn("memhog_fork", memory_mb=200)
    with pytest.raises(BotCrashed) as err:                    # killed, not timed out
        bot.request({"id": 1}, timeout=10)
    assert err.value.signal == 9 and "memory limit exceeded" in str(err.value)


def test_group_memory_watchdog_counts_setsid_children_in_the_sandbox(spawn):
    bot = spawn("memhog_fork", "--setsid", memory_mb=200)
    assert bot.containment is not None and bot.containment.mode == "bwrap"
    with pytest.raises(BotCrashed) as err:
        bot.request({"id": 1}, timeout=10)
    assert err.value.signal == 9 and "memory limit exceeded" in str(err.value)


def test_watchdog_reads_only_the_sandboxed_bots_own_processes(spawn, monkeypatch):
    """A sandboxed bot's processes are bubblewrap's descendants: no pass over
    every process of the machine, and the forked child is counted."""
    from arena.process.confine import limits
    bot = spawn("forker", memory_mb=500)
    assert bot.containment is not None and bot.containment.mode == "bwrap"
    reply, _ = bot.request({"id": 1}, timeout=10)
    watchdog = limits.MemoryWatchdog()
    watchdog.register(bot.pid, "forker", 500, lambda reason: None,
                      limits.pid_namespace(bot.pipe._sandbox_init), max_processes=1)

    def no_scan():
        raise AssertionError("the whole of /proc was scanned")
    monkeypatch.setattr(limits, "iter_processes", no_scan)
    killed = []
    monkeypatch.setattr(limits, "kill_group", lambda pgid, sig: killed.append(pgid))
    with watchdog._lock:
        watchdog.check()      # the bot and its forked child: 2, over the 1 allowed
    assert killed == [bot.pid]
    watchdog._quit.set()


SWARM = ("import os, sys, time\n"
         "sys.stdin.readline()\n"
         "for _ in range(20):\n"
         "    if os.fork() == 0:\n"
         "        time.sleep(60); os._exit(0)\n"
         "time.sleep(60)\n")


@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_process_limit(spawn, mode):
    bot = spawn("swarm", argv=[sys.executable, "-c", SWARM], max_processes=5,
                sandbox=SandboxPolicy(mode))
    with pytest.raises(BotCrashed) as err:
        bot.request({"id": 1}, timeout=10)
    if cgroups.backend() is not None:        # pids.max: the fork fails, and the bot with it
        assert "process limit reached: the kernel refused" in str(err.value), err.value
        assert "BlockingIOError" in err.value.stderr_tail
    else:                                    # the watchdog counts, and kills
        assert err.value.signal == 9 and "process limit exceeded" in str(err.value)


def test_cpu_limit(spawn):
    bot = spawn("cpuburn", cpu_seconds=1)
    # A crash, not a timeout: the limit fired first (no wall-clock bound: the machine is shared).
    with pytest.raises(BotCrashed) as err:
        bot.request({"id": 1}, timeout=10)
    assert err.value.signal in (signal.SIGXCPU, signal.SIGKILL)
    assert "CPU time limit of 1 s exceeded" in str(err.value)


NODE = shutil.which("node")
NODE_ECHO = ("require('readline').createInterface({input: process.stdin})"
             ".on('line', l => { const m = JSON.parse(l);"
             " if (m.type === 'quit') process.exit(0);"
             " if (m.hog) { const a = []; for (;;) a.push(Buffer.alloc(1 << 20, 1)); }"
             " console.log(JSON.stringify({id: m.id})); })")


@pytest.mark.skipif(NODE is None, reason="node not installed")
def test_node_bot_under_memory_limit(spawn):
    bot = spawn("node", argv=[NODE, "-e", NODE_ECHO], memory_mb=256)
    assert bot.handshake({"id": 0})[0] == {"id": 0}            # V8 starts under RLIMIT_DATA
    with pytest.raises(BotCrashed) as err:
        bot.request({"id": 1, "hog": True}, timeout=10)
    assert "memory limit 256 MB" in str(err.value)


def test_without_pidfd(spawn, monkeypatch):
    """Old kernels have no pidfd: the death of the main process is then polled."""
    monkeypatch.delattr(os, "pidfd_open")
    bot = spawn("forker", "--exit-after-first")
    bot.request({"id": 1})
    with pytest.raises(BotCrashed, match="exited with code 0"):
        bot.request({"id": 2}, timeout=5)
    late = spawn("late", "0.1")
    assert late.request({"id": 1}, timeout=2)[0] == {"id": 1}
