"""Meld checking: the brief's worked examples and readable refusals (arena/shanghai/melds.py)."""

from __future__ import annotations

import pytest

from arena.shanghai.cards import parse_card, parse_cards
from arena.shanghai.errors import IllegalAction
from arena.shanghai.melds import guess_kind, lay_off, make_run, make_set, swap_wild
from arena.shanghai.ruleset import RUN, SET


def cs(text: str):
    return parse_cards(text)


def refused(fn, *args, **kwargs) -> str:
    with pytest.raises(IllegalAction) as info:
        fn(*args, **kwargs)
    return info.value.reason


# -- worked examples: sets ----------------------------------------------------


@pytest.mark.parametrize(
    "text, legal",
    [
        ("7H 7S 7H", True),  # two decks: two 7H are fine
        ("7H 7S JK", True),
        ("7H JK JK", False),
        ("7H 7S JK JK", True),
        ("7H 7S 2C", True),  # a 2 as a wild
        ("7H 2C 2D", False),  # two wild 2s, one natural
        ("2C 2D 2H", True),  # a set of 2s, all natural
    ],
)
def test_worked_example_sets(text, legal):
    if legal:
        meld = make_set(cs(text))
        assert meld.kind == SET
    else:
        reason = refused(make_set, cs(text))
        assert "wild" in reason and "natural" in reason


def test_set_wild_counts():
    assert (make_set(cs("7H 7S 2C")).naturals, make_set(cs("7H 7S 2C")).wilds) == (2, 1)
    twos = make_set(cs("2C 2D 2H"))
    assert (twos.rank, twos.naturals, twos.wilds) == (2, 3, 0)
    assert make_set(cs("7H 7S JK JK")).wilds == 2


# -- worked examples: runs ----------------------------------------------------


@pytest.mark.parametrize(
    "text, legal",
    [
        ("4C 5C 6C 7C", True),
        ("4C 5C JK 7C", True),
        ("QH KH AH 2H", False),  # no wrap-around
        ("AS 2S 3S 4S", True),
        ("JK 2D 5D 6D", True),
        ("JK 2D 3D 4D", True),
    ],
)
def test_worked_example_runs(text, legal):
    if legal:
        assert make_run(cs(text)).kind == RUN
    else:
        refused(make_run, cs(text))


def test_joker_in_run_stands_for_missing_card():
    meld = make_run(cs("4C 5C JK 7C"))
    assert meld.represents() == ["4C", "5C", "6C", "7C"]
    assert meld.wild == (False, False, True, False)


def test_ace_two_three_four_has_four_naturals():
    meld = make_run(cs("AS 2S 3S 4S"))
    assert meld.naturals == 4 and meld.wilds == 0
    assert meld.represents() == ["AS", "2S", "3S", "4S"]


def test_jk_2d_5d_6d_is_3d_to_6d_with_two_wilds():
    meld = make_run(cs("JK 2D 5D 6D"))
    assert meld.represents() == ["3D", "4D", "5D", "6D"]
    assert meld.wild == (True, True, False, False)  # the 2D is wild for 4D


def test_jk_2d_3d_4d_is_ace_to_4d_with_natural_two():
    meld = make_run(cs("JK 2D 3D 4D"))
    assert meld.represents() == ["AD", "2D", "3D", "4D"]
    assert meld.wild == (True, False, False, False)


def test_wrap_around_refused_with_reason():
    reason = refused(make_run, cs("QH KH AH 2H"))
    assert "above an ace" in reason and "wrap" in reason


def test_ace_high_run():
    meld = make_run(cs("JK QH KH AH"))
    assert meld.represents() == ["JH", "QH", "KH", "AH"]


def test_ace_low_and_high_never_both():
    full = cs("AH 2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH")
    meld = make_run(full)
    reason = refused(lay_off, meld, parse_card("AH"), None)
    assert "ace both low and high" in reason
    assert "at most 13" in refused(make_run, full + cs("AH"))


def test_run_wild_limit():
    assert make_run(cs("4C JK 6C JK")).wilds == 2
    reason = refused(make_run, cs("4C JK JK 7C JK"))
    assert "3 wild cards but only 2 natural cards" in reason


# -- readable refusals ----------------------------------------------------------


def test_run_gap_message():
    reason = refused(make_run, cs("4C 5C 7C 8C"))
    assert reason.startswith("run 4C 5C 7C 8C: 7C does not follow 5C")
    assert "6C" in reason  # says what the place needs


def test_run_suit_message():
    reason = refused(make_run, cs("4C 5D 6C 7C"))
    assert reason.startswith("run 4C 5D 6C 7C: 5D is not a club")


def test_set_rank_message():
    reason = refused(make_set, cs("7H 8H 7S"))
    assert reason == "set 7H 8H 7S: 8H is not a 7, so it cannot join a set of 7s"


def test_set_wild_limit_message():
    reason = refused(make_set, cs("7H JK JK"))
    assert reason == "set 7H JK JK: 2 wild cards but only 1 natural card; wilds may not outnumber naturals"


