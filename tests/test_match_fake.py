"""The match runner (arena.match) against bots without processes
(``tests/fakebot.py``): a whole match, and each protocol-level misbehaviour
ending as its fault kind at the right decision.  Moved here from
test_match.py, asserting the same; what only processes show (memory and
line limits, forks, signals, the sandbox) stays there.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from fakebot import Answer, Exit, Line, Reply, Stderr, check_faults_at_decisions, fakes, game_bot, minimal_reply

from arena.match import BotPool, FaultPolicy, MatchResult, MatchSpec, SeatSpec, forfeit_places, run_match
from arena.process import TimeControl
from arena.shanghai.game import Game

RULES = {"contracts": ["2S3", "S3+R4"], "turn_cap_per_player": 15}
# The fake bots' time is a fake clock: no limit is slept, and a late reply
# is late by exactly its delay.
FAST = TimeControl(startup_seconds=1.0, per_decision_seconds=0.15)


def reply(msg: dict[str, Any]) -> list[Reply]:
    return [Line(json.dumps(minimal_reply(msg)))]


def late(delay: float, once: bool = False) -> Callable[[], Answer]:
    def on_request(msg: dict[str, Any]) -> list[Reply]:
        later = msg["count"] == 1 or not once
        return [Line(json.dumps(minimal_reply(msg)), delay if later else 0.0)]
    return lambda: game_bot(on_request)


def exit_midway(at: int) -> Callable[[], Answer]:
    def on_request(msg: dict[str, Any]) -> list[Reply]:
        if msg["count"] >= at:
            return [Stderr("exit_midway: giving up now\n"), Exit(3)]
        return reply(msg)
    return lambda: game_bot(on_request)


def wrong_id(msg: dict[str, Any]) -> list[Reply]:
    return [Line(json.dumps({**minimal_reply(msg), "id": msg["id"] + 1000}))]


def illegal(msg: dict[str, Any]) -> list[Reply]:
    if msg["kind"] != "play":
        return reply(msg)
    cards = msg["view"]["cards"]
    return [Line(json.dumps({"id": msg["id"], "go_down": [cards[:3]], "discard": cards[-1]}))]


def bad_handshake() -> Answer:
    inner = game_bot()

    def answer(msg: dict[str, Any]) -> list[Reply]:
        if msg.get("type") == "start":
            return [Line(json.dumps({"type": "hello", "name": "rude"}))]
        return inner(msg)
    return answer


BOTS: dict[str, Callable[[], Answer]] = {
    "minimal": game_bot,
    "silent": lambda: game_bot(lambda msg: []),
    "late": late(0.3),
    "late_once": late(0.2, once=True),
    "late_bank": late(0.2),
    "exit_midway": exit_midway(3),
    "exit_midway_2": exit_midway(2),
    "garbage": lambda: game_bot(lambda msg: [Line("I think I will discard the seven of hearts")]),
    "wrong_id": lambda: game_bot(wrong_id),
    "illegal": lambda: game_bot(illegal),
    "bad_handshake": bad_handshake,
    "silent_start": lambda: (lambda msg: []),        # never even ready (tests/bots/silent.py)
}


def bot(name: str) -> SeatSpec:
    return SeatSpec.command([name], name=name)


def play(tmp_path: Any, *seats: SeatSpec, seed: int = 5, time_control: TimeControl = FAST,
         policy: FaultPolicy = FaultPolicy()) -> MatchResult:
    spec = MatchSpec(f"t{seed}", seats, RULES, seed=seed, time=time_control, faults=policy,
                     log_dir=str(tmp_path / "logs"))
    with BotPool(fakes(BOTS)) as pool:
        return run_match(spec, pool)


def test_minimal_bots_play_a_whole_match(tmp_path: Any) -> None:
    result = play(tmp_path, bot("minimal"), bot("minimal"), bot("minimal"), SeatSpec.builtin("random"))
    assert result.faults == () and result.forfeited == (False,) * 4
    assert len(result.hand_scores) == 2 and len(result.winners) == 2
    assert list(result.totals) == [sum(h[s] for h in result.hand_scores) for s in range(4)]
    assert list(result.places) == forfeit_places(result.totals, [False] * 4)
    replay = Game.from_record(result.record)
    assert replay.over and tuple(replay.totals) == result.totals
    for seat in range(4):
        asked = sum(1 for a in result.record["actions"] if a["seat"] == seat)
        assert result.stats[seat].count == asked and result.stats[seat].timeouts == 0
    assert result.bot_names[:3] == ("minimal",) * 3 and result.bot_names[3] is None
    # minimal writes nothing on stderr: a path per bot seat, but no file
    assert result.stderr_logs[3] is None and all(result.stderr_logs[:3])
    assert not list((tmp_path / "logs").glob("*"))
    trace = result.record["trace"]
    for seat in range(4):
        asked = [i for i, a in enumerate(result.record["actions"]) if a["seat"] == seat]
        assert [d[0] for d in trace[seat]["decisions"]] == asked
        assert all(d[2] is not None and d[2] >= 0 for d in trace[seat]["decisions"])
    assert result.startup_seconds > 0 and result.wall_seconds >= result.startup_seconds


def test_one_late_reply_is_one_timeout(tmp_path: Any) -> None:
    result = play(tmp_path, bot("late_once"), SeatSpec.builtin("random"))
    assert [f.kind for f in result.faults] == ["timeout"]
    assert result.forfeited == (False, False)
    assert result.stats[0].count > 5 and result.stats[0].timeouts == 1


def test_the_bank_pays_for_late_replies_until_it_is_spent(tmp_path: Any) -> None:
    """0.2 s replies, 0.15 s a decision and a 0.12 s bank: two draw 0.05 s
    each from the bank, the third has 0.17 s and times out, the rest 0.15 s
    (a late line held up the reply after it: that times out too)."""
    tc = TimeControl(startup_seconds=1.0, per_decision_seconds=0.15, bank_seconds=0.12)
    result = play(tmp_path, bot("late_bank"), SeatSpec.builtin("random"), time_control=tc)
    faults = result.faults_of(0)
    assert [f.kind for f in faults] == ["timeout"] * 3 and faults[-1].forfeit
    stats = result.stats[0]
    assert (stats.count, stats.timeouts) == (2, 3)
    assert stats.mean == pytest.approx(0.2) and stats.max == pytest.approx(0.2)
    assert [f.detail.split(" (")[0].split(";")[0] for f in faults] == [
        "no reply within 0.170 s", "no reply within 0.150 s", "no reply within 0.150 s"]


MISBEHAVING = [
    # (bot, fault kind, faults before the forfeit)
    ("silent", "timeout", 3),
    ("late", "timeout", 3),
    ("exit_midway", "crash", 1),
    ("garbage", "malformed", 3),
    ("wrong_id", "wrong_id", 3),
    ("illegal", "illegal", 3),
    ("bad_handshake", "malformed", 1),
]


@pytest.mark.parametrize("name,kind,strikes", MISBEHAVING, ids=[m[0] for m in MISBEHAVING])
def test_misbehaving_bot_forfeits(tmp_path: Any, name: str, kind: str, strikes: int) -> None:
    result = play(tmp_path, bot(name), bot("minimal"), SeatSpec.builtin("random"))
    assert len(result.hand_scores) == 2                       # the match finished
    faults = result.faults_of(0)
    assert [f.kind for f in faults] == [kind] * strikes, faults
    assert [f.strike for f in faults] == list(range(1, strikes + 1))
    assert [f.forfeit for f in faults] == [False] * (strikes - 1) + [True]
    assert result.faults_of(1) == [] and result.faults_of(2) == []
    assert result.forfeited == (True, False, False)
    assert result.places[0] == 3 and sorted(result.places[1:]) == sorted(forfeit_places(result.totals[1:], [False, False]))
    check_faults_at_decisions(result, 0)
    if name == "bad_handshake":
        assert faults[0].decision is None and faults[0].decision_kind == "start"
        assert faults[0].excerpt == '{"type":"hello","name":"rude"}'
    else:
        assert all(f.decision is not None for f in faults)


def test_fault_details(tmp_path: Any) -> None:
    crash = play(tmp_path, bot("exit_midway_2"), SeatSpec.builtin("random")).faults[0]
    assert "exited with code 3" in crash.detail and "giving up now" in crash.detail
    bad = play(tmp_path, bot("illegal"), SeatSpec.builtin("random")).faults[0]
    assert bad.decision_kind == "play" and bad.excerpt.startswith('{"id":') and "go_down" in bad.excerpt
    wrong = play(tmp_path, bot("wrong_id"), SeatSpec.builtin("random")).faults[0]
    assert "1001" in wrong.detail


def test_a_bot_that_answers_notices_is_told_so_in_its_fault(tmp_path: Any) -> None:
    """Its answer to the notices sent with a request is read as the reply: the
    fault line names that bug, not only the id the line lacks."""
    def acknowledges() -> Answer:
        inner = game_bot()
        return lambda msg: [Line('{"ok":true}')] if msg.get("type") == "event" else inner(msg)

    spec = MatchSpec("t5", (bot("acks"), SeatSpec.builtin("random")), RULES, seed=5, time=FAST,
                     log_dir=str(tmp_path / "logs"))
    with BotPool(fakes({"acks": acknowledges})) as pool:
        result = run_match(spec, pool)
    first = result.faults_of(0)[0]
    assert (first.kind, first.decision_kind, first.excerpt) == ("malformed", "draw", '{"ok":true}')
    assert first.describe().startswith(
        "malformed at hand 1, request id 1 (draw): it replied to an event notice, which bots must "
        "never answer"), first.describe()


def test_handshake_timeout(tmp_path: Any) -> None:
    result = play(tmp_path, bot("silent_start"), SeatSpec.builtin("random"),
                  time_control=TimeControl(startup_seconds=0.2, per_decision_seconds=0.1))
    (f,) = result.faults
    assert (f.kind, f.decision, f.decision_kind, f.forfeit) == ("timeout", None, "start", True)
    assert result.places == (2, 1)


def test_strict_forfeits_at_first_fault(tmp_path: Any) -> None:
    result = play(tmp_path, bot("garbage"), SeatSpec.builtin("random"), policy=FaultPolicy(strict=True))
    assert [(f.kind, f.forfeit) for f in result.faults] == [("malformed", True)]


def test_all_seats_forfeited_is_a_draw(tmp_path: Any) -> None:
    result = play(tmp_path, bot("garbage"), bot("wrong_id"), policy=FaultPolicy(max_strikes=1))
    assert result.forfeited == (True, True)
    assert result.places == (2, 2)          # both last: a draw in which both lost
