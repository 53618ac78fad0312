"""Rulesets: presets, settings, validation, round trips, and custom lists in a real game."""

from __future__ import annotations

import json

import pytest

from arena.shanghai.actions import BUY, DRAW, PLAY, UPCARD, Buy, Draw, GoDown, MeldCards, Play
from arena.shanghai.cards import parse_cards
from arena.shanghai.errors import IllegalAction, RulesetError
from arena.shanghai.game import Game
from arena.shanghai.ruleset import RUN, SET, MeldSpec, Ruleset

SHANGHAI = ["2S3", "S3+R4", "2R4", "3S3", "2S3+R4", "S3+2R4", "3R4", "4S3", "3S3+R4", "2S3+2R4"]
PAGAT = ["2S3", "S3+R4", "2R4", "3S3", "S3+R7", "2S3+R5", "3R4", "S3+R10", "3S3+R5", "3R5"]


def test_default_is_the_shanghai_preset():
    assert Ruleset() == Ruleset.preset("shanghai") == Ruleset.from_mapping({})
    assert Ruleset().name == "shanghai"


def test_shanghai_contracts():
    rules = Ruleset.preset("shanghai")
    assert [c.text for c in rules.contracts] == SHANGHAI
    # the brief's "cards" column
    assert [c.size for c in rules.contracts] == [6, 7, 8, 9, 10, 11, 12, 12, 13, 14]
    assert rules.contract(1).melds == (MeldSpec(SET, 3), MeldSpec(RUN, 4))
    assert rules.contract(9).describe() == "2 sets of 3 + 2 runs of 4"


def test_pagat_contracts():
    rules = Ruleset.preset("pagat")
    assert rules.name == "pagat"
    assert [c.text for c in rules.contracts] == PAGAT
    assert rules.contract(4).melds == (MeldSpec(SET, 3), MeldSpec(RUN, 7))
    assert rules.contract(7).melds == (MeldSpec(SET, 3), MeldSpec(RUN, 10))
    assert rules.contract(9).melds == (MeldSpec(RUN, 5),) * 3


def test_defaults_of_the_brief():
    rules = Ruleset()
    assert rules.hands == 10
    assert rules.deal_sizes == (11,) * 10
    assert [rules.decks_for(p) for p in range(2, 9)] == [2, 2, 2, 3, 3, 4, 4]
    assert rules.wild_deuces is True
    assert rules.distinct_set_ranks is True
    assert rules.buy_penalty == 2
    assert rules.buy_priority == "dealer_left"
    assert [rules.buy_limit(h) for h in range(10)] == [3] * 8 + [4] * 2
    assert rules.turn_cap_per_player == 60


def test_unknown_setting_is_named():
    with pytest.raises(RulesetError) as info:
        Ruleset.from_mapping({"wild_jokers": True})
    assert info.value.setting == "wild_jokers"
    assert "wild_jokers" in str(info.value) and "unknown" in str(info.value)


def test_unknown_preset_is_named():
    with pytest.raises(RulesetError) as info:
        Ruleset.from_mapping({"preset": "canasta"})
    assert info.value.setting == "preset" and "canasta" in str(info.value)


@pytest.mark.parametrize(
    "mapping, setting",
    [
        ({"buy_penalty": 9}, "buy_penalty"),
        ({"buy_penalty": -1}, "buy_penalty"),
        ({"turn_cap_per_player": 0}, "turn_cap_per_player"),
        ({"deal_size": 0}, "deal_size"),
        ({"deal_size": 31}, "deal_size"),  # above the 1..30 range
        ({"deal_size": [11] * 9}, "deal_size"),  # one entry per hand
        ({"deal_size": [11] * 9 + [0]}, "deal_size[9]"),
        ({"buy_limits": [3] * 3}, "buy_limits"),
        ({"buy_limits": 21}, "buy_limits"),
        ({"buy_priority": "random"}, "buy_priority"),
        ({"wild_deuces": "yes"}, "wild_deuces"),
        ({"distinct_set_ranks": 1}, "distinct_set_ranks"),
        ({"decks": 0}, "decks"),
        ({"decks": {"9": 2}}, "decks"),
        ({"decks": {"4": 99}}, "decks.4"),
        ({"contracts": []}, "contracts"),
        ({"contracts": ["2S3", "X9"]}, "contracts[1]"),
        ({"contracts": ["S2"]}, "contracts[0]"),
        ({"max_reshuffles": -1}, "max_reshuffles"),
    ],
)
def test_out_of_range_values_name_the_setting(mapping, setting):
    with pytest.raises(RulesetError) as info:
        Ruleset.from_mapping(mapping)
    assert info.value.setting == setting
    assert f"'{setting}'" in str(info.value)


@pytest.mark.parametrize(
    "mapping",
    [
        {},
        {"preset": "pagat"},
        {
            "contracts": ["S3", "R5", "2S3"], "deal_size": [4, 6, 8], "buy_limits": [1, 2, 0],
            "wild_deuces": False, "distinct_set_ranks": False, "buy_penalty": 1,
            "buy_priority": "turn_order", "turn_cap_per_player": 7, "max_reshuffles": 3,
            "decks": {"2": 1, "8": 5},
        },
    ],
)
def test_to_mapping_round_trip(mapping):
    rules = Ruleset.from_mapping(mapping)
    back = Ruleset.from_mapping(json.loads(json.dumps(rules.to_mapping())))
    assert back == rules
    assert back.to_mapping() == rules.to_mapping()


