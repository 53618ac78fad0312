"""interrupts_deferred: a Ctrl-C or SIGTERM during a bot's start is handed on after it."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from arena.cli.common import Interrupted, Terminated, stop_signals
from arena.process.interrupts import interrupts_deferred


def signal_self(signum: int) -> None:
    """``signum`` to this thread (the main one), delivered before the call
    returns.  ``os.kill`` of the process may go to another thread (pytest-xdist
    runs some), and under load the main thread then runs on for a while
    before Python sees the signal."""
    signal.pthread_kill(threading.get_ident(), signum)


def test_a_signal_inside_is_handed_to_the_old_handler_on_leaving() -> None:
    seen: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts_deferred():
            signal_self(signal.SIGINT)
            seen.append("still running")       # not interrupted here
            signal_self(signal.SIGINT)   # twice: handed on once
    assert seen == ["still running"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_handlers_are_restored_and_nothing_is_raised_without_a_signal() -> None:
    calls: list[int] = []
    old = signal.signal(signal.SIGTERM, lambda s, f: calls.append(s))
    try:
        with interrupts_deferred():
            pass
        assert calls == []
        with interrupts_deferred():
            signal_self(signal.SIGTERM)
            assert calls == []
        assert calls == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, old)


def test_ignored_signals_stay_ignored_and_other_threads_are_left_alone() -> None:
    old = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        with interrupts_deferred():
            assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
            signal_self(signal.SIGTERM)
    finally:
        signal.signal(signal.SIGTERM, old)
    errors: list[BaseException] = []

    def in_thread() -> None:
        try:
            with interrupts_deferred():   # signal.signal would refuse here: must not be called
                pass
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
    t = threading.Thread(target=in_thread)
    t.start()
    t.join()
    assert errors == []


def test_a_command_stops_at_the_first_signal_and_ignores_the_next() -> None:
    """clicommon.stop_signals, around every arena command: SIGTERM raises as a
    Ctrl-C does (Terminated is a KeyboardInterrupt), later signals are ignored."""
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    seen: list[str] = []
    try:
        with pytest.raises(Terminated):
            with stop_signals():
                try:
                    signal_self(signal.SIGTERM)
                    seen.append("not interrupted")
                finally:
                    signal_self(signal.SIGINT)      # a Ctrl-C during the clean-up
                    signal_self(signal.SIGTERM)
                    seen.append("clean-up done")
        assert seen == ["clean-up done"]
        # Ignored at the OS level now: the interpreter's shutdown would put a
        # Python handler back to the default action, and a late SIGTERM would
        # end the process by the signal (-15) instead of with status 143.
        assert signal.getsignal(signal.SIGTERM) == signal.getsignal(signal.SIGINT) == signal.SIG_IGN
        signal_self(signal.SIGINT)                  # still ignored: the command is ending
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
    assert isinstance(Terminated(), KeyboardInterrupt)
    with stop_signals():                                    # no signal: the handlers come back
        assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_the_line_and_the_status_of_a_stopped_command() -> None:
    with stop_signals():                    # a command's, where no signal came
        term = Interrupted.by(Terminated(), "the match was stopped")
        ctrl_c = Interrupted.by(KeyboardInterrupt(), "the match was stopped")
    assert (term.message, term.exit_code) == ("terminated (SIGTERM): the match was stopped", 143)
    assert (ctrl_c.message, ctrl_c.exit_code) == ("interrupted: the match was stopped", 130)


def test_a_sigterm_a_library_turned_into_a_plain_ctrl_c_is_still_a_sigterm() -> None:
    """Ray's core catches what the handler raised while it waits in C++ and
    raises a KeyboardInterrupt of its own: the SIGTERM that came still makes
    the line "terminated (SIGTERM)" and the status 143 (a Ray run said
    "interrupted", 130, under load)."""
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        with stop_signals():
            try:
                try:
                    signal_self(signal.SIGTERM)
                except Terminated:
                    raise KeyboardInterrupt from None       # as Ray's check of signals does
            except KeyboardInterrupt as stop:
                line = Interrupted.by(stop, "the matches already finished are stored")
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
    assert (line.message, line.exit_code) == (
        "terminated (SIGTERM): the matches already finished are stored", 143)
    with stop_signals():                    # the next command: a Ctrl-C is a Ctrl-C again
        assert Interrupted.by(KeyboardInterrupt()).exit_code == 130


def test_a_reader_gone_ends_a_command_with_141_and_no_traceback(tmp_path) -> None:
    """`arena check BOT | head`: the reader closes the pipe. Click would exit
    1, the status of a failed step; a program a SIGPIPE ends is 141."""
    import subprocess
    import sys
    from pathlib import Path

    minimal = Path(__file__).parent / "gamebots" / "minimal.py"
    read, write = os.pipe()
    os.close(read)                 # gone before the first line
    try:
        done = subprocess.run([sys.executable, "-m", "arena", "check", f"{sys.executable} {minimal}",
                               "--log-dir", str(tmp_path)],
                              stdout=write, stderr=subprocess.PIPE, timeout=300)
    finally:
        os.close(write)
    assert done.returncode == 141, done.stderr.decode()
    assert done.stderr == b""
