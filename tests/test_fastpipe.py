"""The optional C part of the process layer (``arena/process/_fastpipe.c``)
against the Python path it stands in for (``ARENA_PURE_PYTHON=1``).

- ``exchange`` on bare pipes: the usual case (one whole line) is returned as
  a line; anything else (two lines, a blank one, a too long one, the end of
  the pipe) as the bytes read, for the Python reader to split; a wait that
  ends otherwise (a timeout, another fd ready) reads nothing, and leaves the
  pipe as it was; with a line already waiting nothing is written (the Python
  path throws it away first); a write the pipe does not take whole says how
  much it took.
- Whole matches, with bots that answer as they should and bots that do not
  (twice, with ids never sent, with prose, with stderr on every request),
  store the same results both ways, on pinned seeds: the same actions, faults,
  ignored lines and records, all but the seconds.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.match import BotPool, MatchSpec, SeatSpec, run_match
from arena.process import SandboxPolicy, TimeControl
from arena.process import transport as transport_module

fastpipe = pytest.importorskip("arena.process._fastpipe", reason="the C part is not built here")

GAMEBOTS = Path(__file__).parent / "gamebots"
RULES = {"contracts": ["2S3", "S3+R4"]}
FAR = 1e12          # a deadline that never comes


@pytest.fixture
def pipes() -> Iterator[tuple[int, int, int, int]]:
    """(to_bot_r, to_bot_w, from_bot_r, from_bot_w); the ends the arena uses non-blocking."""
    to_r, to_w = os.pipe()
    from_r, from_w = os.pipe()
    os.set_blocking(to_w, False)
    os.set_blocking(from_r, False)
    yield to_r, to_w, from_r, from_w
    for fd in (to_r, to_w, from_r, from_w):
        try:
            os.close(fd)
        except OSError:
            pass


def _answer(to_r: int, from_w: int, answer: bytes | None) -> threading.Thread:
    """A bot on a thread: reads the request, then writes ``answer`` (None: closes its stdout)."""
    def run() -> None:
        os.read(to_r, 1 << 16)
        if answer is None:
            os.close(from_w)
        elif answer:
            os.write(from_w, answer)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_one_whole_line_is_the_reply(pipes: tuple[int, int, int, int]) -> None:
    to_r, to_w, from_r, from_w = pipes
    bot = _answer(to_r, from_w, b'{"id":1}\n')
    before = time.monotonic()
    written, t_sent, kind, payload, stamp = fastpipe.exchange(to_w, b"req\n", (from_r,), FAR, 100, 0.0)
    assert (written, kind, payload) == (4, 1, b'{"id":1}')
    assert before <= t_sent <= stamp <= time.monotonic()
    bot.join()


@pytest.mark.parametrize("sent", [b"a\nb\n", b" \r\n", b"x" * 101 + b"\n"],
                         ids=["two lines", "blank", "too long"])
def test_anything_else_is_handed_back_as_read(pipes: tuple[int, int, int, int], sent: bytes) -> None:
    to_r, to_w, from_r, from_w = pipes
    bot = _answer(to_r, from_w, sent)
    _written, _t, kind, payload, _stamp = fastpipe.exchange(to_w, b"req\n", (from_r,), FAR, 100, 0.0)
    bot.join()
    assert kind == 2 and sent.startswith(payload)      # a thread's write may come in two reads
    assert payload + os.read(from_r, 1 << 16) == sent if payload != sent else True


def test_a_line_of_a_whole_chunk_is_handed_back(pipes: tuple[int, int, int, int]) -> None:
    """A read of a whole chunk may have more behind it: the Python reader goes on."""
    to_r, to_w, from_r, from_w = pipes
    bot = _answer(to_r, from_w, b"x" * 65535 + b"\n")
    _written, _t, kind, payload, _stamp = fastpipe.exchange(to_w, b"req\n", (from_r,), FAR, 1 << 20, 0.0)
    bot.join()
    assert kind == 2 and payload is not None and set(payload.rstrip(b"\n")) == {ord("x")}


def test_the_end_of_the_pipe_is_handed_back_as_no_bytes(pipes: tuple[int, int, int, int]) -> None:
    to_r, to_w, from_r, from_w = pipes
    bot = _answer(to_r, from_w, None)
    assert fastpipe.exchange(to_w, b"req\n", (from_r,), FAR, 100, 0.0)[2:4] == (2, b"")
    bot.join()


def test_something_waiting_first_writes_nothing(pipes: tuple[int, int, int, int]) -> None:
    to_r, to_w, from_r, from_w = pipes
    os.write(from_w, b'{"id":0}\n')               # came while nobody asked
    assert fastpipe.exchange(to_w, b"req\n", (from_r,), FAR, 100, 0.0)[2:4] == (3, None)
    os.set_blocking(to_r, False)
    with pytest.raises(BlockingIOError):
        os.read(to_r, 100)                         # not written
    assert os.read(from_r, 100) == b'{"id":0}\n'     # not read


def test_a_timeout_or_another_fd_reads_nothing(pipes: tuple[int, int, int, int]) -> None:
    to_r, to_w, from_r, from_w = pipes
    assert fastpipe.exchange(to_w, b"req\n", (from_r,), time.monotonic() + 0.01, 100, 0.0)[2:4] == (0, None)
    assert os.read(to_r, 100) == b"req\n"        # taken: the bot below reads only the next request
    other_r, other_w = os.pipe()
    try:
        # The bot writes on stderr, then its reply: the wait ends with nothing
        # read, or with the reply read alone, never with the reply lost.
        bot = _answer(to_r, other_w, b"on stderr\n")
        result = fastpipe.exchange(to_w, b"req\n", (from_r, other_r), FAR, 100, 0.0)
        bot.join()
        assert result[2:4] == (0, None)
        assert os.read(other_r, 100) == b"on stderr\n"
    finally:
        os.close(other_r)
        os.close(other_w)


def test_a_write_the_pipe_does_not_take_whole(pipes: tuple[int, int, int, int]) -> None:
    to_r, to_w, from_r, _from_w = pipes
    data = b"x" * (4 << 20)
    written, _t, kind, _payload, _stamp = fastpipe.exchange(to_w, data, (from_r,), FAR, 100, 0.0)
    assert 0 < written < len(data) and kind == 0
    os.close(to_r)
    assert fastpipe.exchange(to_w, b"req\n", (from_r,), FAR, 100, 0.0)[0] == -1    # its reader is gone


def _seat(name: str, script: str, *args: str) -> SeatSpec:
    return SeatSpec.command([sys.executable, str(GAMEBOTS / script), *args], name=name,
                            sandbox=SandboxPolicy(mode="none"))


def _stored(result: Any) -> str:
    """A match's result as stored, but for the seconds (timings, stderr offsets
    that depend on what came when), the process ids and the examples of ignored lines."""
    record = dict(result.record)
    record["trace"] = [{**seat, "decisions": [[d[0], d[1]] for d in seat["decisions"]],
                        "stderr_end": None}
                       for seat in record["trace"]]
    return json.dumps({"record": record, "totals": result.totals, "places": result.places,
                       "faults": [(f.seat, f.kind, f.hand, f.decision, f.detail, f.strike) for f in result.faults],
                       # How many lines each seat had ignored, not the words: a line
                       # that comes as the arena writes is "unsolicited" or "with
                       # another id" as the race goes, either way.
                       "warnings": [(w.seat, w.count, w.hand, w.decision) for w in result.warnings],
                       "decisions": result.decisions}, sort_keys=True, default=str)


def _matches(tmp_path: Path, label: str) -> list[str]:
    seats = (_seat("minimal", "minimal.py"), _seat("twice", "twice.py"),
             _seat("chatty", "chatty.py", "--illegal-at", "3"), _seat("wrong", "wrong_id.py"))
    results = []
    with BotPool() as pool:
        for seed in (1, 7):
            for pair in ((0, 1), (2, 3), (0, 2)):
                spec = MatchSpec(f"{label}-{seed}-{pair}", tuple(seats[i] for i in pair), RULES, seed=seed,
                                 log_dir=str(tmp_path / label), time=TimeControl(per_decision_seconds=5))
                results.append(_stored(run_match(spec, pool)))
    return results


def test_matches_store_the_same_both_ways(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    taken = []
    exchange = fastpipe.exchange

    def counted(*args: Any) -> Any:
        taken.append(1)
        return exchange(*args)

    monkeypatch.setattr(transport_module, "_exchange", counted)
    fast = _matches(tmp_path, "fast")
    assert len(taken) > 1000                 # the C path played them
    monkeypatch.setattr(transport_module, "_exchange", None)
    assert _matches(tmp_path, "python") == fast
