"""The game: one mutable state, an explicit phase, verified actions.

``Game`` plays a whole match (one hand per contract).  At every moment
``decision()`` says whose decision it is and of what kind; ``apply(action)``
either applies it completely or raises ``IllegalAction`` and changes nothing.
``view(seat)`` is what that seat may know.  Every event is recorded, with the
shuffled orders, so ``Game.from_record`` replays a match exactly.

Turn flow after a discard (or the first upcard of a hand):
- the player to move, if not down, decides first: take the upcard, or take
  from the stock, which declines the upcard and opens the buy window; when the
  window closes they draw from the stock;
- a player who is down cannot block a buy: the window opens first, then they
  draw from the stock or, if nobody bought it, take the upcard.
Buy offers go to eligible seats one at a time in priority order; the first
yes wins and the window closes.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Mapping
from typing import Any

from . import events as ev
from .actions import BUY, DRAW, PLAY, STOCK, UPCARD, Action, Buy, Draw, Play, action_from_json
from .cards import Card, make_shoe, sort_key
from .chance import Chance, RecordedChance, SeededChance
from .errors import IllegalAction, RulesetError
from .events import (
    Bought,
    Dealt,
    Declined,
    Discarded,
    Drew,
    Event,
    HandEnded,
    MatchEnded,
    MatchStarted,
    Reshuffled,
    WentOut,
)
from .plays import Staged, check_play
from .ruleset import Ruleset
from .view import Decision, History, TableMeld, View, places_of
from .vocab import DecisionKind, HandEndReason

__all__ = ["Game", "Decision", "TableMeld", "View", "places_of", "OVER"]

OVER = None  # the phase once the match is over: no decision is pending
_new = object.__new__

# Which decision each action type answers (exact types: action classes cannot be subclassed).
_KIND_OF: dict[type, DecisionKind] = {Draw: DRAW, Buy: BUY, Play: PLAY}


class Game:
    """A match of Shanghai Rummy between ``players`` seats.

    A new seeded match is dealt at once; ``decision()`` says who decides what:

    >>> from arena.shanghai.actions import Draw, STOCK, UPCARD, discard_only
    >>> from arena.shanghai.ruleset import Ruleset
    >>> game = Game.seeded(Ruleset.preset("shanghai"), players=3, seed=7)
    >>> game.decision()
    Decision(seat=1, kind='draw', options=('upcard', 'stock'))

    ``view(seat)`` is all that seat may know; its events are public forms:

    >>> view = game.view(1)
    >>> view.contract.text, len(view.hand), view.upcard
    ('2S3', 11, Card(KC))
    >>> view.history[0]
    Dealt(hand=1, dealer=0, contract='2S3', deal_size=11, upcard='KC', shoe=None, withheld=True)

    ``legal_reason`` says why an action would be refused; ``apply`` applies
    a legal one (or raises ``IllegalAction``) and logs its events:

    >>> game.legal_reason(Draw(UPCARD), seat=0)
    "it is seat 1's decision (draw), not seat 0's"
    >>> game.apply(Draw(UPCARD), seat=1)
    >>> game.log[-1]
    Drew(hand=1, seat=1, source='upcard', card='KC', withheld=False)
    >>> d = game.decision()
    >>> d.kind, len(d.options)
    ('play', 12)
    >>> game.apply(discard_only(d.options[0]))
    >>> game.log[-1], game.decision().seat
    (Discarded(hand=1, seat=1, card='2C'), 2)

    The record replays to the same events; scores are kept per hand
    (``hand_scores``) and in ``totals``, ranked by ``places()``:

    >>> Game.from_record(game.to_record()).log == game.log
    True
    >>> game.totals, game.places()
    ([0, 0, 0], [1, 1, 1])
    """

    def __init__(self, rules: Ruleset, players: int, chance: Chance, seed: int | None = None) -> None:
        if not 2 <= players <= 8:
            raise ValueError(f"players must be 2..8, got {players}")
        self.rules = rules
        self.n = players
        self.chance = chance
        self.seed = seed
        self._shoe = make_shoe(rules.decks_for(players))
        for hand, size in enumerate(rules.deal_sizes):
            if players * size + 2 > len(self._shoe):
                raise RulesetError(
                    "deal_size",
                    f"hand {hand + 1}: {players} players x {size} cards do not fit in "
                    f"{rules.decks_for(players)} deck(s) of 54 with an upcard and a stock card left",
                )
        self.hand_no = 0
        self.dealer = -1
        # Each hand is kept in hand order (sort_key) as cards arrive, so a view
        # copies it instead of sorting it on every decision.
        self.hands: list[list[Card]] = [[] for _ in range(players)]
        self.stock: list[Card] = []  # top is the last element
        self.pile: list[Card] = []  # top is the last element
        self.upcard_live = False
        self.discarder: int | None = None
        self.melds: list[TableMeld] = []
        self.down = [False] * players
        self.buys = [0] * players
        self.turn = 0
        self.turns = 0
        self.reshuffles = 0
        self.phase: DecisionKind | None = DRAW     # None: OVER
        self.declined = False
        self.buy_queue: list[int] = []
        self.hand_scores: list[list[int]] = []
        self.totals = [0] * players
        self.winners: list[int | None] = []
        self.log: list[Event] = []
        # Public events of the current hand.  Only ever appended to (a new
        # list each hand): views share it through History instead of copying.
        self.public: list[Event] = []
        self.actions: list[tuple[int, Action]] = []
        self._decision: Decision | None = None
        # Draw and buy decisions are few distinct values: made once, shared.
        self._decisions: dict[tuple[int, DecisionKind, bool], Decision] = {}
        # Buy windows offer seats in an order that only depends on who is first.
        self._orders = [[(first + i) % players for i in range(players)] for first in range(players)]
        self._buys_left: tuple[int, ...] | None = None  # view()'s, until a buy or a new hand
        # view()'s tuples of what changes seldom, with what they were made from.
        self._melds_view: tuple[list[TableMeld], tuple[TableMeld, ...]] = ([], ())
        self._scores_view: tuple[int, tuple[tuple[int, ...], ...], tuple[int, ...]] = (-1, (), ())
        self._history_view = History([])
        self._emit(MatchStarted(0, players, rules.to_mapping(), seed))
        self._start_hand()

    @classmethod
    def seeded(
        cls, rules: Ruleset, players: int, seed: int, plan: Mapping[str, Any] | None = None,
    ) -> Game:
        return cls(rules, players, SeededChance(seed, plan), seed=seed)

    # -- queries ---------------------------------------------------------------
    @property
    def over(self) -> bool:
        return self.phase is OVER

    def decision(self) -> Decision | None:
        # Cached: the match loop, apply() and view() all ask for it each step.
        if self._decision is None:
            self._decision = self._compute_decision()
        return self._decision

    def _compute_decision(self) -> Decision | None:
        phase = self.phase
        if phase == PLAY:
            # the hand is in hand order: its distinct cards, in that order
            return Decision(self.turn, PLAY, tuple(dict.fromkeys(self.hands[self.turn])))
        if phase is OVER:
            return None
        seat = self.buy_queue[0] if phase == BUY else self.turn
        key = (seat, phase, self.upcard_live)
        found = self._decisions.get(key)
        if found is None:
            options = (True, False) if phase == BUY else (UPCARD, STOCK) if self.upcard_live else (STOCK,)
            found = self._decisions[key] = Decision(seat, phase, options)
        return found

    def view(self, seat: int) -> View:
        d = self._decision
        if d is None:
            d = self.decision()
        rules = self.rules
        hand = self.hand_no - 1
        pile = self.pile
        # What changes only between hands (scores, totals) or when melds are
        # laid (a new list each time) is made into tuples once, not per view.
        melds = self._melds_view
        if melds[0] is not self.melds:
            melds = self._melds_view = (self.melds, tuple(self.melds))
        scores = self._scores_view
        if scores[0] != len(self.hand_scores):
            scores = self._scores_view = (len(self.hand_scores), tuple(map(tuple, self.hand_scores)),
                                          tuple(self.totals))
        public = self.public
        history = self._history_view
        if history._events is not public or history._n != len(public):
            # shared: public is only appended to.  Built here rather than by
            # History's __init__: this runs on nearly every decision.
            history = self._history_view = _new(History)
            history._events = public
            history._n = len(public)
        buys_left = self._buys_left
        if buys_left is None:
            buys_left = self.buys_left()
        # Positional, in View's field order: keyword arguments made a frozen
        # dataclass cost twice as much to build, once per decision.
        return View(
            seat,
            self.n,
            self.hand_no,
            len(rules.contracts),
            self.dealer,
            rules.contracts[hand],
            tuple(self.hands[seat]),
            melds[1],
            pile[-1] if self.upcard_live and pile else None,  # upcard
            pile[-1] if pile else None,  # pile_top
            len(pile),
            len(self.stock),
            tuple(map(len, self.hands)),  # card_counts
            buys_left,
            tuple(self.down),
            self.turn,
            self.turns,
            scores[1],
            scores[2],
            history,
            d if d is not None and d.seat == seat else None,
            rules,
        )

    def buys_left(self) -> tuple[int, ...]:
        """Each seat's buys left in this hand (kept until a buy or a new hand)."""
        buys_left = self._buys_left
        if buys_left is None:
            limit = self.rules.buy_limits[self.hand_no - 1]
            buys_left = self._buys_left = tuple([limit - b for b in self.buys])
        return buys_left

    def places(self) -> list[int]:
        return places_of(self.totals)

    # -- actions ---------------------------------------------------------------
    def legal_reason(self, action: Action, seat: int | None = None) -> str | None:
        """Why ``apply(action, seat)`` would refuse ``action``, or None if it is legal.

        Changes nothing and raises nothing: for players and tools that try
        actions out.  The reason is the message ``apply`` would raise.
        """
        d = self.decision()
        reason = self._turn_reason(d, action, seat)
        if reason is not None or d is None:
            return reason
        if isinstance(action, Draw):
            return self._draw_reason(action)
        if isinstance(action, Play):
            staged = self._check_play(action)
            return staged if isinstance(staged, str) else None
        return None

    def is_legal(self, action: Action, seat: int | None = None) -> bool:
        return self.legal_reason(action, seat) is None

    def apply(self, action: Action, seat: int | None = None) -> None:
        """Apply the current decision's action, or raise IllegalAction and change nothing."""
        d = self._decision
        if d is None:
            d = self.decision()
        kind = _KIND_OF.get(type(action))
        if d is None or kind != d.kind or (seat is not None and seat != d.seat):
            # the reason is only worded on refusal
            raise IllegalAction(self._turn_reason(d, action, seat) or "the match is over")
        if kind == DRAW:
            reason = self._draw_reason(action)  # type: ignore[arg-type]  # kind DRAW: a Draw
            if reason is not None:
                raise IllegalAction(reason)
            self._draw(action)  # type: ignore[arg-type]
        elif kind == BUY:
            self._buy(action)  # type: ignore[arg-type]  # kind BUY: a Buy
        else:
            staged = self._check_play(action)  # type: ignore[arg-type]  # kind PLAY: a Play
            if isinstance(staged, str):
                raise IllegalAction(staged)
            self._commit_play(action, staged)  # type: ignore[arg-type]
        self._decision = None
        self.actions.append((d.seat, action))

    @staticmethod
    def _turn_reason(d: Decision | None, action: Action, seat: int | None) -> str | None:
        """Why ``action`` does not answer decision ``d`` at all, or None."""
        if d is None:
            return "the match is over"
        if seat is not None and seat != d.seat:
            return f"it is seat {d.seat}'s decision ({d.kind}), not seat {seat}'s"
        kind = (DRAW if isinstance(action, Draw) else BUY if isinstance(action, Buy)
                else PLAY if isinstance(action, Play) else None)
        if kind != d.kind:
            return f"seat {d.seat} is asked to {d.kind}, so a {type(action).__name__.lower()} action is not allowed now"
        return None

    def _draw_reason(self, action: Draw) -> str | None:
        if action.source not in (UPCARD, STOCK):
            return f"draw from 'stock' or 'upcard', not {action.source!r}"
        if action.source == UPCARD and not self.upcard_live:
            return "there is no upcard to take now (it was bought or is dead); draw from the stock"
        return None

    def _draw(self, action: Draw) -> None:
        seat = self.turn
        if action.source == UPCARD:
            c = self.pile.pop()
            self.upcard_live = False
            insort(self.hands[seat], c, key=sort_key)
            self._public(Drew(self.hand_no, seat, UPCARD, c.text))
            self.phase = PLAY
            return
        if not self.down[seat] and self.upcard_live:
            self.declined = True
            self._public(Declined(self.hand_no, seat, self.pile[-1].text))
            self._open_buy_window()
        else:
            self._draw_stock(seat)

    def _draw_stock(self, seat: int) -> None:
        c = self._stock_card()
        if c is None:
            return  # the hand ended: nothing left to draw
        self.upcard_live = False
        insort(self.hands[seat], c, key=sort_key)
        # the card drawn is the referee's secret: the public form leaves it out
        hand_no = self.hand_no
        self.log.append(Drew(hand_no, seat, STOCK, c.text))
        self.public.append(Drew(hand_no, seat, STOCK, None, True))
        self.phase = PLAY

    def _buy_order(self) -> list[int]:
        first = self.dealer + 1 if self.rules.buy_priority == "dealer_left" else self.turn + 1
        return self._orders[first % self.n]

    def _open_buy_window(self) -> None:
        queue: list[int] = []
        if self.upcard_live and len(self.stock) >= self.rules.buy_penalty:
            # a loop, not a comprehension: this runs after every discard
            limit = self.rules.buy_limits[self.hand_no - 1]
            turn, discarder, down, buys = self.turn, self.discarder, self.down, self.buys
            for s in self._buy_order():
                if s != turn and s != discarder and not down[s] and buys[s] < limit:
                    queue.append(s)
        self.buy_queue = queue
        if queue:
            self.phase = BUY
        else:
            self._close_buy_window()

    def _close_buy_window(self) -> None:
        self.buy_queue = []
        if self.declined:
            self._draw_stock(self.turn)
        else:
            self.phase = DRAW

    def _buy(self, action: Buy) -> None:
        seat = self.buy_queue[0]
        if not action.want:
            self.buy_queue.pop(0)
            if not self.buy_queue:
                self._close_buy_window()
            return
        c = self.pile.pop()
        self.upcard_live = False
        penalty = [self.stock.pop() for _ in range(self.rules.buy_penalty)]
        hand = self.hands[seat]
        for got in (c, *penalty):
            insort(hand, got, key=sort_key)
        self.buys[seat] += 1
        self._buys_left = None
        self._emit(Bought(self.hand_no, seat, c.text, len(penalty), [p.text for p in penalty],
                          self.rules.buy_limit(self.hand_no - 1) - self.buys[seat]))
        self._close_buy_window()

    def _stock_card(self) -> Card | None:
        if not self.stock:
            if self.reshuffles < self.rules.max_reshuffles and len(self.pile) > 1:
                top = self.pile[-1]
                order = self.chance.reshuffle(self.hand_no, self.pile[:-1])
                self.pile = [top]
                self.stock = order[::-1]
                self.reshuffles += 1
                self._emit(Reshuffled(self.hand_no, len(order), [c.text for c in order]))
            else:
                self._end_hand(None, HandEndReason.STOCK)
                return None
        return self.stock.pop()

    # -- the play: go down, lay off, swap, discard -------------------------------
    def _check_play(self, play: Play) -> Staged | str:
        seat = self.turn
        return check_play(play, self.hands[seat], self.melds, self.down[seat], seat, self.rules, self.hand_no)

    def _commit_play(self, play: Play, staged: Staged) -> None:
        seat = self.turn
        hand = staged.hand
        self.hands[seat] = hand
        self.melds = staged.melds
        self.down[seat] = staged.down
        for e in staged.pending:  # go_down, lay_off, swap: nothing secret
            self._public(e)
        if not hand:
            self._public(WentOut(self.hand_no, seat))
            self._end_hand(seat, HandEndReason.OUT)
            return
        assert play.discard is not None
        self.pile.append(play.discard)
        self.upcard_live = True
        self.discarder = seat
        self._public(Discarded(self.hand_no, seat, play.discard.text))
        self.turns += 1
        if self.turns >= self.rules.turn_cap_per_player * self.n:
            self._end_hand(None, HandEndReason.TURN_CAP)
            return
        self.turn = (seat + 1) % self.n
        self._begin_turn()

    # -- hands -----------------------------------------------------------------
    def _begin_turn(self) -> None:
        self.declined = False
        if self.down[self.turn]:
            self._open_buy_window()
        else:
            self.phase = DRAW

    def _start_hand(self) -> None:
        self.hand_no += 1
        self.dealer = (self.hand_no - 1) % self.n
        size = self.rules.deal_size(self.hand_no - 1)
        order = self.chance.shoe(self.hand_no, list(self._shoe), self.n, self.dealer, size)
        self.hands = [[] for _ in range(self.n)]
        k = 0
        for _ in range(size):
            for i in range(self.n):
                self.hands[(self.dealer + 1 + i) % self.n].append(order[k])
                k += 1
        for h in self.hands:
            h.sort(key=sort_key)
        self.pile = [order[k]]
        self.stock = order[k + 1:][::-1]
        self.upcard_live = True
        self.discarder = None
        self.melds = []
        self.down = [False] * self.n
        self.buys = [0] * self.n
        self._buys_left = None
        self.turns = 0
        self.reshuffles = 0
        self.turn = (self.dealer + 1) % self.n
        self.public = []
        contract = self.rules.contract(self.hand_no - 1)
        self._emit(Dealt(self.hand_no, self.dealer, contract.text, size, order[k].text, [c.text for c in order]))
        self._begin_turn()

    def _end_hand(self, winner: int | None, reason: HandEndReason) -> None:
        scores = [0 if s == winner else sum(c.penalty() for c in self.hands[s]) for s in range(self.n)]
        self.hand_scores.append(scores)
        self.winners.append(winner)
        for s in range(self.n):
            self.totals[s] += scores[s]
        self._public(HandEnded(self.hand_no, winner, reason, scores, list(self.totals)))
        if self.hand_no >= self.rules.hands:
            self.phase = OVER
            self._public(MatchEnded(self.hand_no, list(self.totals), self.places()))
        else:
            self._start_hand()

    def _emit(self, e: MatchStarted | Dealt | Bought | Reshuffled) -> None:
        """Record an event with a secret: the log keeps it whole, the hand's
        public events its public form."""
        self.log.append(e)
        self.public.append(e.public())

    def _public(self, e: Event) -> None:
        """Record an event with nothing secret (every action emits one or two)."""
        self.log.append(e)
        self.public.append(e)

    # -- records and replay ------------------------------------------------------
    def to_record(self) -> dict[str, Any]:
        """The whole match as JSON-ready data: events (with chance) and actions.
        Most actions are shared objects (the draws, the buys, a plain discard
        of each card: ``apply`` keeps what it is given), so each one's JSON is
        made once a record and shared within it: the record is data to store,
        read and not changed."""
        made: dict[int, tuple[Action, dict[str, Any]]] = {}
        actions = []
        for seat, action in self.actions:
            hit = made.get(id(action))
            if hit is None:
                hit = made[id(action)] = (action, action.to_json())    # kept: its id stays its own
            actions.append({"seat": seat, "action": hit[1]})
        return {"events": [e.to_json() for e in self.log], "actions": actions}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Game:
        """Replay a record: same deals and reshuffles, same actions, same events."""
        events = record["events"]
        start = events[0]
        if start.get("type") != ev.MATCH_START:
            raise ValueError("a record starts with a match_start event")
        rules = Ruleset.from_mapping(start["rules"])
        shoes = [e["shoe"] for e in events if e["type"] == ev.DEAL]
        orders = [e["order"] for e in events if e["type"] == ev.RESHUFFLE]
        game = cls(rules, start["players"], RecordedChance(shoes, orders), seed=start.get("seed"))
        for entry in record["actions"]:
            game.apply(action_from_json(entry["action"]), seat=entry["seat"])
        return game