def test_preset_values_can_be_overridden():
    rules = Ruleset.from_mapping({"preset": "pagat", "buy_penalty": 1, "deal_size": 9})
    assert [c.text for c in rules.contracts] == PAGAT
    assert rules.buy_penalty == 1 and rules.deal_sizes == (9,) * 10


def test_contract_text_forms():
    rules = Ruleset.from_mapping({"contracts": ["s3 + r4", "R4+2S3", "1S3+1S3"]})
    assert [c.text for c in rules.contracts] == ["S3+R4", "2S3+R4", "2S3"]
    assert rules.hands == 3


# -- custom lists in a real game ---------------------------------------------------


def _settle(game: Game) -> None:
    while (d := game.decision()) is not None and d.kind == BUY:
        game.apply(Buy(False), seat=d.seat)


def _go_out_taking_upcard(game: Game, seat: int, *melds: str) -> None:
    _settle(game)
    d = game.decision()
    assert (d.seat, d.kind) == (seat, DRAW)
    game.apply(Draw(UPCARD), seat=seat)
    play = Play((GoDown(tuple(MeldCards(tuple(parse_cards(m))) for m in melds)),), None)
    game.apply(play, seat=seat)


def test_custom_contracts_and_deal_sizes_in_a_game():
    rules = Ruleset.from_mapping({"contracts": ["S3", "R5", "2S3"], "deal_size": [4, 6, 8]})
    plan = {"hands": [
        # hand 1: dealer 0, seat 1 plays first
        {"hands": [["3C", "5D", "9H", "KS"], ["8C", "8D", "8S", "8H"]], "upcard": "8C"},
        # hand 2: dealer 1, seat 0 plays first
        {"hands": [["4C", "5C", "6C", "7C", "8C", "9C"], ["3H", "4H", "QS", "KS", "AD", "2D"]], "upcard": "10C"},
        # hand 3: dealer 0, seat 1 plays first
        {"hands": [["3C", "4C", "5C", "6C", "7C", "8C", "9C", "10C"],
                   ["8C", "8D", "8S", "8H", "KH", "KS", "KC", "KD"]], "upcard": "KH"},
    ]}
    game = Game.seeded(rules, 2, 5, plan=plan)
    assert game.view(0).contract.text == "S3" and len(game.view(0).hand) == 4
    _go_out_taking_upcard(game, 1, "8C 8D 8S 8H 8C")  # one set of 3 (or more)
    assert game.hand_no == 2
    v = game.view(0)
    assert v.contract.text == "R5" and len(v.hand) == 6 and v.dealer == 1
    # a run of 4 is not a run of 5
    game.apply(Draw(UPCARD), seat=0)
    short = Play((GoDown((MeldCards(tuple(parse_cards("4C 5C 6C 7C"))),)),), parse_cards("8C")[0])
    with pytest.raises(IllegalAction, match="at least 5"):
        game.apply(short, seat=0)
    game.apply(Play((GoDown((MeldCards(tuple(parse_cards("4C 5C 6C 7C 8C 9C 10C"))),)),), None), seat=0)
    assert game.hand_no == 3
    v = game.view(1)
    assert v.contract.text == "2S3" and len(v.hand) == 8
    _go_out_taking_upcard(game, 1, "8C 8D 8S 8H", "KH KS KC KD KH")
    assert game.over
    # 3C 5D 9H KS = 25; 3H 4H QS KS AD 2D = 65; 3C..9C 10C = 45
    assert game.hand_scores == [[25, 0], [0, 65], [45, 0]]
    assert game.totals == [70, 65]
    assert game.places() == [2, 1]


def test_pagat_run_of_seven_needs_seven_cards():
    rules = Ruleset.from_mapping({"contracts": ["S3+R7"]})
    plan = {"hands": [{"hands": [[], ["4C", "5C", "6C", "7C", "8C", "9C", "QH", "QS", "QD", "3D", "3S"]],
                       "upcard": "10C"}]}
    game = Game.seeded(rules, 2, 3, plan=plan)
    game.apply(Draw(UPCARD), seat=1)
    six = GoDown((MeldCards(tuple(parse_cards("4C 5C 6C 7C 8C 9C"))), MeldCards(tuple(parse_cards("QH QS QD")))))
    with pytest.raises(IllegalAction, match="run of at least 7"):
        game.apply(Play((six,), parse_cards("10C")[0]), seat=1)
    seven = GoDown((MeldCards(tuple(parse_cards("4C 5C 6C 7C 8C 9C 10C"))), MeldCards(tuple(parse_cards("QH QS QD")))))
    game.apply(Play((seven,), parse_cards("3D")[0]), seat=1)
    assert game.view(0).down == (False, True)
    assert game.decision().kind in (DRAW, PLAY, BUY)


def test_deal_size_that_does_not_fit_the_table_is_refused_at_game_start():
    from arena.shanghai.game import Game

    rules = Ruleset.from_mapping({"deal_size": 30})
    Game.seeded(rules, 2, 1)  # 2 x 30 fits in two decks
    with pytest.raises(RulesetError) as info:
        Game.seeded(rules, 8, 1)  # 8 x 30 does not fit in four
    assert info.value.setting == "deal_size"
