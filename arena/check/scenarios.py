"""The scripted situations of ``arena check``: fixed deals (docs/DEALS.md)
and scripted opponents that lead the bot to one decision of each kind and
rule area.  Hand 1 of 3 players: seat 0 deals, seat 1 moves first.

Each scenario names the bot's decision it is about (``key``); the check
judges every reply of the bot in the hand, and reports that one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..shanghai.actions import BUY, DRAW, PLAY, STOCK, UPCARD, Buy, Draw, Play, action_from_json, discard_only
from ..shanghai.game import Decision, View

PLAYERS = 3


class ScriptedPlayer:
    """An opponent that plays its ``plays`` in order (engine form), buys
    exactly the cards in ``buys``, takes the upcard exactly when it is in
    ``takes``, and otherwise plays like ``passive``: stock, no buy, discard
    the first card."""

    def __init__(self, plays: Sequence[Mapping[str, Any]] = (), buys: Sequence[str] = (),
                 takes: Sequence[str] = (), name: str = "scripted") -> None:
        self.name = name
        self._plays = [action_from_json({"type": PLAY, **p}) for p in plays]
        self._buys = set(buys)
        self._takes = set(takes)

    def draw(self, view: View) -> Draw:
        if view.upcard is not None and view.upcard.text in self._takes:
            return Draw(UPCARD)
        return Draw(STOCK)

    def buy(self, view: View) -> Buy:
        return Buy(view.upcard is not None and view.upcard.text in self._buys)

    def play(self, view: View) -> Play:
        if self._plays:
            action = self._plays.pop(0)
            assert isinstance(action, Play)
            return action
        return discard_only(view.hand[0])


# Which of the bot's decisions a scenario is about: given the decision and
# the bot's view, and how many of the bot's decisions came before.
Key = Callable[[Decision, View, int], bool]


def first(kind: str) -> Key:
    return lambda d, view, _n: d.kind == kind


def first_decision(d: Decision, view: View, n: int) -> bool:
    return n == 0


def stock_only(d: Decision, view: View, n: int) -> bool:
    return d.kind == DRAW and tuple(d.options) == (STOCK,)


def one_card_left(d: Decision, view: View, n: int) -> bool:
    return d.kind == PLAY and view.down[view.seat] and len(view.hand) == 2


@dataclass(frozen=True)
class Scenario:
    name: str
    rule: str                                   # the rule, and where the docs say it
    seat: int                                   # the bot's seat
    contract: str
    hand: tuple[str, ...]                       # the bot's cards (the deal size)
    key: Key
    upcard: str = "3H"
    stock: tuple[str, ...] = ()
    others: Mapping[int, tuple[str, ...]] = field(default_factory=dict)   # other seats' fixed cards
    scripts: Mapping[int, Callable[[], ScriptedPlayer]] = field(default_factory=dict)
    turns: int = 1                              # turn_cap_per_player: the hand stops early
    needs: str = ""                             # what the bot must do to reach the decision

    @property
    def rules(self) -> dict[str, Any]:
        return {"contracts": [self.contract], "deal_size": len(self.hand),
                "turn_cap_per_player": self.turns}

    @property
    def deal(self) -> dict[str, Any]:
        hands: list[list[str]] = [list(self.others.get(s, ())) for s in range(PLAYERS)]
        hands[self.seat] = list(self.hand)
        entry: dict[str, Any] = {"hands": hands, "upcard": self.upcard}
        if self.stock:
            entry["stock"] = list(self.stock)
        return {"hands": [entry]}

    def players(self) -> dict[int, ScriptedPlayer]:
        """Fresh opponents (a script is used up as it is played)."""
        return {seat: self.scripts[seat]() if seat in self.scripts else ScriptedPlayer()
                for seat in range(PLAYERS) if seat != self.seat}


def _h(text: str) -> tuple[str, ...]:
    return tuple(text.split())


def _go_down(contract: str, melds: str, junk: str, note: str = "") -> Scenario:
    """The bot moves first holding ``melds`` (separated by '|') and ``junk``."""
    cards = " ".join(melds.split("|")) + " " + junk
    shown = " + ".join(m.strip() for m in melds.split("|"))
    return Scenario(
        f"go down: {contract}",
        f"going down lays exactly the contract {contract}, one meld per set and run "
        f"(docs/RULES.md, 'Go down'){note}; it holds {shown}",
        1, contract, _h(cards), first(PLAY), upcard="3H")


_TABLE_SET_RUN = "S3+R4"


def _opponent_down(melds: Sequence[Sequence[str]], discard: str) -> Callable[[], ScriptedPlayer]:
    return lambda: ScriptedPlayer([{"go_down": [list(m) for m in melds], "discard": discard}])


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "draw: upcard or stock",
        "a player who is not down draws the upcard or the top of the stock; the upcard 7H "
        "makes a set with its 7C 7D (docs/RULES.md, '1. Draw')",
        1, "2S3", _h("7C 7D QH QS 4C 9D 3S 5H 10C JD KD"), first(DRAW), upcard="7H"),
    Scenario(
        "buy: offered",
        "seat 1 declined the upcard 7H: a seat that is not down and has buys left is offered "
        "it; yes and no are both legal (docs/RULES.md, 'The buy window')",
        2, "2S3", _h("7C 7D QH QS 4C 9D 3S 5H 10C JD KD"), first(BUY), upcard="7H"),
    Scenario(
        "buy: not offered",
        "seat 1 declined the upcard 7H and seat 2, first in buy priority, bought it: nobody "
        "else is asked, and a bot answers only the requests it gets (docs/RULES.md, "
        "'The buy window'); then seat 2 took seat 1's JC and the bot draws",
        0, "2S3", _h("7C 7D QH QS 4C 9D 3S 5H 10C JD KD"), first_decision, upcard="7H",
        others={1: _h("JC")},
        scripts={1: lambda: ScriptedPlayer([{"discard": "JC"}]),
                 2: lambda: ScriptedPlayer(buys=["7H"], takes=["JC"])}),
    Scenario(
        "draw: stock only",
        "a player who is down cannot block a buy: seat 2 bought the 8H seat 0 discarded, so "
        "the only option is the stock (docs/RULES.md, 'Drawing and buying'; the request's "
        "options)",
        1, "2S3", _h("8C 8D 8S KH KS KD 4C 5C 9D QH 3S"), stock_only, upcard="3H",
        others={0: _h("8H"), 2: _h("KC")},
        scripts={0: lambda: ScriptedPlayer([{"discard": "8H"}]),
                 2: lambda: ScriptedPlayer([{"discard": "KC"}], buys=["8H"])},
        turns=2, needs="the bot did not go down on its first turn (it held 8C 8D 8S and KH KS KD)"),
    _go_down("2S3", "8C 8D 8S | KH KS JK", "4C 9D", ", a joker standing for a king"),
    _go_down("S3+R4", "9C 9D 9H | 5S 6S 7S 8S", "KD 3C"),
    _go_down("2R4", "AD 2D 3D 4D | JH QH KH AH", "7C 9S",
             ", an ace-low run (the 2D is natural there) and an ace-high run"),
    _go_down("3S3", "5C 5D 5H | 10C 10D 10S | QC QD 2S", "8H 3D", ", the 2S wild in a set of queens"),
    _go_down("2S3+R4", "6C 6D 6H | JC JD JS | 9H 10H JK QH", "3S 4D", ", a joker inside the run"),
    _go_down("S3+2R4", "4C 4D 4S | 3H 4H 5H 6H | 9C 10C JC QC", "KS 7D"),
    _go_down("3R4", "AS 2S 3S 4S | 6D 7D 8D 9D | 10C JC QC KC", "5H 8S"),
    _go_down("4S3", "3C 3D 3S | 7C 7H 7S | 10H 10S 10D | KC KD KH", "5S 9C"),
    _go_down("3S3+R4", "4H 4S 4C | 8C 8D 8H | QS QH QD | 5D 6D 7D 8D", "AC 9S"),
    _go_down("2S3+2R4", "5C 5S 5H | JH JS JD | 2C 3C 4C 5C | 9S 10S JS QS", "7H KD"),
    Scenario(
        "lay off: both ends of a run",
        "the bot is not down yet, but can go down with QC QD QS + 10S JS QS KS, and a player "
        "may lay off once down, also in the turn it goes down: seat 1's run 5H-8H takes the 4H "
        "at its low end and the 9H at its high end (docs/RULES.md, 'Lay off')",
        2, _TABLE_SET_RUN, _h("QC QD QS 10S JS QS KS 4H 9H 3C 5D"), first(PLAY),
        others={1: _h("9C 9D 9S 5H 6H 7H 8H KD")},
        scripts={1: _opponent_down([["9C", "9D", "9S"], ["5H", "6H", "7H", "8H"]], "KD")}),
    Scenario(
        "lay off: wild on an ace-high run",
        "seat 1's run JH-AH ends in a high ace: a wild laid off on it can only go at the low "
        "end, where it stands for 10H; nothing goes above the ace (docs/RULES.md, 'Lay off')",
        2, _TABLE_SET_RUN, _h("QC QD QS 10S JS QS KS JK 3C 5D 7C"), first(PLAY),
        others={1: _h("9C 9D 9S JH QH KH AH KD")},
        scripts={1: _opponent_down([["9C", "9D", "9S"], ["JH", "QH", "KH", "AH"]], "KD")}),
    Scenario(
        "swap a wild",
        "the joker in seat 1's run 5H JK 7H 8H stands for 6H: a player who is down, or goes "
        "down in the same turn, may put the 6H in and take the joker (docs/RULES.md, "
        "'Swap a wild')",
        2, _TABLE_SET_RUN, _h("QC QD QS 10S JS QS KS 6H 3C 5D 7C"), first(PLAY),
        others={1: _h("9C 9D 9S 5H JK 7H 8H KD")},
        scripts={1: _opponent_down([["9C", "9D", "9S"], ["5H", "JK", "7H", "8H"]], "KD")}),
    Scenario(
        "swap a wild: not down",
        "the joker in seat 1's run 5H JK 7H 8H stands for the 6H the bot holds, but the bot is "
        "not down and cannot go down this turn, even with the joker: a player who is not down "
        "may swap a wild only in the turn it goes down, so it may not swap (docs/RULES.md, "
        "'Swap a wild')",
        2, _TABLE_SET_RUN, _h("6H 3C 8D QS KC 5S JD 4D AS 10H 7C"), first(PLAY), stock=_h("KH 4C"),
        others={1: _h("9C 9D 9S 5H JK 7H 8H 3S")},
        scripts={1: _opponent_down([["9C", "9D", "9S"], ["5H", "JK", "7H", "8H"]], "3S")}),
    Scenario(
        "go out by laying off",
        "after its draw the bot holds only 8s and kings: it can go down and lay off every "
        "other card, emptying its hand, and then sends no discard (docs/RULES.md, "
        "'Going out')",
        1, "2S3", _h("8C 8D 8S KH KS KD 8H"), first(PLAY), upcard="KC", stock=_h("KC 8S")),
    Scenario(
        "one card left",
        "down with one card, the bot drew a second: a discard must leave it a card, so it "
        "cannot lay one off and discard the other; it lays off both (going out) or "
        "discards one (docs/RULES.md, '3. Discard')",
        1, "2S3", _h("8C 8D 8S KH KS KD 4C"), one_card_left, upcard="3H",
        stock=_h("5D 8H 8H KC KC KS KD"), turns=2,
        needs="the bot did not go down on its first turn (it held 8C 8D 8S and KH KS KD)"),
)

KINDS = (DRAW, BUY, PLAY)
