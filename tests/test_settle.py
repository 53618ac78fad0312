"""Tournaments that play rounds until the order is settled (``settle:``) and
the Swiss format, end to end through the CLI with built-in players."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.ranking.matchmaking import cover, windows
from arena.tournament.config.load import load_config
from arena.tournament.config.model import ConfigError
from arena.tournament.results.database import ResultStore


def cli(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def tournament(tmp_path: Path, bots: list[tuple[str, str]], extra: str, players: int = 2) -> Path:
    lines = ["name: settle", "bots:"] + [f"  - {{name: {n}, builtin: {b}}}" for n, b in bots]
    lines += [f"players: {players}", "seed: 11", "rules: {contracts: [2S3]}",
              f"output: {tmp_path / 'out'}", extra]
    path = tmp_path / "t.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def stored_ids(out: Path) -> list[str]:
    with ResultStore(out / "results.sqlite", create=False) as store:
        return [m.match_id for m in sorted(store.matches(), key=lambda m: m.schedule_index)]


def test_a_clear_field_settles_before_the_budget_and_a_resumed_run_plays_the_same_rounds(tmp_path):
    bots = [("g", "greedy"), ("r", "random"), ("p", "passive")]
    path = tournament(tmp_path, bots, "settle: {confidence: 0.9, max_matches: 400}")
    first = cli("run", str(path), "--jobs", "1")
    assert first.exit_code == 0, first.output
    assert "stopped: every adjacent pair is separated" in first.output
    ids = stored_ids(tmp_path / "out")
    assert 6 <= len(ids) < 400 and len(ids) % 6 == 0          # whole rounds of 3 tables x 2 rotations
    board = cli("leaderboard", str(tmp_path / "out"))
    assert [line.split()[:2] for line in board.output.splitlines()[5:8]] == [["1", "g"], ["2", "r"], ["3", "p"]]
    assert "TrueSkill of every hand" in board.output
    by_match = cli("leaderboard", str(tmp_path / "out"), "--rating", "matches", "--format", "json")
    rows = json.loads(by_match.output)["leaderboard"]
    assert [r["bot"] for r in rows] == ["g", "r", "p"]
    assert "TrueSkill of every match" in cli("leaderboard", str(tmp_path / "out"), "--rating", "matches").output
    # Interrupted mid-way: the last rounds' matches are gone; the next run
    # plays exactly the matches the uninterrupted run played.
    db = tmp_path / "out" / "results.sqlite"
    with sqlite3.connect(db) as c:
        c.execute("PRAGMA foreign_keys = ON")
        c.execute("DELETE FROM matches WHERE schedule_index >= ?", (len(ids) - 8,))
    assert len(stored_ids(tmp_path / "out")) == len(ids) - 8
    again = cli("run", str(path), "--jobs", "1")
    assert again.exit_code == 0, again.output
    assert "resuming" in again.output and stored_ids(tmp_path / "out") == ids


def test_equal_bots_never_settle_and_the_budget_stops_swiss(tmp_path):
    bots = [(f"r{i}", "random") for i in range(5)]
    path = tournament(tmp_path, bots, "format: swiss\nsettle: {max_matches: 40}")
    done = cli("run", str(path), "--jobs", "1")
    assert done.exit_code == 0, done.output
    assert "stopped: the match budget (settle.max_matches) is used up" in done.output
    assert "adjacent pair(s) not separated" in done.output
    ids = stored_ids(tmp_path / "out")
    assert 0 < len(ids) <= 40 and all(i.startswith("s") for i in ids)
    # Swiss tables depend on the results so far: a resumed run chooses the same ones.
    with sqlite3.connect(tmp_path / "out" / "results.sqlite") as c:
        c.execute("PRAGMA foreign_keys = ON")
        c.execute("DELETE FROM matches WHERE schedule_index >= ?", (len(ids) - 10,))
    assert cli("run", str(path), "--jobs", "1").exit_code == 0
    assert stored_ids(tmp_path / "out") == ids


def test_settle_is_checked_when_the_file_is_read(tmp_path):
    bots = [(f"b{i}", "random") for i in range(6)]
    with pytest.raises(ConfigError, match="more than the budget of 10"):
        load_config(tournament(tmp_path, bots, "settle: {max_matches: 10}", players=4))
    with pytest.raises(ConfigError, match="gauntlet"):
        load_config(tournament(tmp_path, bots, "format: gauntlet\nchallengers: [b0]\nsettle: {}", players=2))
    with pytest.raises(ConfigError, match="confidence"):
        load_config(tournament(tmp_path, bots, "settle: {confidence: 0.3}"))
    swiss = load_config(tournament(tmp_path, bots, "format: swiss", players=4))
    assert swiss.settle is not None and swiss.settle.confidence == 0.95


def test_swiss_tables_cover_the_field_then_go_where_the_order_is_unsure():
    players = [f"p{i}" for i in range(10)]
    tables = cover(players, 4, random.Random(1))
    assert len(tables) == 3 and {p for t in tables for p in t} == set(players)
    assert all(len(set(t)) == 4 for t in tables)
    order = [f"p{i}" for i in range(10)]
    separated = [True] * 9
    assert windows(order, separated, 4) == []
    separated[4] = False          # p4 and p5 not told apart: one table around them
    assert windows(order, separated, 4) == [("p3", "p4", "p5", "p6")]
    separated[0] = separated[8] = False     # the ends: windows stay inside the field
    assert windows(order, separated, 4) == [("p0", "p1", "p2", "p3"), ("p3", "p4", "p5", "p6"),
                                            ("p6", "p7", "p8", "p9")]


def test_the_progress_line_of_a_settling_run_shows_the_unsettled_pairs():
    import io

    from arena.match import MatchResult
    from arena.tournament.pairing.schedule import ScheduleEntry
    from arena.tournament.progress import Progress

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    entry = ScheduleEntry(0, "t000-r0-d0", 0, 0, 0, ("a", "b"), 1)
    result = MatchResult(
        match_id="t000-r0-d0", names=("a", "b"), totals=(10, 20), places=(1, 2),
        hand_scores=((10, 20),), winners=(None,), forfeited=(False, False),
        faults=(), stats=(), stderr_logs=(None, None), record={}, wall_seconds=1.0, startup_seconds=0.0)
    tty = Tty()
    Progress(total=300, stream=tty, unsettled=4).add(entry, result)
    assert "[1/at most 300]" in tty.getvalue() and "pairs to settle 4" in tty.getvalue()
    assert "leader a (rating" in tty.getvalue()        # fitted on the games so far: a won
    # Once a round was assessed, its leader is shown, not refitted (a tenth of a
    # Swiss run's CPU): b, although a won the match just played.
    tty = Tty()
    Progress(total=300, stream=tty, unsettled=4, assessed_leader=("b", 27.34)).add(entry, result)
    assert "leader b (rating 27.3)" in tty.getvalue()


def test_a_failed_match_stops_a_settling_run_and_the_next_run_retries_it_and_goes_on(tmp_path, monkeypatch):
    """A round with a hole must not be decided on: the run stops (exit 1), and
    the same command plays the failed match, then the rounds that follow,
    ending where an undisturbed run ends."""
    bots = [("g", "greedy"), ("r", "random"), ("p", "passive")]
    straight = tmp_path / "straight"
    straight.mkdir()
    path = tournament(straight, bots, "settle: {confidence: 0.9, max_matches: 400}")
    assert cli("run", str(path), "--jobs", "1").exit_code == 0
    ids = stored_ids(straight / "out")

    broken = tmp_path / "broken"
    broken.mkdir()
    path = tournament(broken, bots, "settle: {confidence: 0.9, max_matches: 400}")
    monkeypatch.setenv("ARENA_TEST_FAIL_MATCH", ids[7])          # in the second round
    first = cli("run", str(path), "--jobs", "1")
    assert first.exit_code == 1 and "a match failed with an arena error" in first.output
    assert len(stored_ids(broken / "out")) == 11          # two rounds of six, less the failed match
    monkeypatch.delenv("ARENA_TEST_FAIL_MATCH")
    again = cli("run", str(path), "--jobs", "1")
    assert again.exit_code == 0, again.output
    assert sorted(stored_ids(broken / "out")) == sorted(ids)


def test_a_swiss_round_goes_on_until_the_stopping_level_and_is_never_empty():
    from arena.ranking import Assessment
    from arena.tournament.pairing.rounds import StopRule, swiss_tables
    order = ["a", "b", "c", "d", "e", "f"]

    def assessed(margins):
        return Assessment(order, {}, margins, 0.95, 200, 0.01)
    # separated at 95 % (z 1.96) but not at the rule's 99.5 % (z 2.81): the
    # pair c-d is still played
    almost = assessed([5.0, 5.0, 2.5, 5.0, 5.0])
    assert almost.settled
    assert swiss_tables(almost, 0.95, 4) == [("b", "c", "d", "e")]
    # all separated at 99.5 %, between two looks of the rule: the least
    # separated pair gets a table
    clear = assessed([5.0, 4.0, 3.5, 6.0, 5.0])
    assert swiss_tables(clear, 0.95, 4) == [("b", "c", "d", "e")]
    rule = StopRule(budget=100, confidence=0.95)
    assert not rule.settled(0, almost) and rule.next_look == 10
    assert not rule.settled(5, clear)          # not a look yet
    assert rule.settled(10, clear)


def test_every_swiss_round_after_the_first_has_a_random_cover_of_the_field_besides_the_windows(tmp_path):
    """Windows alone let each bot meet only its neighbours (and then its
    rating depends on the path the run took, which the intervals cannot
    see): every later round also holds a random cover of the whole field."""
    from arena.ranking import Assessment
    from arena.tournament.pairing.rounds import round_entries
    bots = [(f"b{i:02d}", "greedy") for i in range(12)]
    config = load_config(tournament(tmp_path, bots, "format: swiss", players=4))
    order = list(config.bot_names)
    margins = [9.0] * 11
    margins[5] = 0.0                            # only b05-b06 in doubt: one window
    assessed = Assessment(order, {}, margins, 0.95, 200, 0.01, 50)
    rounds = [round_entries(config, r, assessed, 0) for r in (config.deals, config.deals + 1)]
    covers = []
    for entries in rounds:
        tables = {}
        for e in entries:
            tables.setdefault(e.table, set()).add(e.seats)
        assert all(len(rotations) == 4 for rotations in tables.values())     # every table in every rotation
        members = [frozenset(next(iter(rotations))) for rotations in tables.values()]
        assert {b for m in members for b in m} == set(order)                  # every bot plays every round
        assert frozenset(["b04", "b05", "b06", "b07"]) in members            # and the window is still there
        covers.append({m for m in members if m != frozenset(["b04", "b05", "b06", "b07"])})
    assert covers[0] != covers[1]                                             # drawn anew each round


def test_a_window_that_is_already_a_cover_table_is_played_once():
    from arena.ranking import Assessment
    from arena.tournament.pairing.rounds import swiss_round_tables
    order = ["a", "b", "c", "d", "e", "f"]
    assessed = Assessment(order, {}, [9.0, 0.0, 9.0, 9.0, 9.0], 0.95, 200, 0.01, 50)
    balance = [("a", "b", "c", "d"), ("b", "d", "e", "f")]
    assert swiss_round_tables(assessed, 0.95, 4, balance) == balance
    assessed = Assessment(order, {}, [9.0, 9.0, 9.0, 0.0, 9.0], 0.95, 200, 0.01, 50)
    assert swiss_round_tables(assessed, 0.95, 4, balance) == [*balance, ("c", "d", "e", "f")]


def counting_assess(monkeypatch) -> list[int]:
    """Count the assessments of the rounds (each call's number of games); not
    the final table's, which ``arena run`` prints from the same function."""
    import sys

    import arena.ranking
    import arena.tournament.runner
    from arena.ranking.confidence import assess
    calls: list[int] = []

    def counted(games, *args, **kwargs):
        if sys._getframe(1).f_code.co_filename == arena.tournament.runner.__file__:
            calls.append(len(games))
        return assess(games, *args, **kwargs)
    monkeypatch.setattr(arena.ranking, "assess", counted)
    return calls


def decided_rounds(out: Path) -> int:
    with ResultStore(out / "results.sqlite", create=False) as store:
        return len(store.decisions())


def test_a_resumed_settling_run_assesses_no_stored_round_again(tmp_path, monkeypatch):
    """Each round's decision is stored as it is made; a resumed run replays
    the stored ones and assesses only the rounds no run decided yet, ending
    as the uninterrupted run did."""
    bots = [(f"r{i}", "random") for i in range(5)]
    calls = counting_assess(monkeypatch)
    straight = tmp_path / "straight"
    straight.mkdir()
    path = tournament(straight, bots, "format: swiss\nsettle: {max_matches: 60}")
    assert cli("run", str(path), "--jobs", "1").exit_code == 0
    ids, uninterrupted = stored_ids(straight / "out"), len(calls)
    assert uninterrupted >= 4 and decided_rounds(straight / "out") == uninterrupted + 1   # the first is not assessed
    with ResultStore(straight / "out" / "results.sqlite", create=False) as store:
        leaders = [d.leader for _, d in sorted(store.decisions().items())]
    # what the progress line shows of a resumed run before its first new round
    assert leaders[0] is None and all(name in {b for b, _ in bots} and 15 < mu < 35 for name, mu in leaders[1:])

    broken = tmp_path / "broken"
    broken.mkdir()
    path = tournament(broken, bots, "format: swiss\nsettle: {max_matches: 60}")
    monkeypatch.setenv("ARENA_TEST_FAIL_MATCH", ids[len(ids) // 2])
    calls.clear()
    assert cli("run", str(path), "--jobs", "1").exit_code == 1
    first = len(calls)
    monkeypatch.delenv("ARENA_TEST_FAIL_MATCH")
    calls.clear()
    again = cli("run", str(path), "--jobs", "1")
    assert again.exit_code == 0 and "resuming" in again.output, again.output
    assert 0 < len(calls) < uninterrupted and first + len(calls) == uninterrupted
    assert stored_ids(broken / "out") == ids

    # Killed mid-round after the last decision: nothing is assessed at all.
    with sqlite3.connect(broken / "out" / "results.sqlite") as c:
        c.execute("PRAGMA foreign_keys = ON")
        c.execute("DELETE FROM matches WHERE schedule_index >= ?", (len(ids) - 5,))
    calls.clear()
    assert cli("run", str(path), "--jobs", "1").exit_code == 0
    assert calls == [] and stored_ids(broken / "out") == ids


def test_a_database_without_stored_decisions_still_resumes(tmp_path, monkeypatch):
    """An older arena stored no decisions: the rounds are decided again, as
    they were, and from then on stored."""
    bots = [(f"r{i}", "random") for i in range(5)]
    calls = counting_assess(monkeypatch)
    path = tournament(tmp_path, bots, "format: swiss\nsettle: {max_matches: 60}")
    assert cli("run", str(path), "--jobs", "1").exit_code == 0
    ids, rounds = stored_ids(tmp_path / "out"), decided_rounds(tmp_path / "out")
    with sqlite3.connect(tmp_path / "out" / "results.sqlite") as c:
        c.execute("PRAGMA foreign_keys = ON")
        c.execute("DROP TABLE round_decisions")
        c.execute("DELETE FROM matches WHERE schedule_index >= ?", (len(ids) - 10,))
    with ResultStore(tmp_path / "out" / "results.sqlite", create=False) as store:
        assert store.decisions() == {}
    calls.clear()
    again = cli("run", str(path), "--jobs", "1")
    assert again.exit_code == 0 and "resuming" in again.output, again.output
    assert stored_ids(tmp_path / "out") == ids and len(calls) == rounds - 1
    assert decided_rounds(tmp_path / "out") == rounds


def test_a_round_decision_is_stored_and_read_back(tmp_path):
    from arena.tournament.results.database import RoundDecision
    decision = RoundDecision(3, 24, 24, 30, None, (("a", "b"), ("b", "c")),
                             {"order": ["a", "b", "c"], "margins": [1.5, float("inf")], "unsettled": 1})
    with ResultStore(tmp_path / "r.sqlite") as store:
        assert store.decisions() == {}
        store.add_decision(decision)
        assert store.decisions() == {3: decision} and decision.unsettled == 1
        with pytest.raises(Exception, match="round 3 was already decided"):
            store.add_decision(decision)


def test_an_older_database_keeps_the_swiss_tables_it_played(tmp_path, monkeypatch):
    """Without stored decisions a resume decides again; should it now choose
    other tables for a round already played (a bootstrap that changed since
    decides a close pair the other way), the round keeps the tables it was
    played with, read from its stored matches, and the run goes on."""
    import arena.tournament.pairing.rounds as rounds_module

    bots = [(f"r{i}", "random") for i in range(5)]
    path = tournament(tmp_path, bots, "format: swiss\nsettle: {max_matches: 60}\nseating: rotate")
    assert cli("run", str(path), "--jobs", "1").exit_code == 0
    ids = stored_ids(tmp_path / "out")
    with sqlite3.connect(tmp_path / "out" / "results.sqlite") as c:
        c.execute("PRAGMA foreign_keys = ON")
        before = dict(c.execute("SELECT match_id, seed FROM matches"))
        c.execute("DROP TABLE round_decisions")
        c.execute("DELETE FROM matches WHERE schedule_index >= ?", (len(ids) - 3,))
    chosen = rounds_module.round_tables
    monkeypatch.setattr(rounds_module, "round_tables",
                        lambda config, r, a: [tuple(reversed(t)) if a is not None else t for t in chosen(config, r, a)])
    again = cli("run", str(path), "--jobs", "1")
    assert again.exit_code == 0, again.output
    with sqlite3.connect(tmp_path / "out" / "results.sqlite") as c:
        after = dict(c.execute("SELECT match_id, seed FROM matches"))
    assert {m: s for m, s in after.items() if m in before} == {m: before[m] for m in after if m in before}
    assert set(ids[:-3]) <= set(after)


def test_a_stored_match_the_schedule_seats_otherwise_is_refused_in_one_line(tmp_path):
    bots = [(f"r{i}", "random") for i in range(3)]
    path = tournament(tmp_path, bots, "settle: {max_matches: 12}")
    assert cli("run", str(path), "--jobs", "1").exit_code == 0
    first = stored_ids(tmp_path / "out")[0]
    with sqlite3.connect(tmp_path / "out" / "results.sqlite") as c:
        c.execute("UPDATE matches SET seed = seed + 1 WHERE match_id = ?", (first,))
    done = CliRunner().invoke(main, ["run", str(path), "--jobs", "1"])
    assert done.exit_code == 1
    error = [line for line in done.output.splitlines() if line.startswith("Error:")]
    assert len(error) == 1 and f"match {first} is stored with seats" in error[0]
    assert "another schedule" in error[0] and "Traceback" not in done.output


def _assessment(margins: list[float], replicas: int):
    from arena.ranking import Assessment

    order = [f"b{i}" for i in range(len(margins) + 1)]
    return Assessment(order, {}, margins, 0.95, replicas, 0.0, groups=40)


@pytest.mark.parametrize(("fmt", "matches", "margins", "asked"), [
    ("swiss", 10, [9.0, 9.0], [40]),            # no look: the quick assessment chooses the tables
    ("swiss", 60, [1.0, 9.0], [40]),            # a look that cannot stop: a pair far from the stop's margin
    ("swiss", 60, [3.0, 9.0], [40, None]),      # a look that might stop: assessed again in full
    ("round_robin", 10, [1.0, 1.0], [None]),    # a round robin's round is always assessed in full
])
def test_a_swiss_round_is_assessed_in_full_only_when_its_look_might_stop(tmp_path, fmt, matches, margins, asked):
    from arena.tournament.pairing.rounds import LOOK_SCREEN, PAIRING_REPLICAS, StopRule, round_assessment, stop_confidence

    bots = [("a", "greedy"), ("b", "random"), ("c", "passive")]
    config = load_config(tournament(tmp_path, bots, f"format: {fmt}\nsettle: {{max_matches: 400}}"))
    rule = StopRule(400, 0.95, next_look=50)
    needed = _assessment(margins, 1).needed(stop_confidence(0.95))
    assert 1.0 < LOOK_SCREEN * needed < 3.0 and PAIRING_REPLICAS == 40   # the cases above straddle the screen
    calls: list[int | None] = []

    def assess_with(replicas: int | None, tolerance: float | None):
        assert (tolerance is None) == (replicas is None)     # the quick replicas are solved more loosely
        calls.append(replicas)
        return _assessment(margins, replicas or 200)

    got = round_assessment(config, matches, rule, assess_with)
    assert calls == asked
    assert got.replicas == (asked[-1] or 200)
