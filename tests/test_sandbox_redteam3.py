"""Third red-team review (docs/SECURITY.md): attacks the first two reviews
(test_sandbox_redteam.py, test_sandbox_redteam2.py) did not try.

No test here is an ``xfail`` any more: CPU in children the kernel reaps is
counted by the bot's cgroup, and the two covert channels through state the
whole machine shares (the page cache, the Shmem count) cannot be closed on
one kernel: their tests run the attack and check that docs/SECURITY.md
documents the limit (the channel's result is printed, not asserted: other
processes disturb that state now and then).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from arena.process import BotFailure, BotProcess, BotSpec, TimeControl
from arena.process.confine import cgroups, sandbox
from arena.process.confine.sandbox import SandboxPolicy
from arena.process.confine.sandbox_policy import mount_options

BOTS = Path(__file__).parent / "bots"
HOSTILE = Path(__file__).parent / "hostile"
WAIT = 10.0           # a bound for things that take a watchdog scan or two (0.25 s each)

needs_bwrap = pytest.mark.skipif(sandbox.resolve(sandbox.AUTO).mode != sandbox.BWRAP,
                                 reason="bubblewrap does not work here")


# ------------------------------------------------- time: CPU between turns

def start_children_bot(tmp_path: Path, *args: str) -> BotProcess:
    spec = BotSpec([sys.executable, str(BOTS / "ponder_children.py"), *args],
                   sandbox=SandboxPolicy("bwrap"), turn_guard=True)
    bot = BotProcess(spec, stderr_log=tmp_path / "children.log",
                     time_control=TimeControl(startup_seconds=30, per_decision_seconds=30))
    bot.start()
    bot.handshake({"type": "start", "id": 0})
    return bot


def off_turn_children_cpu(bot: BotProcess, enough: float) -> float:
    """Requests 0.1 s apart (the other bots' turns) until the bot is caught
    computing between its turns, or its children have used ``enough`` CPU
    seconds between its turns (or ``WAIT`` has passed): the CPU they used."""
    assert bot.pipe._turns is not None
    n, cpu = 1, 0.0
    deadline = time.monotonic() + WAIT
    while not bot.pipe._turns.caught and cpu < enough and time.monotonic() < deadline:
        reply, _elapsed = bot.request({"type": "request", "id": n})
        cpu = float(reply["cpu"])
        n += 1
        time.sleep(0.1)
    return cpu


@needs_bwrap
def test_children_waited_for_count_as_computing_between_turns(tmp_path: Path) -> None:
    bot = start_children_bot(tmp_path)
    try:
        cpu = off_turn_children_cpu(bot, enough=1.0)
        assert bot.pipe._turns is not None and bot.pipe._turns.caught, \
            f"children used {cpu:.2f} s of CPU between the bot's turns unseen"
    finally:
        bot.close(grace=0.5, term_grace=0.2)


@needs_bwrap
def test_children_reaped_by_the_kernel_count_as_computing_between_turns(tmp_path: Path) -> None:
    """A bot that ignores SIGCHLD (or sets SA_NOCLDWAIT) and computes between
    its turns in children living a few ms each: the kernel reaps them at
    once and adds their CPU to no process, and a scan every 0.25 s rarely
    sees one alive.  The bot's cgroup counts every task it ever had
    (arena/process/confine/cgroups.py; without one this is a documented limit,
    docs/SECURITY.md "Limits")."""
    if cgroups.backend() is None:
        pytest.skip("no cgroup here: a documented limit (docs/SECURITY.md)")
    # Up to three bots: the cgroup's counter is read only once the wall-time
    # comparison makes the bot a suspect (turns.py), and on a machine loaded
    # far past its CPUs (load 12 on 2, in one full-suite run) that came late:
    # 0.06 of 0.24 s seen.  A guard blind to reaped children fails all three.
    for attempt in range(3):
        (tmp_path / str(attempt)).mkdir()
        bot = start_children_bot(tmp_path / str(attempt), "--autoreap")
        try:
            cpu = off_turn_children_cpu(bot, enough=0.5)
            assert bot.pipe._turns is not None
            seen = bot.pipe._turns.off_turn
        finally:
            bot.close(grace=0.5, term_grace=0.2)
        if seen >= cpu / 2:
            break
    assert seen >= cpu / 2, f"children used {cpu:.2f} s of CPU between the bot's turns; {seen:.2f} s of it was seen"


# ------------------------------------------------- seeing the other hands

def test_arena_play_hides_the_other_bots_stderr_logs(visible_dir: Path) -> None:
    """Bots often print their hand on stderr; ``arena play`` writes it, live,
    into its log directory (``arena-logs`` in the current directory by
    default), which the bots' working directory holds."""
    for name in ("proto.py", "logspy.py"):
        shutil.copy(HOSTILE / name, visible_dir)
    done = subprocess.run([sys.executable, "-m", "arena", "play", f"{sys.executable} logspy.py",
                           f"{sys.executable} logspy.py", "--sandbox", "bwrap", "--seed", "7"],
                          capture_output=True, text=True, timeout=180, cwd=visible_dir)
    assert done.returncode == 0, done.stdout + done.stderr
    logs = visible_dir / "arena-logs"
    lines = [json.loads(line[len("MEMORY "):]) for log in sorted(logs.glob("*.stderr.log"))
             for line in log.read_text().splitlines() if line.startswith("MEMORY ")]
    assert {r["seat"] for r in lines} == {0, 1}, "the bots did not play"
    held = {r["seat"]: r["cards"] for r in lines}
    known = sorted({(r["seat"], int(s)) for r in lines for s, cards in r["claims"].items()
                    if held.get(int(s)) == cards})
    assert known == [], f"a bot read its opponent's hand in the stderr logs: {known}"


def test_arena_play_refuses_a_log_dir_the_bots_could_read(visible_dir: Path) -> None:
    """A log directory that holds a bot's own directory cannot be hidden from
    it (the sandbox never hides what a bot runs from): with ``--log-dir .``
    each bot read the other's hand in its stderr log, live."""
    for name in ("proto.py", "logspy.py"):
        shutil.copy(HOSTILE / name, visible_dir)
    done = subprocess.run([sys.executable, "-m", "arena", "play", f"{sys.executable} logspy.py",
                           f"{sys.executable} logspy.py", "--sandbox", "bwrap", "--seed", "7",
                           "--log-dir", "."],
                          capture_output=True, text=True, timeout=180, cwd=visible_dir)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and "--log-dir . holds" in done.stderr, done.stderr
    assert not list(visible_dir.glob("*.stderr.log")), "bots were started"


def test_a_results_directory_holding_a_bots_directory_is_refused(visible_dir: Path) -> None:
    """The results directory is hidden from the bots, but never one that
    holds a bot's own directory: with ``out: .`` beside the bots'
    directories, a bot read the results database (with the seed)."""
    rt = visible_dir / "rt"
    rt.mkdir()
    for name in ("proto.py", "redteam.py"):
        shutil.copy(HOSTILE / name, rt)
    db = visible_dir / "results.sqlite"
    tfile = visible_dir / "t.yaml"
    tfile.write_text(json.dumps({
        "name": "redteam3", "sandbox": "bwrap", "players": 2, "rules": {"contracts": ["2S3"]},
        "out": ".", "bots": [
            {"name": "rt", "command": [sys.executable, "redteam.py"], "dir": "rt",
             "env": {"RT_PROBES": "read", "RT_READ": str(db)}},
            {"name": "ref", "builtin": "random"}]}))
    done = subprocess.run([sys.executable, "-m", "arena", "run", str(tfile), "--jobs", "1"],
                          capture_output=True, text=True, timeout=180, cwd=visible_dir)
    read = [line for log in (visible_dir / "logs").glob("*-rt.stderr.log")
            for line in log.read_text().splitlines() if line.startswith("REDTEAM-PROBE read")]
    assert read == [], f"the bot read the results database: {read}"
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"t.yaml:1: out: the results directory {visible_dir} holds {rt}" in done.stderr, done.stderr


@needs_bwrap
@pytest.mark.parametrize("where", ["/", "/tmp"])
def test_a_bot_run_from_the_root_or_tmp_still_sees_only_its_own_sandbox(visible_dir: Path, where: str) -> None:
    """``arena play`` run from "/" (a container's usual working directory)
    or from /tmp: the bots' working directory is shown to them read-only,
    and binding "/" brought back the host's /proc (every process: another
    bot's stdin, its hand, could be opened), /dev, /tmp and /run (with
    their sockets); binding /tmp, the host's /tmp."""
    for name in ("proto.py", "spy.py"):
        shutil.copy(HOSTILE / name, visible_dir)
    (visible_dir / "victim.py").write_text("import proto\nproto.serve(name='victim')\n")
    logs = visible_dir / "logs"
    done = subprocess.run([sys.executable, "-m", "arena", "play", f"{sys.executable} {visible_dir / 'spy.py'}",
                           f"{sys.executable} {visible_dir / 'victim.py'}", "--sandbox", "bwrap",
                           "--log-dir", str(logs)],
                          capture_output=True, text=True, timeout=180, cwd=where)
    assert done.returncode == 0, done.stdout + done.stderr
    report = next(json.loads(line[len("SPY-REPORT "):]) for log in sorted(logs.glob("*.stderr.log"))
                  for line in log.read_text().splitlines() if line.startswith("SPY-REPORT "))
    seen = [p["pid"] for p in report["processes"]]
    others = [p for p in report["processes"] if any("victim.py" in a for a in p["cmdline"] or [])]
    assert seen == [1] and others == [], f"the bot saw {len(seen)} processes, the other bot's: {others}"
    assert report["wrote_tmp"] is True, "the bot's /tmp is not its own private one"


def test_a_working_directory_of_root_or_tmp_is_not_bound_over_the_sandbox() -> None:
    """The mount options alone: "/" is never bound again (the base binds it
    read-only, without the host's /proc and /dev), and a working directory
    that is a private file system stays private, with the bot's own script
    there shown by itself, over it."""
    policy = SandboxPolicy("bwrap")
    fd, script = tempfile.mkstemp(suffix=".py", dir="/tmp")
    os.close(fd)
    try:
        for folders in (["/"], ["/tmp"]):
            args = mount_options(folders, policy, True, [script])
            pairs = list(zip(args, args[1:]))
            assert ("--ro-bind", "/") not in pairs and ("--ro-bind", "/tmp") not in pairs, args
        assert args.index(script) > args.index("/tmp") and ("--ro-bind", script) in pairs, args
    finally:
        os.remove(script)

# ------------------------------------------------- channels between bots

SECURITY = Path(__file__).resolve().parent.parent / "docs" / "SECURITY.md"


def assert_documented(limit: str, test: str) -> None:
    """A covert channel this kernel cannot close is a documented limit:
    docs/SECURITY.md says so, and its threat table names the test."""
    text = SECURITY.read_text()
    assert limit in text and test in text and "documented limit" in text

@needs_bwrap
def test_two_bots_can_signal_each_other_through_the_machines_memory_counters_a_documented_limit(tmp_path: Path) -> None:
    bots = []
    for _ in range(2):
        bot = BotProcess(BotSpec([sys.executable, str(BOTS / "shmchannel.py")],
                                 sandbox=SandboxPolicy("bwrap")),
                         time_control=TimeControl(startup_seconds=30, per_decision_seconds=30))
        bots.append(bot.start())
    sender, receiver = bots
    ids = iter(range(1, 1000))

    def ask(bot: BotProcess, **what: object) -> dict:
        reply, _elapsed = bot.request({"type": "request", "id": next(ids), **what})
        return reply

    try:
        sent = [random.randrange(1, 32) for _ in range(12)]
        got = []
        for value in sent:
            before = ask(receiver, do="read")["shmem_kb"]
            ask(sender, do="send", mb=value)
            after = ask(receiver, do="read")["shmem_kb"]
            ask(sender, do="send", mb=0)
            got.append(round((after - before) / 1024))
    finally:
        for bot in bots:
            bot.close(grace=0.5)
    right = sum(s == g for s, g in zip(sent, got))
    # Not closed on one machine: the counters are not per namespace (only a
    # virtual machine per bot closes them).  Documented, not asserted either
    # way: other processes move the count now and then.
    print(f"{right} of {len(sent)} values passed through the Shmem count")
    assert_documented("the machine's `Shmem` count", "test_two_bots_can_signal_each_other_through_the_machines")


@needs_bwrap
def test_a_bot_process_can_leave_marks_for_a_later_one_in_the_page_cache_a_documented_limit(visible_dir: Path) -> None:
    shared = visible_dir / "shared.bin"
    with open(shared, "wb") as f:         # any file every bot can read (a library, a JDK's modules)
        f.write(os.urandom(64 * 4096))
        f.flush()
        os.fsync(f.fileno())              # clean pages: they can be dropped from the cache

    def once(**what: object) -> dict:
        """One request to a fresh process, closed before the next one starts."""
        bot = BotProcess(BotSpec([sys.executable, str(BOTS / "pagecache.py")],
                                 env={"PAGECACHE_FILE": str(shared)},
                                 sandbox=SandboxPolicy("bwrap", read=(str(shared),))),  # shown wherever it lies
                         time_control=TimeControl(startup_seconds=30, per_decision_seconds=30))
        bot.start()
        try:
            reply, _elapsed = bot.request({"type": "request", "id": 1, **what})
        finally:
            bot.close(grace=0.5)
        return reply

    value = random.getrandbits(64) | 1
    once(do="clear", bits=64)
    once(do="send", value=value, bits=64)          # a rotation's process: its hand, say
    got = once(do="read", bits=64)["value"]        # the next rotation's fresh process
    # Not closed on one machine: the page cache is the kernel's, shared by
    # every process.  Documented, not asserted either way: memory pressure
    # can drop the pages between the two processes.
    print(f"{64 - bin(got ^ value).count('1')} of 64 bits passed through the page cache")
    assert_documented("**The page cache.**", "test_a_bot_process_can_leave_marks_for_a_later_one_in_the_page_cache")


# ------------------------------------------------------------ resources

@needs_bwrap
def test_files_in_the_private_file_systems_count_toward_the_memory_limit(visible_dir: Path) -> None:
    """/tmp (the memory limit's size), /dev/shm (64 MB), /run and /var/tmp
    (16 MB) and the scratch directory are each bounded, but they are memory
    in no process's resident set: a bot limited to 64 MB held 274 MB."""
    scratch = visible_dir / "scratch"
    scratch.mkdir()
    bot = BotProcess(BotSpec([sys.executable, str(BOTS / "tmpfs_hog.py"), "64", "2"], memory_mb=64,
                             sandbox=SandboxPolicy("bwrap", scratch=str(scratch))),
                     time_control=TimeControl(startup_seconds=30, per_decision_seconds=30))
    bot.start()
    try:
        with pytest.raises(BotFailure, match="memory limit exceeded") as failed:
            reply, _elapsed = bot.request({"type": "request", "id": 1})
            pytest.fail(f"a bot limited to 64 MB held {reply['held']} MiB in files")
        # The kernel counts its tmpfs pages in its cgroup; the watchdog adds up the files.
        assert "files in its /tmp" in str(failed.value) or "its cgroup" in str(failed.value), failed.value
    finally:
        bot.close(grace=0.5)
