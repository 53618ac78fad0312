"""The rules brief (/work/shared/RULES-BRIEF.md), one test per rule, on fixed deals.

Deals are fixed with a partial plan: ``hands`` lists each seat's cards (seat
0 first), ``upcard`` the first upcard, ``stock`` the top of the stock (top
first); every card not placed is shuffled below.  Hand 1's dealer is seat 0,
so seat 1 always plays first in hand 1.
"""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from arena.shanghai import events as ev
from arena.shanghai.actions import (
    BUY,
    DRAW,
    PLAY,
    STOCK,
    UPCARD,
    Buy,
    Draw,
    GoDown,
    LayOff,
    MeldCards,
    Play,
    Swap,
)
from arena.shanghai.cards import JOKER, make_shoe, parse_card, parse_cards
from arena.shanghai.errors import IllegalAction
from arena.shanghai.events import Bought
from arena.shanghai.game import Game, places_of
from arena.shanghai.ruleset import SET, Ruleset

# -- helpers --------------------------------------------------------------------


def C(text: str):
    return parse_card(text)


def deal(*hands: str, upcard: str | None = None, stock: str = "") -> dict:
    """One planned hand: ``hands`` by seat ("" leaves a seat random)."""
    spec: dict = {"hands": [h.split() for h in hands]}
    if upcard:
        spec["upcard"] = upcard
    if stock:
        spec["stock"] = stock.split()
    return spec


def new_game(players: int = 2, *planned: dict, seed: int = 1, **settings) -> Game:
    return Game.seeded(Ruleset.from_mapping(settings), players, seed, plan={"hands": list(planned)})


def meld(text: str, kind: str | None = None) -> MeldCards:
    return MeldCards(tuple(parse_cards(text)), kind)


def down(*melds: str) -> GoDown:
    return GoDown(tuple(meld(m) for m in melds))


def play(*steps, discard: str | None = None) -> Play:
    return Play(tuple(steps), C(discard) if discard else None)


def settle(game: Game, yes: set[int] = frozenset()) -> list[int]:
    """Answer every open buy offer (yes for seats in ``yes``); return the seats asked."""
    asked = []
    while (d := game.decision()) is not None and d.kind == BUY:
        asked.append(d.seat)
        game.apply(Buy(d.seat in yes), seat=d.seat)
    return asked


def draw(game: Game, seat: int, source: str = STOCK) -> None:
    settle(game)
    d = game.decision()
    assert (d.seat, d.kind) == (seat, DRAW)
    game.apply(Draw(source), seat=seat)
    settle(game)
    d = game.decision()
    assert (d.seat, d.kind) == (seat, PLAY)


def turn(game: Game, seat: int, *steps, discard: str | None = None, source: str = STOCK) -> None:
    draw(game, seat, source)
    game.apply(play(*steps, discard=discard), seat=seat)


def hand_of(game: Game, seat: int) -> Counter:
    return Counter(c.text for c in game.view(seat).hand)


def cards(text: str) -> Counter:
    return Counter(c.text for c in parse_cards(text))


def table(game: Game) -> list[list[str]]:
    return [[c.text for c in t.meld.cards] for t in game.view(0).melds]


def events(game: Game, kind: str | None = None, hand: int | None = None) -> list[dict]:
    return [
        e.to_json() for e in game.log
        if (kind is None or e.kind == kind) and (hand is None or e.hand == hand)
    ]


def all_cards(game: Game) -> Counter:
    out: Counter = Counter()
    for h in game.hands:
        out.update(h)
    out.update(game.stock)
    out.update(game.pile)
    for t in game.melds:
        out.update(t.meld.cards)
    return out


def penalty(game: Game, seat: int) -> int:
    return sum(c.penalty() for c in game.hands[seat])


def simple_step(game: Game, buyers: set[int] = frozenset()) -> None:
    """The simplest legal decision: buy only for ``buyers``, draw stock, discard the highest card."""
    d = game.decision()
    if d.kind == BUY:
        game.apply(Buy(d.seat in buyers), seat=d.seat)
    elif d.kind == DRAW:
        game.apply(Draw(STOCK), seat=d.seat)
    else:
        game.apply(Play((), game.view(d.seat).hand[-1]), seat=d.seat)


def snapshot(game: Game):
    return (
        json.dumps(game.to_record(), sort_keys=True),
        [json.dumps(game.view(s).to_json(), sort_keys=True) for s in range(game.n)],
        game.decision(),
        [list(h) for h in game.hands], list(game.stock), list(game.pile),
        list(game.melds), list(game.down), list(game.buys), game.upcard_live, game.turns,
    )


def refused_atomically(game: Game, action, seat: int | None, *words: str) -> str:
    before = snapshot(game)
    with pytest.raises(IllegalAction) as info:
        game.apply(action, seat=seat)
    reason = info.value.reason
    for w in words:
        assert w in reason, f"{w!r} not in {reason!r}"
    assert snapshot(game) == before, "a refused action changed the state"
    return reason


# -- cards and the deal ------------------------------------------------------------


