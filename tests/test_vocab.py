"""Meld kinds, lay-off ends and hand-end reasons are the engine's enums once
read back, and read as their texts on the wire (issue 31 point 4)."""

from __future__ import annotations

import json
import random

import pytest

from arena.players import play_match
from arena.players.registry import make_player
from arena.shanghai.actions import GoDown, LayOff, action_from_json
from arena.shanghai.errors import MalformedInput
from arena.shanghai.events import HandEnded, LaidOff, event_from_json
from arena.shanghai.game import Game
from arena.shanghai.ruleset import RUN, SET, Ruleset
from arena.shanghai.vocab import HandEndReason, LayOffEnd, MeldKind


def test_the_old_names_are_the_members() -> None:
    assert SET is MeldKind.SET and RUN is MeldKind.RUN
    assert json.dumps([SET, LayOffEnd.HIGH, HandEndReason.TURN_CAP]) == '["set", "high", "turn_cap"]'


def test_a_played_match_holds_members_and_reads_back_the_same() -> None:
    game = Game.seeded(Ruleset.preset("shanghai"), 3, 7)
    play_match(game, [make_player("greedy", random.Random(i)) for i in range(3)])
    laid = [e for e in game.log if isinstance(e, LaidOff)]
    ends = [e for e in game.log if isinstance(e, HandEnded)]
    assert laid and ends
    assert any(e.end is not None for e in laid)
    assert all(e.end is None or type(e.end) is LayOffEnd for e in laid)
    assert all(type(e.reason) is HandEndReason for e in ends)
    assert game.melds and all(type(t.meld.kind) is MeldKind for t in game.melds)
    for e in game.log:
        text = json.dumps(e.to_json())
        back = event_from_json(json.loads(text))
        assert back == e and json.dumps(back.to_json()) == text
        if isinstance(back, LaidOff) and back.end is not None:
            assert type(back.end) is LayOffEnd
        if isinstance(back, HandEnded):
            assert type(back.reason) is HandEndReason


def test_replies_are_read_into_members() -> None:
    play = action_from_json({"type": "play", "go_down": [{"kind": "run", "cards": ["5C", "6C", "7C"]}],
                             "lay_off": [{"meld": 0, "card": "8C", "end": "high"}], "discard": None})
    go_down, lay = play.steps  # type: ignore[attr-defined]
    assert isinstance(go_down, GoDown) and go_down.melds[0].kind is MeldKind.RUN
    assert isinstance(lay, LayOff) and lay.end is LayOffEnd.HIGH
    assert play.to_json()["steps"][0] == {"go_down": [{"cards": ["5C", "6C", "7C"], "kind": "run"}]}  # type: ignore[union-attr]


@pytest.mark.parametrize(("obj", "message"), [
    ({"type": "hand_end", "hand": 1, "reason": "won", "scores": [0], "totals": [0]},
     "hand_end event: 'reason' must be 'out', 'stock' or 'turn_cap', got 'won'"),
    ({"type": "lay_off", "hand": 1, "seat": 0, "meld": 0, "card": "JK", "end": "middle", "result": []},
     "lay_off event: 'end' must be 'low' or 'high', got 'middle'"),
    ({"type": "draw", "hand": 1, "seat": 0, "source": "pile", "card": "7H"},
     "draw event: 'source' must be 'stock' or 'upcard', got 'pile'"),
])
def test_an_unknown_text_in_an_event_is_refused(obj: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError) as caught:
        event_from_json(obj)
    assert str(caught.value) == message


def test_an_unknown_text_in_a_reply_is_refused_as_before() -> None:
    with pytest.raises(MalformedInput, match=r"'kind' must be 'set' or 'run', got 'row'"):
        action_from_json({"type": "play", "go_down": [{"kind": "row", "cards": ["5C", "6C", "7C"]}]})
    with pytest.raises(MalformedInput, match=r"'end' must be 'low' or 'high', got 'top'"):
        action_from_json({"type": "play", "lay_off": [{"meld": 0, "card": "8C", "end": "top"}]})
