"""The estimate `arena run` prints before it plays (issue 32): the time limits
a bot runs into, not a flat guess per match, make a class's run long.  A
class whose slow and unflushed bots timed out was estimated at 0.8 min and
took 11: each stored or probed timeout must cost its limit.

The figures are checked against the lower bound the limits set, from
numbers; the one real probe times a bot that sleeps past its limit.
"""

from __future__ import annotations

import sys
from pathlib import Path

from arena.match.probe import Probe
from arena.tournament.config.load import load_config
from arena.tournament.config.model import TournamentConfig
from arena.tournament.estimate import probe_bots, probe_seconds, run_seconds, seat_seconds, unmeasured
from arena.tournament.pairing.schedule import build_schedule
from arena.tournament.results.rows import StoredMatch

GAMEBOTS = Path(__file__).resolve().parent / "gamebots"
PY = sys.executable


def a_class(tmp_path: Path, per_decision: float = 1.0) -> TournamentConfig:
    """Ten bots at tables of three: greedy, one that sleeps past its
    per-decision limit, and eight prompt ones."""
    prompt = f"{{command: [{PY}, minimal.py], dir: {GAMEBOTS}}}"
    late = f"{{command: [{PY}, late.py, '{per_decision * 2.5}'], dir: {GAMEBOTS}}}"
    lines = ["name: cls", "players: 3", "seed: 123456789123", "rules: {contracts: [2S3, 2R4]}",
             f"time: {{per_decision: {per_decision}, startup: 10}}", "bots:",
             "  - {name: g, builtin: greedy}", f"  - {{name: late, {late[1:]}"]
    lines += [f"  - {{name: p{i}, {prompt[1:]}" for i in range(8)]
    (tmp_path / "cls.yaml").write_text("\n".join(lines) + "\n")
    return load_config(tmp_path / "cls.yaml")


def stored(config: TournamentConfig, timeouts: int, n: int = 6) -> list[StoredMatch]:
    """``n`` stored matches of the schedule's first, each seat answering 100
    decisions in 2 ms, but ``late`` timing out ``timeouts`` times and forfeited."""
    out = []
    for e in build_schedule(config)[:n]:
        stats = [{"count": 0 if name == "late" else 100, "mean": 0.002, "timeouts": timeouts if name == "late" else 0}
                 for name in e.seats]
        out.append(StoredMatch(e.match_id, e.index, e.table, e.rotation, e.deal, e.seed, list(e.seats),
                               [0] * 3, [1, 2, 3], [name == "late" for name in e.seats], [[0, 0, 0]], [None],
                               decision_stats=stats, duration_seconds=0.5 + 0.4 + timeouts * 1.0))
    return out


def test_a_stored_timeout_costs_its_limit(tmp_path: Path) -> None:
    config = a_class(tmp_path)
    assert seat_seconds({"count": 40, "mean": 0.002, "timeouts": 3}, [], config) >= 3 * 1.0
    missed = [{"kind": "timeout", "decision": None, "seat": 0}]
    assert seat_seconds({"count": 0, "mean": None, "timeouts": 0}, missed, config) >= 10.0


def test_a_resumed_run_with_a_bot_known_to_time_out_is_estimated_at_least_its_limits(tmp_path: Path) -> None:
    config = a_class(tmp_path)
    entries = build_schedule(config)
    done = stored(config, timeouts=3)
    left = entries[len(done):]
    with_late = sum("late" in e.seats for e in left)
    assert with_late > 10
    jobs = 2
    bound = with_late * 3 * 1.0 / jobs          # three strikes at 1 s each, per match it sits in
    seconds = run_seconds(config, left, jobs, done)
    assert seconds >= bound, (seconds, bound)
    assert seconds <= 1.3 * (bound + len(left) * (0.5 + 0.4 + 0.2) / jobs), seconds     # and not far above it
    assert "late" not in unmeasured(config, left, done)     # the others are timed by the run


def test_a_probe_that_timed_out_costs_the_limit_until_the_strikes_forfeit(tmp_path: Path) -> None:
    config = a_class(tmp_path)
    timed_out = Probe(ready=True, missed_start=False, startup_seconds=0.1, decisions=0, decision_seconds=0.0,
                      timeouts=3)
    assert probe_seconds(config, timed_out, decisions=150) >= 3 * 1.0
    never_ready = Probe(ready=False, missed_start=True, startup_seconds=10.0, decisions=0, decision_seconds=0.0,
                        timeouts=0)
    assert probe_seconds(config, never_ready, decisions=150) >= 10.0
    slow = Probe(ready=True, missed_start=False, startup_seconds=0.1, decisions=3, decision_seconds=3 * 0.7,
                 timeouts=0)
    assert probe_seconds(config, slow, decisions=150) >= 150 * 0.7     # slow but in time: every decision
    entries = build_schedule(config)
    with_late = sum("late" in e.seats for e in entries)
    seconds = run_seconds(config, entries, 2, (), {"late": timed_out})
    assert seconds >= with_late * 3 * 1.0 / 2


def test_a_bot_that_sleeps_past_its_limit_is_probed_as_timing_out(tmp_path: Path) -> None:
    config = a_class(tmp_path, per_decision=0.2)           # late.py sleeps 0.5 s a decision
    timed = probe_bots(config, ["late", "p0"], "none", jobs=2, seed=7)
    assert timed["late"].ready and timed["late"].timeouts >= 1, timed
    assert timed["p0"].ready and timed["p0"].timeouts == 0 and timed["p0"].decisions == 3, timed
    assert probe_seconds(config, timed["late"], decisions=150) >= 3 * 0.2
