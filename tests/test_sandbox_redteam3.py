"""Third red-team review (docs/SECURITY.md): attacks the first two reviews
(test_sandbox_redteam.py, test_sandbox_redteam2.py) did not try.

Each ``xfail(strict=True)`` test is a weakness of the current code: it fails
today and must pass once the weakness is fixed (then drop the mark); the
reason of each mark names the suggested fix.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from arena.process import BotProcess, BotSpec, TimeControl, sandbox
from arena.process.sandbox import SandboxPolicy

BOTS = Path(__file__).parent / "bots"
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
    assert bot._turns is not None
    n, cpu = 1, 0.0
    deadline = time.monotonic() + WAIT
    while not bot._turns.caught and cpu < enough and time.monotonic() < deadline:
        reply, _elapsed = bot.request({"type": "request", "id": n})
        cpu = float(reply["cpu"])
        n += 1
        time.sleep(0.1)
    return cpu


@needs_bwrap
def test_children_waited_for_count_as_computing_between_turns(tmp_path: Path) -> None:
    bot = start_children_bot(tmp_path)
    try:
        cpu = off_turn_children_cpu(bot, enough=2.0)
        assert bot._turns is not None and bot._turns.caught, \
            f"children used {cpu:.2f} s of CPU between the bot's turns unseen"
    finally:
        bot.close(grace=0.5, term_grace=0.2)


@needs_bwrap
@pytest.mark.xfail(strict=True, reason=(
    "a bot that ignores SIGCHLD (or sets SA_NOCLDWAIT) and computes between its turns in "
    "children living a few ms each is never caught: the kernel reaps them at once and adds "
    "their CPU to no process, and a watchdog scan every 0.25 s rarely sees one alive. Fix: "
    "account a bot's CPU by a cgroup of its own (cpu.stat counts every task, reaped or not) "
    "where a delegated cgroup is available; a seccomp rule on rt_sigaction(SIGCHLD) cannot "
    "see whether the action asked for is SIG_IGN or SA_NOCLDWAIT"))
def test_children_reaped_by_the_kernel_count_as_computing_between_turns(tmp_path: Path) -> None:
    bot = start_children_bot(tmp_path, "--autoreap")
    try:
        cpu = off_turn_children_cpu(bot, enough=2.0)
        assert bot._turns is not None and bot._turns.caught, \
            f"children used {cpu:.2f} s of CPU between the bot's turns unseen"
    finally:
        bot.close(grace=0.5, term_grace=0.2)
