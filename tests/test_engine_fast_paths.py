"""The engine's fast paths say and do what the slow ones did (issue 9, point 4).

- ``Game.legal_reason`` gives exactly the message ``apply`` raises, changes
  nothing, and is None for every action the reference players take;
- legal play raises no IllegalAction anywhere (greedy's failed swap tries used
  to raise one each);
- the non-raising meld checks agree with the raising ones, message for message;
- a view's history is a frozen prefix of the hand's events, shared, not copied;
- greedy's per-hand usefulness counts give the old per-card scores;
"""

from __future__ import annotations

import pickle
import random
from collections.abc import Iterator, Sequence

import pytest

from arena.players.greedy import HandShape, is_wild
from arena.players.registry import make_player
from arena.shanghai import errors
from arena.shanghai.actions import (
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
from arena.shanghai.cards import ALL_CARDS, JOKER, RANK_TEXT, SUITS, Card, make_shoe, parse_cards, sort_key
from arena.shanghai.errors import IllegalAction
from arena.shanghai.game import Decision, Game
from arena.shanghai.melds import (
    lay_off,
    lay_off_or_reason,
    make_run,
    make_set,
    meld_or_reason,
    swap_or_reason,
    swap_wild,
    try_swap_wild,
)
from arena.shanghai.record import fields as record_fields
from arena.shanghai.record import replace
from arena.shanghai.ruleset import Contract, Ruleset
from arena.shanghai.view import History

RULES = Ruleset.preset("shanghai")


def _state(game: Game) -> str:
    """Everything an action could change: the game's own fields, how long its
    logs are (they only grow), and every seat's view (views are cached).
    Not ``to_record()``, which grows with the game: dumped after every wrong
    action, it made this test take minutes.  A view's history only grows and
    its events are frozen, so its length and last event stand for it (the
    whole history, dumped for every view, was half this module's time)."""
    fields = (game.hand_no, game.dealer, game.hands, game.stock, game.pile, game.upcard_live, game.discarder,
              game.melds, game.down, game.buys, game.turn, game.turns, game.reshuffles, game.phase, game.declined,
              game.buy_queue, game.hand_scores, game.totals, game.winners, game.decision(),
              len(game.log), len(game.public), len(game.actions))
    views = []
    for s in range(game.n):
        view = game.view(s)
        views.append(repr([(len(view.history), *view.history[-1:]) if f.name == "history" else getattr(view, f.name)
                           for f in record_fields(view)]))
    return repr(fields) + "".join(views)


def _apply_error(game: Game, action: object, seat: int | None) -> str | None:
    try:
        game.apply(action, seat)  # type: ignore[arg-type]
    except IllegalAction as err:
        return err.reason
    return None


def _wrong_actions(game: Game, rng: random.Random) -> list[tuple[object, int | None]]:
    """Illegal actions of every kind for the current decision."""
    d = game.decision()
    assert d is not None
    hand = game.hands[d.seat]
    missing = next(c for c in ALL_CARDS if c not in hand)
    held = rng.choice(hand)
    wrong: list[tuple[object, int | None]] = [
        (Draw(STOCK) if d.kind != "draw" else Buy(True), d.seat),       # wrong kind
        (Play((), held), (d.seat + 1) % game.n),                         # wrong seat
        (Play((), missing), d.seat),                                     # a card not held
        (Play((LayOff(0, held),), held), d.seat),                        # lay-off (maybe before down)
        (Play((LayOff(99, held),), held), d.seat),                       # no such meld
        (Play((Swap(0, held),), held), d.seat),                          # a swap that fails
        (Play((GoDown((MeldCards(tuple(hand[:3])),)),), hand[-1]), d.seat),  # not the contract
        (Play((), None), d.seat),                                        # no discard
        (Draw("sideways"), d.seat),                                      # no such source
        (Draw(UPCARD), d.seat),                                          # maybe no upcard
    ]
    return wrong


# The rate of checked steps: the 5-seat match is 2,007 decisions long, and each
# check copies the game and compares every view 11 times.
@pytest.mark.parametrize("seed,seats,preset,rate", [(1, 4, "shanghai", 0.1), (2, 5, "pagat", 0.04),
                                                    (3, 3, "shanghai", 0.1)])
def test_legal_reason_is_apply_s_message_and_changes_nothing(seed: int, seats: int, preset: str,
                                                             rate: float) -> None:
    game = Game.seeded(Ruleset.preset(preset), seats, seed)
    players = [make_player(("greedy", "random")[i % 2], random.Random(f"{seed}/{i}")) for i in range(seats)]
    rng = random.Random(seed)
    checked = 0
    while (d := game.decision()) is not None:
        action = getattr(players[d.seat], d.kind)(game.view(d.seat))
        assert game.legal_reason(action, d.seat) is None and game.is_legal(action, d.seat)
        if rng.random() < rate:
            before = _state(game)
            # a copy of the game takes the real apply: same verdict, same
            # words, and a refused apply changes nothing of the copy either
            # (a copy by pickle: replaying the record, O(moves) each time, was
            # a third of the time; the replay has tests of its own)
            twin = pickle.loads(pickle.dumps(game))
            assert _state(twin) == before
            for wrong, seat in _wrong_actions(game, rng):
                reason = game.legal_reason(wrong, seat)  # type: ignore[arg-type]
                assert _state(game) == before
                assert _apply_error(twin, wrong, seat) == reason
                if reason is None:        # a legal one after all, now applied to the copy: a fresh copy
                    twin = pickle.loads(pickle.dumps(game))
                assert _state(twin) == before
                checked += reason is not None
        game.apply(action, d.seat)
    assert checked > 50
    assert game.legal_reason(Draw(STOCK)) == "the match is over"


def test_legal_play_raises_no_illegal_action(monkeypatch: pytest.MonkeyPatch) -> None:
    """Greedy tried wild swaps by catching the exception of each failed one; a
    whole seeded match of greedy and random players now creates none."""
    made: list[str] = []
    original = IllegalAction.__init__

    def counting(self: IllegalAction, reason: str) -> None:
        made.append(reason)
        original(self, reason)

    monkeypatch.setattr(errors.IllegalAction, "__init__", counting)
    for seed in range(4):
        game = Game.seeded(RULES, 4, seed)
        players = [make_player(("greedy", "greedy", "random", "greedy")[i], random.Random(f"{seed}/{i}"))
                   for i in range(4)]
        while (d := game.decision()) is not None:
            game.apply(getattr(players[d.seat], d.kind)(game.view(d.seat)), d.seat)
    assert made == []


def _melds() -> list:
    texts = ["7H 7S JK", "2C 2D JK", "8C 8D 2H", "4C JK 6C 7C", "JK 2D 5D 6D", "QH KH JK", "AS 2S 3S 4S",
             "9D 10D JD QD KD AD", "5S 2H 7S 8S"]
    out = []
    for t in texts:
        for wd in (True, False):
            for kind in ("set", "run"):
                m = meld_or_reason(parse_cards(t), kind, wd)
                if not isinstance(m, str):
                    out.append((m, wd))
    return out


def test_non_raising_meld_checks_agree_with_the_raising_ones() -> None:
    melds = _melds()
    assert len(melds) >= 8
    for m, wd in melds:
        for c in ALL_CARDS:
            for take in (None, JOKER, m.cards[0]):
                try:
                    expected: object = swap_wild(m, c, take, wd)
                except IllegalAction as err:
                    expected = err.reason
                assert swap_or_reason(m, c, take, wd) == expected
                assert try_swap_wild(m, c, take, wd) == (None if isinstance(expected, str) else expected)
            for end in (None, "low", "high"):
                try:
                    expected = lay_off(m, c, end, wd)
                except IllegalAction as err:
                    expected = err.reason
                assert lay_off_or_reason(m, c, end, wd) == expected
    for text in ("7H 8H 7S", "7H JK JK", "JK JK JK", "4C 5D 6C 7C", "QH KH AH 2H", "4C 5C 7C 8C"):
        for make, kind in ((make_set, "set"), (make_run, "run")):
            with pytest.raises(IllegalAction) as err:
                make(parse_cards(text))
            assert meld_or_reason(parse_cards(text), kind) == err.value.reason


def test_view_history_is_a_shared_frozen_prefix() -> None:
    game = Game.seeded(RULES, 4, 11)
    players = [make_player("random", random.Random(i)) for i in range(4)]
    views = []
    while len(game.public) < 40:
        d = game.decision()
        assert d is not None
        view = game.view(d.seat)
        views.append((view, tuple(game.public)))
        game.apply(getattr(players[d.seat], d.kind)(view), d.seat)
    for view, then in views:
        assert isinstance(view.history, History)
        assert len(view.history) == len(then) and view.history == then and tuple(view.history) == then
        assert all(a is b for a, b in zip(view.history, game.public))   # the same events, not copies
        if then:
            assert view.history[-1] is then[-1] and view.history[1:3] == then[1:3]
            with pytest.raises(IndexError):
                view.history[len(then)]
        assert view.to_json()["history"] == [e.to_json() for e in then]
    assert replace(views[-1][0], history=()).history == ()


def _old_usefulness(c: Card, hand: Sequence[Card], contract: Contract, wild_deuces: bool) -> float:
    """Greedy's scoring before issue 9, kept here as the reference."""
    if is_wild(c, wild_deuces):
        return 100.0
    score = 0.0
    if contract.sets:
        same = sum(1 for o in hand if o is not c and o.rank == c.rank)
        score += (0.0, 3.0, 6.0)[min(same, 2)]
    if contract.runs:
        values = {c.rank} | ({14} if c.rank == 1 else set())
        near: set[int] = set()
        for o in hand:
            if o.suit != c.suit or o.rank == c.rank or is_wild(o, wild_deuces):
                continue
            ov = {o.rank} | ({14} if o.rank == 1 else set())
            for v in values:
                for w in ov:
                    if 0 < abs(v - w) <= 2:
                        near.add(w)
        score += 2.0 * min(len(near), 3)
    return score


def _random_hands(seed: int, n: int = 1500) -> Iterator[tuple[random.Random, list[Card], Contract, bool]]:
    """``n`` random hands of 1-22 cards, each with a contract of either preset
    and wild deuces on or off, and the generator (for more draws)."""
    rng = random.Random(seed)
    shoe = make_shoe(2)
    contracts = list(dict.fromkeys(RULES.contracts + Ruleset.preset("pagat").contracts))
    for _ in range(n):
        yield rng, rng.sample(shoe, rng.randint(1, 22)), rng.choice(contracts), rng.random() < 0.7


def test_hand_shape_scores_like_the_old_usefulness() -> None:
    for rng, hand, contract, wd in _random_hands(9):
        shape = HandShape(hand, contract, wd)
        for c in set(hand) | {rng.choice(ALL_CARDS)}:
            assert shape.usefulness(c) == _old_usefulness(c, hand, contract, wd)


def test_cards_cache_their_text_index_and_points() -> None:
    for c in ALL_CARDS:
        text = "JK" if c.rank == 0 else RANK_TEXT[c.rank] + c.suit
        index = 52 if c.rank == 0 else SUITS.index(c.suit) * 13 + c.rank - 1
        points = 25 if c.rank == 0 else 20 if c.rank == 2 else 15 if c.rank == 1 else 10 if c.rank >= 10 else 5
        assert (c.text, str(c), c.index, c.penalty()) == (text, text, index, points)
        assert pickle.loads(pickle.dumps(c)) is c and Card(c.rank, c.suit) is c


def _every_decision(seed: int, seats: int, preset: str) -> Iterator[tuple[Game, Decision]]:
    game = Game.seeded(Ruleset.preset(preset), seats, seed)
    players = [make_player(("random", "greedy")[i % 2], random.Random(f"{seed}/{i}")) for i in range(seats)]
    while (d := game.decision()) is not None:
        yield game, d
        game.apply(getattr(players[d.seat], d.kind)(game.view(d.seat)), d.seat)


@pytest.mark.parametrize("seed,seats,preset", [(4, 4, "shanghai"), (5, 6, "pagat")])
def test_hands_stay_in_hand_order_and_views_copy_them(seed: int, seats: int, preset: str) -> None:
    """Hands are kept in hand order as cards arrive (draws, buys, swaps), so a
    view copies instead of sorting; what it shows is what a sort would give."""
    swaps = buys = 0
    for game, d in _every_decision(seed, seats, preset):
        for seat, hand in enumerate(game.hands):
            assert hand == sorted(hand, key=sort_key), f"seat {seat}'s hand is out of order"
        view = game.view(d.seat)
        assert view.hand == tuple(sorted(game.hands[d.seat], key=sort_key))
        limit = game.rules.buy_limits[game.hand_no - 1]
        assert view.buys_left == tuple(limit - b for b in game.buys)
        if d.kind == "play":
            assert d.options == tuple(sorted(set(game.hands[d.seat]), key=sort_key))
        buys += sum(game.buys)
        swaps += sum(1 for e in game.public if e.kind == "swap")
    assert buys and swaps  # both ways a hand grows mid-turn were seen


def test_draw_and_buy_decisions_are_shared_values() -> None:
    """A draw or buy decision is one of few values: made once per game, not per step."""
    seen: dict[tuple[int, str, tuple[object, ...]], Decision] = {}
    reused = 0
    for _game, d in _every_decision(6, 4, "shanghai"):
        if d.kind == "play":
            continue
        key = (d.seat, d.kind, d.options)
        if key in seen:
            assert seen[key] is d
            reused += 1
        seen[key] = d
    assert reused > 100


def test_one_card_usefulness_scores_like_the_old_one_with_or_without_the_card() -> None:
    from arena.players.greedy import usefulness
    for rng, hand, contract, wd in _random_hands(11):
        for c in set(hand) | {rng.choice(ALL_CARDS)}:
            old = _old_usefulness(c, hand + [c], contract, wd)
            assert usefulness(c, hand, contract, wd) == old == usefulness(c, hand + [c], contract, wd)


def test_laid_off_builds_what_lay_off_builds() -> None:
    from arena.shanghai.melds import laid_off, lay_off, lay_off_ends, meld_or_reason
    rng = random.Random(5)
    shoe = make_shoe(2)
    checked = 0
    for _ in range(4000):
        wd = rng.random() < 0.8
        if rng.random() < 0.5:
            rank = rng.randint(1, 13)
            cards = [c for c in shoe if c.rank in (rank, 0, 2)]
            m = meld_or_reason(rng.sample(cards, rng.randint(3, 6)), "set", wd)
        else:
            suit, lo = rng.choice(SUITS), rng.randint(1, 10)
            run = [Card(v if v < 14 else 1, suit) for v in range(lo, lo + rng.randint(3, 6)) if v <= 14]
            run = [JOKER if rng.random() < 0.2 else c for c in run]
            m = meld_or_reason(run, "run", wd)
        if isinstance(m, str):
            continue
        for c in ALL_CARDS:
            for end in lay_off_ends(m, c, wd):
                assert laid_off(m, c, end, wd) == lay_off(m, c, end, wd)
                checked += 1
    assert checked > 1000


@pytest.mark.parametrize("seed", range(40))
def test_draws_are_random_s_own_shuffle_and_choice(seed: int) -> None:
    from arena.shanghai import draws
    assert draws._INLINE  # this Python draws as the module copies; else it falls back, untested
    a, b = random.Random(seed), random.Random(seed)
    for n in [*range(0, 40), 108, 216, 600]:
        x, y = list(range(n)), list(range(n))
        a.shuffle(x)
        draws.shuffle(b, y)
        assert x == y
        if n:
            assert a.choice(x) == draws.choice(b, y)
        assert a.getstate() == b.getstate()


def test_draws_fall_back_for_a_subclass_of_random() -> None:
    from arena.shanghai import draws

    class Fixed(random.Random):
        def random(self) -> float:
            return 0.0

        def getrandbits(self, k: int) -> int:
            return 0

    x = list(range(10))
    draws.shuffle(Fixed(1), x)
    y = list(range(10))
    Fixed(1).shuffle(y)
    assert x == y and draws.choice(Fixed(1), "abc") == Fixed(1).choice("abc")
