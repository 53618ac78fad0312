"""How a bot that goes wrong the way a newcomer's does is told about it: a
banner on stdout before 'ready', a runtime that prints its error on stdout
and exits (the JVM refused its memory: tests/test_java_example.py), a bot
that closes its stdout.  Real bot processes (tests/gamebots/banner.py,
close_stdout.py), in the default sandbox and, where it differs, without.
"""

from __future__ import annotations

import select
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.match import BotPool, Fault, MatchResult, MatchSpec, SeatSpec, run_match
from arena.process import SandboxPolicy, TimeControl
from arena.process import bot as bot_module
from arena.process.exchange import drain_pending
from arena.process.transport import PipeTransport

GAMEBOTS = Path(__file__).parent / "gamebots"
TIME = TimeControl(startup_seconds=10.0, per_decision_seconds=2.0)
BANNER = r"\x1b[1mMy Shanghai bot v1 ♥ starting\x1b[0m"     # as quoted: escapes written out
HINT = "stdout is for protocol lines only; write logs to stderr"


def banner_bot(*args: str) -> SeatSpec:
    return SeatSpec.command([sys.executable, str(GAMEBOTS / "banner.py"), *args], name="banner")


def play(tmp_path: Path, seat: SeatSpec) -> MatchResult:
    spec = MatchSpec("t1", (seat, SeatSpec.builtin("random")), {"contracts": ["2S3"]}, seed=1,
                     time=TIME, log_dir=str(tmp_path / "logs"))
    return run_match(spec)


def test_a_banner_before_ready_is_quoted_with_a_hint(tmp_path):
    (fault,) = play(tmp_path, banner_bot()).faults_of(0)
    assert (fault.kind, fault.decision, fault.forfeit) == ("malformed", None, True)
    assert fault.detail.startswith("not valid JSON")
    # The line, escaped (no escape sequence reaches a terminal), and what to do about it.
    assert f'"{BANNER}"' in fault.detail and "instead of 'ready'" in fault.detail
    assert fault.detail.endswith(HINT), fault.detail
    assert "\x1b" not in fault.detail and "\n" not in fault.detail
    assert fault.excerpt == BANNER


def test_arena_check_shows_the_banner_and_the_hint_and_no_raw_escape(tmp_path):
    res = CliRunner().invoke(main, ["check", f"{sys.executable} {GAMEBOTS / 'banner.py'}",
                                    "--log-dir", str(tmp_path)])
    assert res.exit_code == 1, res.output
    start = next(line for line in res.output.splitlines() if line.startswith("  FAIL  start"))
    assert f'"{BANNER}"' in start and HINT in start, start
    assert "\x1b" not in res.output        # the reply line too is shown escaped
    assert f"reply: {BANNER}" in res.output


def test_a_line_of_prose_in_place_of_a_reply_gets_the_same_hint(tmp_path):
    """A debug print before the reply is taken for the reply: the fault (and
    the error notice the bot gets, which carries the same reason) says where
    such lines belong."""
    seat = SeatSpec.command([sys.executable, str(GAMEBOTS / "garbage.py")], name="garbage")
    faults = play(tmp_path, seat).faults_of(0)
    assert [f.kind for f in faults] == ["malformed"] * 3
    for fault in faults:
        assert fault.detail.startswith("not valid JSON") and fault.detail.endswith(f"; {HINT}"), fault.detail
        assert fault.excerpt == "I think I will discard the seven of hearts"
        # quoted in the reason too: `arena play` prints only the reason
        assert 'instead of a reply: "I think I will discard the seven of hearts"' in fault.detail


FLUSH_HINT = ("no request of this match answered yet: does the bot flush stdout after each reply, "
              "not only after 'ready'?")


@pytest.mark.parametrize("answered", [0, 2])
def test_timeouts_before_any_reply_ask_about_flushing_and_later_ones_do_not(tmp_path, answered):
    """A bot that flushes its 'ready' but not its replies (a C bot with one
    fflush in its start branch) times out at every request: say why it may."""
    seat = SeatSpec.command([sys.executable, str(GAMEBOTS / "silent_after.py"), str(answered)],
                            name="quiet")
    spec = MatchSpec("t1", (seat, SeatSpec.builtin("random")), {"contracts": ["2S3"]}, seed=1,
                     time=TimeControl(startup_seconds=10.0, per_decision_seconds=0.6),
                     log_dir=str(tmp_path / "logs"))
    faults = run_match(spec).faults_of(0)
    assert [f.kind for f in faults] == ["timeout"] * 3
    for fault in faults:
        assert fault.detail.startswith("no reply within 0.600 s")
        assert (FLUSH_HINT in fault.detail) == (answered == 0), fault.detail