@pytest.mark.parametrize(
    "players, total", [(2, 108), (3, 108), (4, 108), (5, 162), (6, 162), (7, 216), (8, 216)]
)
def test_deck_count_by_players_and_conservation(players, total):
    game = Game.seeded(Ruleset(), players, 11)
    v = game.view(0)
    assert v.card_counts == (11,) * players
    assert v.pile_size == 1
    assert v.stock_size == total - 11 * players - 1
    shoe = all_cards(game)
    assert sum(shoe.values()) == total
    assert shoe == Counter(make_shoe(total // 54))
    assert shoe[JOKER] == 2 * (total // 54)
    assert shoe[C("7H")] == total // 54


def test_card_conservation_during_play():
    game = new_game(3, seed=4, turn_cap_per_player=30)
    shoe = Counter(make_shoe(2))
    while game.hand_no == 1:
        simple_step(game, buyers={0, 2})
        assert all_cards(game) == shoe
    assert any(e["type"] == ev.BUY for e in events(game, hand=1))


def test_dealer_rotates_left_and_player_left_of_dealer_starts():
    game = new_game(3, turn_cap_per_player=1)
    dealers = []
    while not game.over:
        h = game.hand_no
        dealer = game.view(0).dealer
        dealers.append(dealer)
        order = []
        while game.hand_no == h and not game.over:
            d = game.decision()
            if d.kind == PLAY:
                order.append(d.seat)
            simple_step(game)
        assert order == [(dealer + 1) % 3, (dealer + 2) % 3, dealer]  # play goes to the left
    assert dealers == [h % 3 for h in range(10)]
    assert [e["dealer"] for e in events(game, ev.DEAL)] == dealers


def test_deal_starts_left_of_dealer_one_card_at_a_time():
    order = [c.text for c in make_shoe(2)]
    random.Random(3).shuffle(order)
    game = new_game(3, {"order": order})
    # dealer 0: seat 1 gets the 1st, 4th, ... card, seat 2 the 2nd, seat 0 the 3rd
    assert hand_of(game, 1) == Counter(order[0:33:3])
    assert hand_of(game, 2) == Counter(order[1:33:3])
    assert hand_of(game, 0) == Counter(order[2:33:3])
    assert game.view(0).upcard == C(order[33])
    before = hand_of(game, 1)
    draw(game, 1)
    assert hand_of(game, 1) - before == Counter([order[34]])  # the stock's top


def test_deal_size_11_by_default():
    game = new_game(4)
    assert game.view(0).card_counts == (11,) * 4
    assert events(game, ev.DEAL)[0]["deal_size"] == 11


def test_deal_size_per_hand_override():
    sizes = [5, 6, 7, 8, 9, 10, 11, 12, 13, 14]
    game = new_game(2, deal_size=sizes, turn_cap_per_player=1)
    seen = []
    while not game.over:
        v = game.view(0)
        seen.append(v.card_counts)
        assert v.stock_size == 108 - 2 * sizes[v.hand_no - 1] - 1
        h = game.hand_no
        while game.hand_no == h and not game.over:
            simple_step(game)
    assert seen == [(s, s) for s in sizes]


def test_upcard_is_the_top_of_the_rest():
    game = new_game(2, deal("", "", upcard="7H", stock="2C KD"))
    v = game.view(1)
    assert v.upcard == C("7H") and v.pile_top == C("7H") and v.pile_size == 1
    assert events(game, ev.DEAL)[0]["upcard"] == "7H"
    assert game.decision().options == (UPCARD, STOCK)


# -- drawing ------------------------------------------------------------------


def test_draw_from_stock_takes_its_top_card():
    game = new_game(2, deal("", "", upcard="7H", stock="2C KD"))
    before = hand_of(game, 1)
    draw(game, 1, STOCK)
    assert hand_of(game, 1) - before == Counter(["2C"])
    assert game.view(1).stock_size == 108 - 22 - 1 - 1
    assert game.view(1).upcard is None  # declined: the 7H is dead now


def test_draw_the_upcard_is_not_a_buy():
    game = new_game(2, deal("", "", upcard="7H", stock="2C KD"))
    before = hand_of(game, 1)
    game.apply(Draw(UPCARD), seat=1)
    assert game.decision().seat == 1 and game.decision().kind == PLAY  # no buy window
    assert hand_of(game, 1) - before == Counter(["7H"])
    v = game.view(1)
    assert v.pile_size == 0 and v.buys_left == (3, 3)
    assert not events(game, ev.BUY) and not events(game, ev.DECLINE)


def test_discard_the_card_just_drawn():
    game = new_game(2, deal("", "", upcard="7H", stock="QC"))
    before = hand_of(game, 1)
    turn(game, 1, discard="QC")
    assert hand_of(game, 1) == before
    assert game.view(0).upcard == C("QC")


# -- buying -------------------------------------------------------------------


def test_next_player_refuses_first_then_buy_window_in_seat_order():
    game = new_game(4, deal("", "", "", "", upcard="7H", stock="2C KD 5S"))
    d = game.decision()
    assert (d.seat, d.kind) == (1, DRAW)  # the next player decides first
    before = hand_of(game, 1)
    game.apply(Draw(STOCK), seat=1)
    assert settle(game) == [2, 3, 0]  # dealer's left first; seat 1 itself is not asked
    assert hand_of(game, 1) - before == Counter(["2C"])
    assert [e["type"] for e in events(game)][-2:] == [ev.DECLINE, ev.DRAW]


def test_buyer_gets_upcard_and_two_stock_cards():
    game = new_game(3, deal("", "", "", upcard="7H", stock="2C KD 5S 9H"))
    before = [hand_of(game, s) for s in range(3)]
    game.apply(Draw(STOCK), seat=1)
    assert settle(game, yes={0}) == [2, 0]
    assert hand_of(game, 0) - before[0] == Counter(["7H", "2C", "KD"])
    assert hand_of(game, 1) - before[1] == Counter(["5S"])  # the next player draws after the buy
    assert hand_of(game, 2) == before[2]
    v = game.view(0)
    assert v.card_counts == (14, 12, 11) and v.buys_left == (2, 3, 3)
    buy = events(game, ev.BUY)[0]
    assert (buy["seat"], buy["card"], buy["penalty"]) == (0, "7H", 2)
    # the penalty cards are secret to the other seats
    public_buy = [e for e in game.view(2).history if e.kind == ev.BUY][0]
    assert isinstance(public_buy, Bought) and public_buy.penalty_cards is None
    assert "penalty_cards" not in public_buy.to_json()
    assert game.decision().seat == 1 and game.decision().kind == PLAY


def test_buy_penalty_setting():
    game = new_game(3, deal("", "", "", upcard="7H", stock="2C KD 5S"), buy_penalty=1)
    before = [hand_of(game, s) for s in range(3)]
    game.apply(Draw(STOCK), seat=1)
    settle(game, yes={2})
    assert hand_of(game, 2) - before[2] == Counter(["7H", "2C"])
    assert hand_of(game, 1) - before[1] == Counter(["KD"])


def test_discarder_cannot_buy():
    game = new_game(3, deal("", "9S", "", upcard="7H"))
    game.apply(Draw(UPCARD), seat=1)
    game.apply(play(discard="9S"), seat=1)
    game.apply(Draw(STOCK), seat=2)
    assert settle(game) == [0]  # not seat 1, who discarded the 9S
    # two players: after a decline nobody is left to buy
    game = new_game(2, deal("", "9S", upcard="7H"))
    game.apply(Draw(UPCARD), seat=1)
    game.apply(play(discard="9S"), seat=1)
    game.apply(Draw(STOCK), seat=0)
    assert game.decision().kind == PLAY and game.decision().seat == 0


def test_down_player_cannot_buy():
    game = new_game(3, deal("", "8C 8D 8S KH KS KC 3C 4D 5H 6S 9S", "", upcard="JK"))
    turn(game, 1, down("8C 8D 8S", "KH KS KC"), discard="9S", source=UPCARD)
    game.apply(Draw(STOCK), seat=2)
    assert settle(game) == [0]
    game.apply(Play((), game.view(2).hand[0]), seat=2)
    game.apply(Draw(STOCK), seat=0)
    # seat 2 discarded, seat 1 is down: nobody may buy, seat 0 draws at once
    assert (game.decision().seat, game.decision().kind) == (0, PLAY)


def test_no_buy_when_stock_holds_fewer_than_two_cards():
    # 4 players x 26 cards from 108: the upcard and a stock of 3
    game = new_game(4, deal("", "", "", "", upcard="7H", stock="2C KD 5S"), deal_size=26)
    assert game.view(0).stock_size == 3
    game.apply(Draw(STOCK), seat=1)
    assert settle(game) == [2, 3, 0]  # stock 3
    game.apply(Play((), game.view(1).hand[0]), seat=1)
    game.apply(Draw(STOCK), seat=2)
    assert settle(game) == [3, 0]  # stock 2: still enough
    game.apply(Play((), game.view(2).hand[0]), seat=2)
    game.apply(Draw(STOCK), seat=3)
    assert game.view(3).stock_size == 0
    assert (game.decision().seat, game.decision().kind) == (3, PLAY)  # stock 1: no window
    assert not events(game, ev.BUY)


def _three_turns(priority: str) -> Game:
    game = new_game(4, seed=2, buy_priority=priority)
    for seat in (1, 2):
        draw(game, seat)
        game.apply(Play((), game.view(seat).hand[0]), seat=seat)
    game.apply(Draw(STOCK), seat=3)  # seat 3 declines seat 2's discard
    return game


@pytest.mark.parametrize("priority, order", [("dealer_left", [1, 0]), ("turn_order", [0, 1])])
def test_buy_priority(priority, order):
    assert settle(_three_turns(priority)) == order
    game = _three_turns(priority)
    assert settle(game, yes={0, 1}) == order[:1]  # the first yes wins, the window closes
    assert events(game, ev.BUY)[0]["seat"] == order[0]


def _down_next_player() -> Game:
    """Seat 1 goes down; seats 2 and 0 play; then it is seat 1's turn with 0's discard up."""
    game = new_game(3, deal("QD", "8C 8D 8S KH KS KC 3C 4D 5H 6S 9S", "", upcard="JK"))
    turn(game, 1, down("8C 8D 8S", "KH KS KC"), discard="9S", source=UPCARD)
    draw(game, 2)
    game.apply(Play((), game.view(2).hand[0]), seat=2)
    turn(game, 0, discard="QD")
    return game


def test_down_next_player_cannot_block_a_buy():
    game = _down_next_player()
    d = game.decision()
    assert (d.seat, d.kind) == (2, BUY)  # the window opens before seat 1 draws
    before = hand_of(game, 2)
    game.apply(Buy(True), seat=2)
    assert (hand_of(game, 2) - before)["QD"] == 1
    d = game.decision()
    assert (d.seat, d.kind, d.options) == (1, DRAW, (STOCK,))
    # the bought card is gone and the card below it is dead
    v = game.view(1)
    assert v.upcard is None and v.pile_top is not None and v.pile_top != C("QD")
    refused_atomically(game, Draw(UPCARD), 1, "no upcard")


def test_down_next_player_may_take_upcard_if_nobody_buys():
    game = _down_next_player()
    game.apply(Buy(False), seat=2)
    d = game.decision()
    assert (d.seat, d.kind, d.options) == (1, DRAW, (UPCARD, STOCK))
    game.apply(Draw(UPCARD), seat=1)
    assert hand_of(game, 1)["QD"] == 1
    assert not events(game, ev.BUY)


def test_cards_below_the_top_are_dead():
    game = new_game(3, deal("", "9S", "", upcard="7H"))
    draw(game, 1)  # declines the 7H
    assert game.view(1).upcard is None and game.view(1).pile_top == C("7H")
    game.apply(play(discard="9S"), seat=1)
    game.apply(Draw(UPCARD), seat=2)  # takes the 9S; the 7H below stays dead
    v = game.view(2)
    assert v.pile_top == C("7H") and v.upcard is None


def _play_to_hand(target: int) -> Game:
    """4 players; hands other than ``target`` deal 26 cards (stock 3) and end when the stock runs out."""
    sizes = [26] * 10
    sizes[target - 1] = 11
    game = new_game(4, seed=target, deal_size=sizes, max_reshuffles=0)
    while game.hand_no < target:
        simple_step(game)
    return game


@pytest.mark.parametrize("hand, limit", [(1, 3), (8, 3), (9, 4), (10, 4)])
def test_buy_limit_per_hand(hand, limit):
    game = _play_to_hand(hand)
    assert game.view(0).buys_left == (limit,) * 4
    buyer = (game.view(0).dealer + 2) % 4
    offers_after_limit = 0
    for _ in range(80):  # over 20 turns: each seat is offered buys about twice a round
        d = game.decision()
        if d.kind == BUY and d.seat == buyer and game.buys[buyer] >= limit:
            offers_after_limit += 1
        simple_step(game, buyers={buyer})
    assert game.hand_no == hand
    assert game.buys[buyer] == limit
    assert game.view(0).buys_left[buyer] == 0
    assert offers_after_limit == 0
    assert len([e for e in events(game, ev.BUY, hand) if e["seat"] == buyer]) == limit


# -- going down ---------------------------------------------------------------

HAND1 = deal("", "8C 8D 8S 8H 8C KH KS JK 3D 4D 9S", upcard="5D", stock="QC")


def _hand1(**settings) -> Game:
    game = new_game(2, HAND1, **settings)
    draw(game, 1, UPCARD)
    return game


def test_go_down_with_exactly_the_contract():
    game = _hand1()
    game.apply(play(down("8C 8D 8S", "KH KS JK"), discard="9S"), seat=1)
    v = game.view(0)
    assert v.down == (False, True)
    assert [(t.owner, t.meld.kind) for t in v.melds] == [(1, SET), (1, SET)]
    assert table(game) == [["8C", "8D", "8S"], ["KH", "KS", "JK"]]
    assert hand_of(game, 1) == cards("8H 8C 3D 4D 5D")
    assert events(game, ev.GO_DOWN)[0]["seat"] == 1


def test_go_down_too_few_melds_refused():
    game = _hand1()
    refused_atomically(game, play(down("8C 8D 8S"), discard="9S"), 1, "exactly 2 melds", "not 1")


def test_go_down_too_many_melds_refused():
    game = _hand1()
    refused_atomically(game, play(down("8C 8D 8S", "KH KS JK", "3D 4D 5D"), discard="9S"), 1, "not 3")


def test_go_down_wrong_kind_refused():
    game = _hand1()
    refused_atomically(game, play(down("8C 8D 8S", "3D 4D 5D JK"), discard="9S"), 1, "2 sets of 3", "1 set")


def test_contract_melds_may_be_longer():
    game = _hand1()
    game.apply(play(down("8C 8D 8S 8H 8C", "KH KS JK"), discard="9S"), seat=1)
    assert table(game)[0] == ["8C", "8D", "8S", "8H", "8C"]
    assert hand_of(game, 1) == cards("3D 4D 5D")


def test_two_sets_of_one_rank_refused_by_default():
    game = _hand1()
    refused_atomically(game, play(down("8C 8D 8S", "8H 8C JK"), discard="9S"), 1, "two sets of 8s")


def test_two_sets_of_one_rank_allowed_when_setting_off():
    game = _hand1(distinct_set_ranks=False)
    game.apply(play(down("8C 8D 8S", "8H 8C JK"), discard="9S"), seat=1)
    assert game.view(0).down == (False, True)


def test_run_shorter_than_contract_refused():
    game = new_game(2, deal("", "3C 4C 5C 6C QH QS QD 9S 9D 10D JD", upcard="AS"), contracts=["S3+R4"])
    draw(game, 1, UPCARD)
    refused_atomically(game, play(down("QH QS QD", "3C 4C 5C"), discard="9S"), 1, "at least 4")
    game.apply(play(down("QH QS QD", "3C 4C 5C 6C"), discard="9S"), seat=1)


def test_worked_example_runs_go_down_in_a_game():
    game = new_game(2, deal("", "JK 2D 5D 6D QH QS QD AS 2S 3S 4S", upcard="9C"), contracts=["S3+R4", "S3+R4"])
    draw(game, 1, UPCARD)
    game.apply(play(down("QH QS QD", "JK 2D 5D 6D"), discard="9C"), seat=1)
    run = game.view(0).melds[1]
    assert run.to_json()["stands_for"] == ["3D", "4D", "5D", "6D"]
    assert (run.meld.wilds, run.meld.naturals) == (2, 2)
    game = new_game(2, deal("", "JK 2D 5D 6D QH QS QD AS 2S 3S 4S", upcard="9C"), contracts=["S3+R4"])
    draw(game, 1, UPCARD)
    game.apply(play(down("QH QS QD", "AS 2S 3S 4S"), discard="9C"), seat=1)
    assert game.view(0).melds[1].meld.naturals == 4


def test_no_new_melds_after_going_down():
    game = _hand1()
    refused_atomically(game, play(down("8C 8D 8S", "KH KS JK"), down("8H 8C 5D", "3D 4D 9S")), 1, "already down")
    game.apply(play(down("8C 8D 8S", "KH KS JK"), discard="9S"), seat=1)
    turn(game, 0, discard="QC")
    draw(game, 1)
    hand = [c.text for c in game.view(1).hand]
    refused_atomically(game, play(down("8H 8C JK", "3D 4D 5D"), discard=hand[0]), 1, "already down", "lay off instead")


def test_wild_deuces_false_makes_2s_natural():
    hand = deal("", "7H 7S 2C KH KS KC 3D 4D 9S 5C 6C", upcard="QD")
    game = new_game(2, hand, wild_deuces=False)
    draw(game, 1, UPCARD)
    sets = GoDown((meld("7H 7S 2C", SET), meld("KH KS KC", SET)))
    refused_atomically(game, play(sets, discard="9S"), 1, "2C is not a 7")
    game = new_game(2, hand)
    draw(game, 1, UPCARD)
    game.apply(play(down("7H 7S 2C", "KH KS KC"), discard="9S"), seat=1)


@pytest.mark.parametrize("text, culprit, settings", [
    ("7H 7S 2C", "2C", {"wild_deuces": False}),
    ("QH QS 4S", "4S", {}),
])
def test_refusal_of_an_unkinded_set_names_the_culprit(text, culprit, settings):
    hand = deal("", "7H 7S 2C KH KS KC QH QS 4S 9S 5C", upcard="QD")
    game = new_game(2, hand, **settings)
    draw(game, 1, UPCARD)
    reason = refused_atomically(game, play(down(text, "KH KS KC"), discard="9S"), 1)
    assert reason.startswith(f"set {text}:") and f"{culprit} is not a" in reason, reason


# -- laying off ---------------------------------------------------------------

LAYOFF = deal(
    "5D 6D 7D 8D QH QS QC KD 9D 10S 4S",
    "4C 5C 6C 7C KH KS KC 8C 9H 3C 6C",
    upcard="2S", stock="JH JS 3H 10H",
)


def test_lay_off_in_the_turn_of_going_down_and_refusals():
    game = new_game(2, LAYOFF, contracts=["S3+R4"])
    draw(game, 1)  # JH
    godown = down("4C 5C 6C 7C", "KH KS KC")
    refused_atomically(game, play(godown, LayOff(0, C("9H")), discard="JH"), 1, "cannot lay off 9H", "8C")
    refused_atomically(game, play(godown, LayOff(0, C("8C")), LayOff(0, C("6C")), discard="JH"), 1, "cannot lay off 6C")
    refused_atomically(game, play(LayOff(0, C("8C")), godown, discard="JH"), 1, "only after going down")
    game.apply(play(godown, LayOff(0, C("8C")), discard="JH"), seat=1)
    assert table(game)[0] == ["4C", "5C", "6C", "7C", "8C"]


def test_lay_off_only_when_down_onto_own_and_others_melds():
    game = new_game(2, LAYOFF, contracts=["S3+R4"])
    turn(game, 1, down("4C 5C 6C 7C", "KH KS KC"), LayOff(0, C("8C")), discard="JH")
    draw(game, 0)  # JS
    refused_atomically(game, play(LayOff(1, C("KD")), discard="JS"), 0, "only after going down")
    # seat 0 goes down, then lays off on seat 1's set and on its own run
    game.apply(play(down("5D 6D 7D 8D", "QH QS QC"), LayOff(1, C("KD")), LayOff(2, C("9D")), discard="JS"), seat=0)
    assert table(game) == [
        ["4C", "5C", "6C", "7C", "8C"], ["KH", "KS", "KC", "KD"], ["5D", "6D", "7D", "8D", "9D"], ["QH", "QS", "QC"],
    ]
    assert [t.owner for t in game.view(0).melds] == [1, 1, 0, 0]
    assert hand_of(game, 0) == cards("10S 4S")
    # a later turn: the run grows at its low end, never in the middle
    draw(game, 1)  # 3H
    refused_atomically(game, play(LayOff(0, C("6C")), discard="3H"), 1, "cannot lay off 6C")
    game.apply(play(LayOff(0, C("3C")), discard="3H"), seat=1)
    assert table(game)[0] == ["3C", "4C", "5C", "6C", "7C", "8C"]


def test_wild_limit_holds_after_lay_offs():
    # 8-8-JK-JK is legal (brief), so a second joker may join 8 8 JK; a third may not
    game = new_game(2, deal("", "8C 8D JK JK JK KH KS KC 3D 4D 9S", upcard="5H"))
    draw(game, 1, UPCARD)
    godown = down("8C 8D JK", "KH KS KC")
    refused_atomically(
        game, play(godown, LayOff(0, JOKER), LayOff(0, JOKER), discard="9S"), 1, "3 wild cards but only 2 natural",
    )
    game.apply(play(godown, LayOff(0, JOKER), discard="9S"), seat=1)
    assert table(game)[0] == ["8C", "8D", "JK", "JK"]


# -- swapping wilds -----------------------------------------------------------

SWAP = deal(
    "6C 8S 6D QH QS QC 5H 6H 7H 9C 10D",
    "4C 5C JK 7C 8C 8D JK 2H 10S QD 8H",
    upcard="9D", stock="KC 9S 4H",
)


def _swap_game() -> Game:
    game = new_game(2, SWAP, contracts=["S3+R4"])
    turn(game, 1, down("4C 5C JK 7C", "8C 8D JK"), discard="KC")
    draw(game, 0)  # 9S
    return game


def test_swap_in_a_run_needs_the_exact_card():
    game = _swap_game()
    godown = down("QH QS QC", "5H 6H 7H JK")
    for wrong in ("6D", "9C"):
        refused_atomically(game, play(Swap(0, C(wrong)), godown, discard="9S"), 0, "stand for 6C")


def test_swap_without_going_down_refused():
    game = _swap_game()
    refused_atomically(game, play(Swap(1, C("8S")), discard="9S"), 0, "did not go down")


def test_swap_then_go_down_in_the_same_turn():
    game = _swap_game()
    game.apply(play(Swap(1, C("8S")), Swap(0, C("6C")), down("QH QS QC", "5H 6H 7H JK"), discard="9S"), seat=0)
    assert table(game) == [
        ["4C", "5C", "6C", "7C"], ["8C", "8D", "8S"], ["QH", "QS", "QC"], ["5H", "6H", "7H", "JK"],
    ]
    assert hand_of(game, 0) == cards("6D 9C 10D JK")  # one joker used, one kept
    assert [t.meld.wilds for t in game.view(0).melds] == [0, 0, 0, 1]
    # a player who is down may swap without anything else
    draw(game, 1)  # 4H
    game.apply(play(Swap(3, C("8H")), discard="4H"), seat=1)
    assert table(game)[3] == ["5H", "6H", "7H", "8H"]
    assert hand_of(game, 1)["JK"] == 1


# -- going out, one card left, scoring ---------------------------------------------


def test_go_out_by_going_down_with_no_discard():
    game = new_game(2, deal("", "8C 8D 8S KH KS KC 8H", upcard="KD"), deal_size=7)
    draw(game, 1, UPCARD)
    godown = down("8C 8D 8S 8H", "KH KS KC KD")
    refused_atomically(game, play(godown, discard="8H"), 1, "send no discard")
    seat0 = penalty(game, 0)
    game.apply(play(godown), seat=1)
    # the hand ends at once: seat 0 never gets another turn
    assert game.hand_no == 2
    assert [e["type"] for e in events(game, hand=1)][-3:] == [ev.GO_DOWN, ev.GO_OUT, ev.HAND_END]
    end = events(game, ev.HAND_END)[0]
    assert (end["seat"], end["reason"]) == (1, "out")
    assert game.hand_scores == [[seat0, 0]] and game.winners == [1]


def test_one_card_left_draw_then_discard_and_go_out_by_laying_off():
    game = new_game(
        2, deal("", "8C 8D 8S KH KS KC 4C", upcard="9H", stock="5D QS 8H JD KD"), deal_size=7,
    )
    turn(game, 1, down("8C 8D 8S", "KH KS KC"), discard="5D")
    assert hand_of(game, 1) == cards("4C")
    turn(game, 0, discard="QS")
    draw(game, 1)  # 8H: two cards now
    refused_atomically(game, play(LayOff(0, C("8H")), discard="4C"), 1, "last card")
    refused_atomically(game, play(LayOff(0, C("8H"))), 1, "must discard")
    game.apply(play(discard="4C"), seat=1)  # discards one of two
    assert hand_of(game, 1) == cards("8H")
    turn(game, 0, discard="JD")
    draw(game, 1)  # KD
    game.apply(play(LayOff(0, C("8H")), LayOff(1, C("KD"))), seat=1)
    assert game.hand_no == 2 and game.winners == [1]
    assert events(game, ev.GO_OUT)[0]["seat"] == 1


def test_scoring_when_someone_goes_out():
    game = new_game(
        2, deal("3C 9D 10H JS QC KD AS 2C JK", "8C 8D 8S 8H 8C KH KS KC KD", upcard="KH"), deal_size=9,
    )
    draw(game, 1, UPCARD)
    game.apply(play(down("8C 8D 8S 8H 8C", "KH KS KC KD KH")), seat=1)
    # 3 9 -> 5 each; 10 J Q K -> 10 each; A -> 15; 2 -> 20; JK -> 25; the winner 0
    assert game.hand_scores == [[5 + 5 + 10 + 10 + 10 + 10 + 15 + 20 + 25, 0]]
    assert game.totals == [110, 0]


# -- when a hand does not end ---------------------------------------------------------

SMALL_STOCK = {"deal_size": 26}  # 4 players x 26 cards from 108: the upcard and a stock of 3


def test_stock_empty_reshuffles_all_discards_but_the_upcard_then_hand_ends():
    game = new_game(4, deal("", "", "", "", upcard="7H", stock="2C KD 5S"), **SMALL_STOCK)
    shoe = Counter(make_shoe(2))
    turn(game, 1, discard="2C")
    turn(game, 2, discard="KD")
    turn(game, 3, discard="5S")
    assert game.view(0).stock_size == 0
    before = hand_of(game, 0)
    draw(game, 0)
    got = hand_of(game, 0) - before
    assert sum(got.values()) == 1 and set(got) <= {"7H", "2C", "KD"}
    shuffle = events(game, ev.RESHUFFLE)[0]
    assert sorted(shuffle["order"]) == sorted(["7H", "2C", "KD"])
    v = game.view(0)
    assert (v.stock_size, v.pile_size, v.pile_top, v.upcard) == (2, 1, C("5S"), None)
    assert all_cards(game) == shoe
    # the stock runs out again: the hand ends with no winner
    game.apply(Play((), game.view(0).hand[0]), seat=0)
    for seat in (1, 2):
        draw(game, seat)
        game.apply(Play((), game.view(seat).hand[0]), seat=seat)
    assert game.view(3).stock_size == 0
    scores = [penalty(game, s) for s in range(4)]
    game.apply(Draw(STOCK), seat=3)
    end = events(game, ev.HAND_END)[0]
    assert "seat" not in end and end["reason"] == "stock"
    assert game.hand_scores == [scores] and game.winners == [None]
    assert game.hand_no == 2 and len(events(game, ev.RESHUFFLE, 1)) == 1


def test_nothing_to_shuffle_ends_the_hand():
    # 4 players x 26 cards: stock of 3; a buy takes the last two, leaving only the 7H on the pile.
    # The engine keeps the pile's top card out of a reshuffle even when it is dead (no upcard), so
    # there is nothing to shuffle and the hand ends.
    game = new_game(4, deal("", "", "", "", upcard="7H", stock="2C KD 5S"), **SMALL_STOCK)
    draw(game, 1)
    game.apply(Play((), game.view(1).hand[0]), seat=1)
    game.apply(Draw(STOCK), seat=2)
    d = game.decision()
    assert (d.seat, d.kind) == (3, BUY)
    game.apply(Buy(True), seat=3)  # stock now empty, pile holds only the 7H
    assert game.hand_no == 2
    end = events(game, ev.HAND_END)[0]
    assert end["reason"] == "stock" and "seat" not in end
    assert not events(game, ev.RESHUFFLE)
    assert game.hand_scores[0][3] > 0 and all(s > 0 for s in game.hand_scores[0])


def test_turn_cap_small_setting():
    game = new_game(
        2, deal("3C 10D KH", "AS 2D JK", upcard="9S", stock="4C 5C 6C 7C 8C"), deal_size=3, turn_cap_per_player=2,
    )
    turn(game, 1, discard="4C")
    turn(game, 0, discard="5C")
    turn(game, 1, discard="6C")
    assert game.hand_no == 1
    turn(game, 0, discard="7C")  # the 4th turn of 2 x 2
    assert game.hand_no == 2
    end = events(game, ev.HAND_END)[0]
    assert end["reason"] == "turn_cap" and "seat" not in end
    assert game.hand_scores == [[5 + 10 + 10, 15 + 20 + 25]]


def test_turn_cap_default_is_60_per_player():
    game = new_game(2, seed=9)
    while game.hand_no == 1:
        simple_step(game)
    assert len(events(game, ev.DISCARD, 1)) == 120
    assert events(game, ev.HAND_END)[0]["reason"] == "turn_cap"
    assert events(game, ev.RESHUFFLE, 1)  # 85 stock cards do not last 120 turns


# -- the match ----------------------------------------------------------------


def test_ten_hands_totals_and_places():
    game = new_game(3, turn_cap_per_player=1, seed=6)
    while not game.over:
        simple_step(game)
    assert len(events(game, ev.DEAL)) == 10 and len(game.hand_scores) == 10
    assert game.totals == [sum(s[i] for s in game.hand_scores) for i in range(3)]
    end = events(game, ev.MATCH_END)[0]
    assert end["totals"] == game.totals and end["places"] == places_of(game.totals)
    assert game.decision() is None
    refused_atomically(game, Draw(STOCK), None, "match is over")


def test_places_share_ties():
    assert places_of([10, 5, 10, 20]) == [2, 1, 2, 4]
    assert places_of([7, 7]) == [1, 1]
    assert places_of([0, 30, 15]) == [1, 3, 2]


# -- atomicity ------------------------------------------------------------------


def _atomic_game() -> Game:
    game = new_game(
        2,
        deal("8S 8H 8D QH QS 5D 6D 7D 2C 4S 10H", "8C 8D JK KH KS KC 3D 4D 9S 5C 6C",
             upcard="QD", stock="10C JC"),
    )
    turn(game, 1, down("8C 8D JK", "KH KS KC"), discard="9S")
    return game


@pytest.mark.parametrize(
    "action, seat, words",
    [
        (play(discard="8S"), 0, ["asked to draw"]),
        (Draw(STOCK), 1, ["seat 0's decision"]),
        (Buy(True), 0, ["asked to draw"]),
    ],
)
def test_refused_at_draw_changes_nothing(action, seat, words):
    refused_atomically(_atomic_game(), action, seat, *words)


GOOD = down("8S 8H 8D", "QH QS 2C")


@pytest.mark.parametrize(
    "action, seat, words",
    [
        (play(discard="AC"), 0, ["do not hold AC"]),
        (play(LayOff(0, C("8S")), discard="9S"), 0, ["only after going down"]),
        (play(Swap(0, C("8S")), discard="9S"), 0, ["did not go down"]),
        (play(down("QH QS 2C"), discard="9S"), 0, ["contract", "exactly 2 melds"]),
        (play(GOOD, LayOff(0, C("4S")), discard="10H"), 0, ["cannot lay off 4S"]),
        (play(GOOD), 0, ["must discard"]),
        (play(GOOD, GOOD, discard="9S"), 0, ["already down"]),
        (play(Swap(7, C("8S")), GOOD, discard="9S"), 0, ["no meld 7"]),
        (play(down("8S 8H 8D", "QH QS 4S"), discard="9S"), 0, ["QH QS 4S"]),
        (play(down("8S 8H 8D", "QH QS JK"), discard="9S"), 0, ["do not hold JK"]),
        (Draw(STOCK), 0, ["asked to play"]),
        (play(GOOD, discard="9S"), 1, ["seat 0's decision"]),
    ],
)
def test_refused_at_play_changes_nothing(action, seat, words):
    game = _atomic_game()
    draw(game, 0, UPCARD)  # takes the 9S
    refused_atomically(game, action, seat, *words)
    # and the legal play still works afterwards
    game.apply(play(GOOD, discard="9S"), seat=0)
    assert game.view(0).down == (True, True)


def test_refused_during_buy_window_changes_nothing():
    game = new_game(3, deal("", "", "", upcard="7H", stock="2C KD 5S"))
    game.apply(Draw(STOCK), seat=1)
    assert (game.decision().seat, game.decision().kind) == (2, BUY)
    refused_atomically(game, Buy(True), 0, "seat 2's decision")  # seat 0 must wait its turn in the window
    refused_atomically(game, Draw(STOCK), 1, "seat 2's decision")
    refused_atomically(game, Draw(UPCARD), 2, "asked to buy")
    refused_atomically(game, play(discard="7H"), 2, "asked to buy")


# -- replay -------------------------------------------------------------------


def _random_step(game: Game, rng: random.Random) -> None:
    d = game.decision()
    if d.kind == BUY:
        game.apply(Buy(rng.random() < 0.4), seat=d.seat)
    elif d.kind == DRAW:
        game.apply(Draw(rng.choice(d.options)), seat=d.seat)
    else:
        game.apply(Play((), rng.choice(game.view(d.seat).hand)), seat=d.seat)


def _assert_replays(game: Game) -> None:
    record = json.loads(json.dumps(game.to_record()))
    replay = Game.from_record(record)
    assert replay.to_record() == record
    for s in range(game.n):
        assert replay.view(s).to_json() == game.view(s).to_json()
    assert replay.decision() == game.decision()


def test_replay_reproduces_a_driven_match():
    game = new_game(2, SWAP, contracts=["S3+R4", "2S3", "2R4"], turn_cap_per_player=12, seed=21)
    turn(game, 1, down("4C 5C JK 7C", "8C 8D JK"), discard="KC")
    turn(game, 0, Swap(1, C("8S")), Swap(0, C("6C")), down("QH QS QC", "5H 6H 7H JK"), discard="9S")
    draw(game, 1)
    game.apply(play(Swap(3, C("8H")), discard="4H"), seat=1)
    _assert_replays(game)  # mid-hand
    rng = random.Random(5)
    shoe = Counter(make_shoe(2))
    while not game.over:
        _random_step(game, rng)
        assert all_cards(game) == shoe or game.over
    assert events(game, ev.SWAP) and events(game, ev.GO_DOWN) and events(game, ev.LAY_OFF) is not None
    _assert_replays(game)


def test_replay_reproduces_reshuffles():
    game = new_game(4, seed=8, **SMALL_STOCK)
    rng = random.Random(2)
    while not game.over:
        _random_step(game, rng)
    assert events(game, ev.RESHUFFLE) and events(game, ev.BUY)
    _assert_replays(game)


def test_a_views_cards_sort_as_the_protocol_says() -> None:
    # docs/PROTOCOL.md: by suit (C, D, H, S), then rank from the ace up (the
    # ace first although it may play high, deuces in their place although
    # wild), jokers last.  A bot may rely on it.
    game = new_game(2, deal("KS JOKER 2H AH 10C AC QD 2C JC 3D KH", "4C 5C 6C 7C 8C 9C 4D 5D 6D 7D 8D"))
    shown = game.view(0).to_json()["cards"]
    assert shown == ["AC", "2C", "10C", "JC", "3D", "QD", "AH", "2H", "KH", "KS", "JK"]
