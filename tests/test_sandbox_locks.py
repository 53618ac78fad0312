"""File locks in the sandbox: every lock call succeeds and locks nothing; leases
and directory notifications are refused.

Programs take locks without asking (the JVM's perf-data file, SQLite), and a
refused lock makes some of them print a warning on stdout, before 'ready'.
But a real lock on a file two bots can both read (the interpreter, say) is a
channel between them: so the seccomp filter lets the calls that take a lock
return 0 without doing anything, and the ones that test for a lock ask the
kernel, which then never sees a bot's lock (arena/process/confine/seccomp.py).

Real bot processes (tests/bots/locks.py), each locking and probing its own
script, copied per test so that parallel tests lock different files.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import struct
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.process import BotProcess, BotSpec, SandboxPolicy
from arena.process.confine import seccomp

BOTS = Path(__file__).parent / "bots"
FLOCK = "hhqqi4x"         # struct flock on 64-bit Linux


@pytest.fixture
def start(tmp_path: Path) -> Iterator:
    script = tmp_path / "locks.py"
    shutil.copy(BOTS / "locks.py", script)
    started: list[BotProcess] = []

    def _start(mode: str) -> BotProcess:
        bot = BotProcess(BotSpec([sys.executable, str(script)], cwd=tmp_path,
                                 sandbox=SandboxPolicy(mode)))
        started.append(bot)
        return bot.start()

    yield _start
    for bot in started:
        bot.close(grace=0.5)


def ask(bot: BotProcess, what: str) -> dict:
    reply, _elapsed = bot.request({"id": 1, "do": what}, timeout=30)
    return {k: v for k, v in reply.items() if k != "id"}


def test_the_seccomp_filter_is_there():
    """The tests below prove nothing without it (libseccomp comes with the test extras)."""
    assert seccomp.available()


def test_a_sandboxed_bots_lock_calls_succeed(start):
    bot = start("bwrap")
    done = ask(bot, "lock")
    assert done.pop("raw_setlk") in ("ok", "unsupported")
    assert done == {"flock": "ok", "setlk": "ok", "ofd_setlk": "ok"}
    # Nothing is locked, so testing for a lock tells the truth: no conflict.
    assert ask(bot, "probe") == {"flock": "ok", "getlk": "free", "ofd_getlk": "free"}


@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_two_bots_cannot_signal_each_other_through_locks_on_a_shared_file(start, mode):
    sender, receiver = start(mode), start(mode)
    assert set(ask(sender, "lock").values()) <= {"ok", "unsupported"}
    seen = ask(receiver, "probe")
    if mode == "none":       # the channel the sandbox closes: the locks are real
        assert seen == {"flock": "EAGAIN", "getlk": "locked at 100", "ofd_getlk": "locked at 100"}
    else:
        assert seen == {"flock": "ok", "getlk": "free", "ofd_getlk": "free"}


def host_probe(path: Path) -> str:
    """What the host sees on ``path``: "free", or where a lock starts."""
    with open(path, "rb") as f:
        res = fcntl.fcntl(f, fcntl.F_GETLK, struct.pack(FLOCK, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0))
    kind, _whence, start, _len, _pid = struct.unpack(FLOCK, res)
    return "free" if kind == fcntl.F_UNLCK else f"locked at {start}"


def test_a_lock_command_with_high_bits_set_is_no_lock_either(start, tmp_path):
    """The kernel reads fcntl's command as 32 bits: a filter comparing all 64
    would let F_SETLK | 1 << 32 take a real lock."""
    sender = start("bwrap")
    if ask(sender, "lock")["raw_setlk"] == "unsupported":
        pytest.skip("no fcntl system call number for this machine in tests/bots/locks.py")
    assert host_probe(tmp_path / "locks.py") == "free"


@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_two_bots_cannot_signal_each_other_through_leases_or_directory_notifications(start, mode):
    """A lease or a directory notification on a file both bots can read tells
    the holder when the other opens or reads it: both are refused (EPERM)."""
    watcher, toucher = start(mode), start(mode)
    for bot in (watcher, toucher):      # running: done opening their script to start
        assert ask(bot, "signals") == {"signals": 0}
    took = ask(watcher, "watch")
    touched = ask(toucher, "touch")
    deadline = time.monotonic() + 5
    while (seen := ask(watcher, "signals")["signals"]) == 0 and mode == "none" and time.monotonic() < deadline:
        time.sleep(0.05)        # signals are delivered at once; a loaded machine may be slow to run it
    if mode == "none":          # the channels the sandbox closes
        assert took == {"lease": "ok", "notify": "ok"} and touched == {"open": "EAGAIN"} and seen > 0
    else:
        assert took == {"lease": "EPERM", "notify": "EPERM"}
        assert touched == {"open": "ok"} and seen == 0