def test_a_kept_process_that_answered_before_is_not_asked_about_flushing(tmp_path):
    """A process kept from its last match, where it answered, that times out at
    the first request of the next one (a slow decision now and then) flushes:
    the hint sent a student looking for a bug it does not have."""
    seat = SeatSpec.command([sys.executable, str(GAMEBOTS / "silent_second_match.py")], name="slow")
    tc = TimeControl(startup_seconds=10.0, per_decision_seconds=0.6)

    def spec(seed: int) -> MatchSpec:
        return MatchSpec(f"t{seed}", (seat, SeatSpec.builtin("random")), {"contracts": ["2S3"]},
                         seed=seed, time=tc, log_dir=str(tmp_path / "logs"))

    with BotPool() as pool:
        assert not run_match(spec(1), pool).faults_of(0)
        second = run_match(spec(2), pool)
        assert pool.reuses == 1           # the same process, in its second match
    faults = second.faults_of(0)
    assert [f.kind for f in faults] == ["timeout"] * 3
    for fault in faults:
        assert FLUSH_HINT not in fault.detail, fault.detail


def runtime_error_bot(mode: str, *args: str) -> SeatSpec:
    """A bot that prints a JVM's start-up error on stdout and exits with code 3 (banner.py)."""
    return SeatSpec.command([sys.executable, str(GAMEBOTS / "banner.py"), "--exit", "3", *args],
                            name="banner", sandbox=SandboxPolicy(mode))


def assert_a_quoted_runtime_error(fault: Fault) -> None:
    assert (fault.kind, fault.decision, fault.forfeit) == ("crash", None, True)
    # The exit is the fault; what it printed is the context, quoted.
    assert fault.detail.startswith("exited with code 3"), fault.detail
    assert 'stdout: "Error occurred during initialization of VM | Could not reserve' in fault.detail
    assert fault.excerpt == "Error occurred during initialization of VM"


@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_a_bot_that_prints_its_error_on_stdout_and_exits_is_a_crash_with_its_exit_code(tmp_path, mode):
    (fault,) = play(tmp_path, runtime_error_bot(mode)).faults_of(0)
    assert_a_quoted_runtime_error(fault)
    assert HINT not in fault.detail


@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_a_bot_gone_before_the_arena_first_writes_has_its_stdout_quoted(tmp_path, mode, monkeypatch):
    """On a busy machine the runtime has printed its error and exited before
    'start' is written: the write finds the pipe closed, and what the bot
    wrote is still quoted (it was not, and this test's sibling failed under load)."""
    first_write = PipeTransport.write

    def write_once_gone(self: PipeTransport, data: bytes, deadline: float, limit: float) -> float:
        if "banner" in self.label:
            gone_by = time.monotonic() + 30
            while not self._leader_exited() and time.monotonic() < gone_by:
                time.sleep(0.01)
        return first_write(self, data, deadline, limit)

    monkeypatch.setattr(PipeTransport, "write", write_once_gone)
    monkeypatch.setattr(PipeTransport, "send_and_wait", lambda self, data, deadline, limit: (None, None))
    (fault,) = play(tmp_path, runtime_error_bot(mode)).faults_of(0)
    assert_a_quoted_runtime_error(fault)


def test_what_a_new_bot_wrote_before_start_is_its_answer_even_if_read_late(tmp_path, monkeypatch):
    """On a busy machine the arena read the runtime's error before it wrote
    'start', threw it away as unasked, and the crash said only "exited with
    code 3".  Here the arena waits until those lines are in the pipe."""
    def drain_once_written(transport, ignored):
        select.select([transport._stdout.fd], [], [], 30)     # the bot's lines are there
        return drain_pending(transport, ignored)

    monkeypatch.setattr(bot_module, "drain_pending", drain_once_written)
    (fault,) = play(tmp_path, runtime_error_bot("none", "--linger", "0.5")).faults_of(0)
    assert_a_quoted_runtime_error(fault)


@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_a_bot_that_closes_its_stdout_crashed_at_once(tmp_path, mode):
    """In the sandbox bubblewrap keeps a copy of the bot's stdout, so no end of file
    comes: without a look at the bot's own descriptors it got three timeouts."""
    seat = SeatSpec.command([sys.executable, str(GAMEBOTS / "close_stdout.py")], name="closer",
                            sandbox=SandboxPolicy(mode))
    faults = play(tmp_path, seat).faults_of(0)
    assert [(f.kind, f.forfeit) for f in faults] == [("crash", True)], faults
    assert faults[0].decision is not None
    assert faults[0].detail.startswith("closed its stdout"), faults[0].detail