def test_only_jokers_message():
    assert "natural" in refused(make_set, cs("JK JK JK"))
    assert "natural" in refused(make_run, cs("JK JK JK JK"))


def test_guess_kind():
    assert guess_kind(cs("8C 8D JK")) == SET
    assert guess_kind(cs("2C 2D 2H")) == SET
    assert guess_kind(cs("JK 2D 5D 6D")) == RUN


# -- lay-offs -----------------------------------------------------------------


def test_lay_off_8c_onto_4c_7c_then_9h_refused():
    run = make_run(cs("4C 5C 6C 7C"))
    longer = lay_off(run, parse_card("8C"), None)
    assert longer.represents() == ["4C", "5C", "6C", "7C", "8C"]
    reason = refused(lay_off, longer, parse_card("9H"), None)
    assert reason.startswith("cannot lay off 9H on run 4C-8C")
    assert "3C" in reason and "9C" in reason  # says what each end needs


def test_run_grows_only_at_its_ends():
    run = make_run(cs("4C 5C 6C 7C 8C"))
    assert lay_off(run, parse_card("3C"), None).represents()[0] == "3C"
    assert lay_off(run, parse_card("9C"), None).represents()[-1] == "9C"
    refused(lay_off, run, parse_card("6C"), None)  # no room in the middle


def test_wild_lay_off_needs_an_end():
    run = make_run(cs("4C 5C 6C 7C"))
    assert "either end" in refused(lay_off, run, parse_card("JK"), None)
    assert lay_off(run, parse_card("JK"), "low").represents()[0] == "3C"


def test_wild_limit_holds_after_lay_off_on_set():
    meld = make_set(cs("8C 8D JK"))
    both = lay_off(meld, parse_card("JK"), None)  # 8-8-JK-JK is legal
    assert both.wilds == 2 and both.naturals == 2
    reason = refused(lay_off, both, parse_card("JK"), None)
    assert "outnumber" in reason


def test_wild_limit_holds_after_lay_off_on_run():
    meld = make_run(cs("4C JK 6C JK"))
    reason = refused(lay_off, meld, parse_card("JK"), "high")
    assert "outnumber" in reason


# -- swaps --------------------------------------------------------------------


def test_swap_any_card_of_the_rank_into_a_set():
    meld = make_set(cs("8C 8D JK"))
    new, taken = swap_wild(meld, parse_card("8S"))
    assert taken == parse_card("JK")
    assert [c.text for c in new.cards] == ["8C", "8D", "8S"] and new.wilds == 0
    assert "only a 8" in refused(swap_wild, meld, parse_card("9S"))


def test_swap_only_the_exact_card_into_a_run():
    meld = make_run(cs("4C 5C JK 7C"))
    new, taken = swap_wild(meld, parse_card("6C"))
    assert taken == parse_card("JK") and new.wilds == 0
    for wrong in ("6D", "8C", "3C"):
        assert "stand for 6C" in refused(swap_wild, meld, parse_card(wrong))
    assert "natural" in refused(swap_wild, meld, parse_card("JK"))


def test_swap_wild_two_out_of_a_run():
    meld = make_run(cs("JK 2D 5D 6D"))
    new, taken = swap_wild(meld, parse_card("4D"))
    assert taken == parse_card("2D")
    assert new.wild == (True, False, False, False)


# -- wild_deuces: false -------------------------------------------------------


def test_deuces_natural_when_not_wild():
    refused(make_set, cs("7H 7S 2C"), wild_deuces=False)
    refused(make_run, cs("4C 5C 2C 7C"), wild_deuces=False)
    assert make_set(cs("2C 2D 2H"), wild_deuces=False).naturals == 3
    assert make_run(cs("AS 2S 3S 4S"), wild_deuces=False).naturals == 4
    assert make_set(cs("7H 7S JK"), wild_deuces=False).wilds == 1


# -- penalties ----------------------------------------------------------------


@pytest.mark.parametrize(
    "text, points",
    [("3C", 5), ("9D", 5), ("10H", 10), ("JS", 10), ("QC", 10), ("KD", 10), ("AS", 15), ("2H", 20), ("JK", 25)],
)
def test_penalty_points(text, points):
    assert parse_card(text).penalty() == points


def test_a_meld_of_no_kind_that_is_neither_gives_both_reasons() -> None:
    """A player who meant 5C 6C QC as a set (no "kind") was told only why it
    is no run; both kinds' reasons now, the cards named once."""
    from arena.shanghai.actions import MeldCards
    from arena.shanghai.plays import build_meld

    reason = build_meld(MeldCards(tuple(parse_cards("5C 6C QC"))), wild_deuces=True)
    assert isinstance(reason, str)
    assert reason.startswith("run 5C 6C QC: QC does not follow 6C")
    assert reason.endswith("; nor a set: 6C is not a 5, so it cannot join a set of 5s")
    assert reason.count("5C 6C QC") == 1
    given = build_meld(MeldCards(tuple(parse_cards("5C 6C QC")), RUN), wild_deuces=True)
    assert isinstance(given, str) and "nor a set" not in given          # a kind given: that kind's reason
