"""What a bot writes on stderr after its last decision (on 'end', or as it
quits) is in its match's log, and the match's record points to that log.

A pooled process (every tournament worker keeps its bots) gets 'quit' only
when its worker ends, long after its last match was stored; the match result
is made right after 'end' is sent, before the bot has read it.  The bot used
here, tests/gamebots/late_stderr.py, writes nothing while deciding.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path

from click.testing import CliRunner

from arena.cli import main
from arena.match import BotPool, MatchSpec, SeatSpec, run_match
from arena.process import TimeControl
from arena.process.streams import LazyLog, StderrReader, Wakeup
from arena.report.replay import decision_stderr

GAMEBOTS = Path(__file__).parent / "gamebots"
RULES = {"contracts": ["2S3", "S3+R4"], "turn_cap_per_player": 15}
TC = TimeControl(startup_seconds=10.0, per_decision_seconds=5.0)


def late(*flags: str) -> SeatSpec:
    return SeatSpec.command([sys.executable, str(GAMEBOTS / "late_stderr.py"), *flags], name="late")


def spec(tmp_path: Path, seed: int, *seats: SeatSpec) -> MatchSpec:
    return MatchSpec(f"t{seed}", seats, RULES, seed=seed, time=TC, log_dir=str(tmp_path / "logs"))


def test_a_pooled_bot_that_writes_only_as_it_quits_has_its_log_recorded(tmp_path: Path) -> None:
    match = spec(tmp_path, 1, late("--on-quit"), SeatSpec.builtin("random"))
    with BotPool() as pool:
        result = run_match(match, pool)
        # The bot has written nothing yet: it writes when the pool closes.
        assert not os.path.exists(str(match.stderr_log(0)))
    assert result.stderr_logs == (match.stderr_log(0), None)      # None: the built-in seat
    assert Path(str(result.stderr_logs[0])).read_text() == "quitting now\n"


def test_nothing_a_kept_bot_writes_after_end_is_lost(tmp_path: Path) -> None:
    """Its stderr moves to the next match's log when that match takes the
    process: what it wrote after 'end' is in the first log, or (when it read
    'end' only once the next match had begun) at the head of the second;
    each match's record points to its log whichever it is."""
    with BotPool() as pool:
        first = run_match(spec(tmp_path, 1, late("--on-end", "--on-quit"), SeatSpec.builtin("random")), pool)
        second = run_match(spec(tmp_path, 2, late("--on-end", "--on-quit"), SeatSpec.builtin("random")), pool)
        assert second.reused[0] and second.pids[0] == first.pids[0]
    logs = [Path(str(r.stderr_logs[0])) for r in (first, second)]
    assert logs[0] != logs[1] and logs[1].exists()
    text = "".join(p.read_text() for p in logs if p.exists())
    assert text == (f"summary of t1: places {list(first.places)}\n"
                    f"summary of t2: places {list(second.places)}\nquitting now\n")


def test_the_last_decision_does_not_claim_what_the_bot_wrote_after_the_match(tmp_path: Path) -> None:
    """Without a pool (``arena play``) the process is closed before the
    result is made: the match's stderr end is still marked."""
    match = spec(tmp_path, 3, late("--on-quit"), SeatSpec.builtin("random"))
    result = run_match(match)
    log = str(result.stderr_logs[0])
    assert Path(log).read_text() == "quitting now\n"
    trace = result.record["trace"][0]
    assert trace["stderr_end"] == 0          # nothing written during the match
    last = trace["decisions"][-1][0]
    assert decision_stderr(result.record, 0, last, log) is None


def test_switching_logs_keeps_what_the_pipe_holds_in_the_old_log(tmp_path: Path) -> None:
    """Bytes already in the pipe when a kept process moves to its next
    match were written before that match: they stay in the old log, even if
    the reader thread has not taken them in yet (here it never runs)."""
    r, w = os.pipe()
    old, new = LazyLog(tmp_path / "old.log"), LazyLog(tmp_path / "new.log")
    with os.fdopen(r, "rb", buffering=0) as stream:
        reader = StderrReader("bot", stream, Wakeup(), old, max_bytes=1000)
        os.write(w, b"after end\n")
        assert reader.switch_log(new)
        os.write(w, b"next match\n")
        os.close(w)
        assert not reader.drain()      # the end of the stream
        reader.switch_log(None)
    assert (tmp_path / "old.log").read_bytes() == b"after end\n"
    assert (tmp_path / "new.log").read_bytes() == b"next match\n"


def test_arena_run_stores_every_late_log_and_show_lists_it(tmp_path: Path) -> None:
    tournament = tmp_path / "t.yaml"
    command = [sys.executable, str(GAMEBOTS / "late_stderr.py"), "--on-quit"]
    tournament.write_text(f"""
name: late
bots:
  - name: late
    command: {json.dumps(command)}
  - name: other
    builtin: random
players: 2
rules: {json.dumps(RULES)}
time: {{startup: 20, per_move: 5}}
deals: 2
seed: 3
""")
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["run", str(tournament), "--out", str(out), "--jobs", "1"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    with sqlite3.connect(out / "results.sqlite") as db:
        rows = db.execute("select match_id, bot, stderr_log from seats").fetchall()
    late_rows = [(m, p) for m, bot, p in rows if bot == "late"]
    assert len(late_rows) == 4 and all(p is not None for _m, p in late_rows)
    assert all(p is None for _m, bot, p in rows if bot == "other")
    # Each process quits once (the last match it played): its line is in that
    # match's log, and every log file there is one the store points to.
    written = {str(p) for p in (out / "logs").glob("*.stderr.log")}
    assert written and written <= {p for _m, p in late_rows}
    assert all(Path(p).read_text() == "quitting now\n" for p in written)
    match_id = next(m for m, p in late_rows if p in written)
    shown = CliRunner().invoke(main, ["show", str(out), match_id], catch_exceptions=False)
    assert shown.exit_code == 0, shown.output
    assert f"seat {0 if '-r0-' in match_id else 1} (late): " in shown.output
    assert "no bot wrote on stderr" not in shown.output
