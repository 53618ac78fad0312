"""The estimate `arena run` prints before it plays (issue 32): the time limits
a bot runs into, not a flat guess per match, make a class's run long.  A
class whose slow and unflushed bots timed out was estimated at 0.8 min and
took 11: each stored or probed timeout must cost its limit.

The figures are checked against the lower bound the limits set, from
numbers; the one real probe times a bot that sleeps past its limit.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from arena.match.probe import Lookalike, Probe
from arena.players.registry import make_player
from arena.process import DecisionStats
from arena.shanghai.game import Decision, Game
from arena.shanghai.ruleset import Ruleset
from arena.tournament.config.load import load_config
from arena.tournament.config.model import TournamentConfig
from arena.tournament.estimate import (
    DEALS,
    DEEPER,
    Estimate,
    probe_bots,
    probe_seconds,
    run_seconds,
    seat_seconds,
    table_decisions,
    timed_line,
    unmeasured,
)
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
    assert timed["p0"].ready and timed["p0"].timeouts == 0 and 3 <= timed["p0"].decisions <= DEEPER, timed
    # minimal.py draws from the stock, never buys and discards its first card: as passive does
    assert timed["p0"].plays_like == "passive", timed
    assert probe_seconds(config, timed["late"], decisions=150) >= 3 * 0.2


def slow(plays_like: str | None, timeouts: int = 0) -> Probe:
    """A probe of a bot that answers in 0.7 of its 1 s limit."""
    return Probe(ready=True, missed_start=False, startup_seconds=0.1, decisions=3, decision_seconds=3 * 0.7,
                 timeouts=timeouts, plays_like=plays_like)


def test_a_slow_bot_that_answers_in_time_is_counted_as_the_player_it_plays_like(tmp_path: Path) -> None:
    """How slow a bot is says nothing of how it plays: a slow bot whose probed
    moves were greedy's goes out as greedy does, one whose moves were
    passive's plays its hands to the turn cap; neither, random's.  Only a bot
    that runs into its limits plays the fallback moves (passive's)."""
    config = a_class(tmp_path)
    seats = ("late", "p0", "p1")
    counts = {}
    for like in ("greedy", "passive", None):
        estimate = Estimate(config, (), {"late": slow(like)}, seed=11)
        counts[like] = estimate.table(seats)[1]
        stand_in = like or "random"
        expected = sum(table_decisions(config, sorted((stand_in, "random", "random")), 11 + d)[1]
                       for d in range(DEALS)) / DEALS
        assert counts[like] == pytest.approx(expected)
    assert counts["greedy"] < counts[None] < counts["passive"], counts
    entries = build_schedule(config)
    runs = {like: run_seconds(config, entries, 2, (), {"late": slow(like)}) for like in ("greedy", "passive")}
    assert runs["greedy"] < runs["passive"], runs
    timed_out = Estimate(config, (), {"late": slow("greedy", timeouts=1)}, seed=11)
    assert timed_out.table(seats)[1] == pytest.approx(counts["passive"])


def test_a_kind_of_table_is_counted_on_several_deals(tmp_path: Path) -> None:
    """One deal's count of a greedy table is 0.7 to 1.5 times their mean: the mean of DEALS deals."""
    config = a_class(tmp_path)
    estimate = Estimate(config, seed=5)
    engine, decisions = estimate.table(("g", "g", "g"))
    one = [table_decisions(config, ("greedy",) * 3, 5 + d) for d in range(DEALS)]
    assert DEALS >= 3 and decisions == pytest.approx(sum(d for _, d in one) / DEALS)


class Scripted:
    """A bot's seat for ``Lookalike``: it answers each decision with
    ``role``'s move (a built-in player's), or lets one time out."""

    def __init__(self, role: str, seed: int, timeout_at: int = -1) -> None:
        self.player = make_player(role, random.Random(seed))
        self.stats, self.faults = DecisionStats(), []
        self.asked, self.timeout_at = 0, timeout_at

    def decide(self, game: Game, d: Decision) -> None:
        view = game.view(d.seat)
        # A timeout's fallback is passive's move, which the arena makes for it.
        player = make_player("passive", random.Random(0)) if self.asked == self.timeout_at else self.player
        move = player.draw(view) if d.kind == "draw" else player.buy(view) if d.kind == "buy" else player.play(view)
        if self.asked == self.timeout_at:
            self.stats.timeouts += 1
            self.faults.append("timeout")
        else:
            self.stats.record(0.1)
        self.asked += 1
        game.apply(move, d.seat)


def lookalike_of(role: str, seed: int = 0, timeout_at: int = -1) -> tuple[str | None, int]:
    """What ``Lookalike`` makes of seat 0 answering as ``role`` through a
    probe's decisions (the other seats random), and how many it was asked."""
    game = Game.seeded(Ruleset.from_mapping({"contracts": ["2S3", "2R4"]}), 3, 99)
    others = [make_player("random", random.Random(i)) for i in range(3)]
    bot, like = Scripted(role, seed, timeout_at), Lookalike(99)
    while (d := game.decision()) is not None and not like.enough(bot.asked, 3):
        if d.seat == 0:
            like.watch(game, d, bot)      # type: ignore[arg-type]
        else:
            view = game.view(d.seat)
            p = others[d.seat]
            game.apply(p.draw(view) if d.kind == "draw" else p.buy(view) if d.kind == "buy" else p.play(view),
                       d.seat)
    return like.plays_like(), bot.asked


def test_a_probe_tells_which_built_in_player_the_bot_plays_like() -> None:
    """passive and greedy are told every time; random's moves are neither's
    (by chance, as on 3 of 20 of its seeds here, it made greedy's moves
    only; a bot taken for greedy is counted as going out a little early)."""
    seeds = range(10)
    assert {lookalike_of("passive", seed)[0] for seed in seeds} == {"passive"}
    assert {lookalike_of("greedy", seed)[0] for seed in seeds} == {"greedy"}
    assert sum(lookalike_of("random", seed)[0] is None for seed in seeds) >= 7
    # a move the arena made for it (a timeout's fallback) is no move of its own
    assert lookalike_of("greedy", timeout_at=0)[0] == "greedy"
    assert lookalike_of("greedy", timeout_at=1)[0] == "greedy"
    assert all(3 <= lookalike_of(role)[1] <= 6 for role in ("passive", "greedy", "random"))


def test_the_timed_line_says_which_bots_answer_near_their_limit(tmp_path: Path) -> None:
    """A bot at 70 % of its limit can time out on a busy machine, and its
    matches then end sooner than its probe foresaw: the line says so, of it
    and not of a bot that is slow but far from its limit."""
    config = a_class(tmp_path)                              # a 1 s limit
    near = slow("greedy")                                   # 0.7 s a decision
    far = Probe(ready=True, missed_start=False, startup_seconds=0.1, decisions=3, decision_seconds=3 * 0.2,
                timeouts=0, plays_like="greedy")
    line = timed_line(config, {"late": near, "p0": far}, 600.0)
    assert line == ("timed each bot's start and first decisions: estimated 10.0 min (late took 0.70 s a "
                    "decision, 70% of its 1 s limit: on a busy machine it can time out and the run end "
                    "sooner; p0 took 0.20 s a decision)"), line


def test_a_bot_that_turns_slow_after_its_first_decisions_is_probed_as_timing_out(tmp_path: Path) -> None:
    """A bot whose first six answers are prompt and whose later ones sleep
    past the limit (a search that grows with its hand) times out only past
    the three to six decisions that tell its lookalike: a prompt bot is
    asked on, so its probe sees the timeout, and each of its matches is
    estimated at its strikes at the limit, not at six prompt answers."""
    later = f"{{name: later, command: [{PY}, late_later.py, '2.5', '6'], dir: {GAMEBOTS}}}"
    (tmp_path / "c.yaml").write_text("\n".join([
        "name: c", "players: 3", "seed: 123456789123", "rules: {contracts: [2S3, 2R4]}",
        "time: {per_decision: 1.0, startup: 10}", "bots:", "  - {name: g, builtin: greedy}",
        "  - {name: r, builtin: random}", f"  - {later}"]) + "\n")
    config = load_config(tmp_path / "c.yaml")
    timed = probe_bots(config, ["later"], "none", jobs=1, seed=7)
    probe = timed["later"]
    assert probe.ready and probe.decisions == 6 and probe.timeouts == 1, probe
    entries = build_schedule(config)
    strikes = config.faults.max_strikes * config.time.per_decision_seconds
    assert run_seconds(config, entries, 1, (), timed) >= len(entries) * strikes     # every match has it
