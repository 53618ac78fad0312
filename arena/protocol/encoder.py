"""``MatchEncoder``: the bytes of one match's messages, each made once.

A match sends the same things again and again: every public event to every
seat, and in every request the parts of the view that did not change since
the last one.  The encoder makes each event's notice line once for all seats,
and keeps per hand what does not change within it (seat, dealer, contract,
totals) and per meld its JSON until the meld changes.  A protocol 2 request
then costs one view of the game and one msgspec encode.

Protocol 1 requests (bots that asked for it in ``ready``) carry the hand's
history too; its events' JSON texts are kept per hand and spliced in, and
are only made when a protocol 1 seat asks, so protocol 2 seats never pay
for them.  Every line is the JSON object ``messages.request_message`` (or
``event_message``) gives, byte for byte in meaning (checked by the tests).
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import Any

from msgspec import Raw

from ..shanghai import events as ev
from ..shanghai.cards import Card
from ..shanghai.events import Event
from ..shanghai.game import Decision, Game, TableMeld, View
from ..shanghai.record import replace
from .messages import V1_ONLY_VIEW_FIELDS, TimeLimits, end_message, error_message, request_message, start_message
from .wire import End, ErrorNotice, EventNotice, RequestV2, Start, TimeJSON, ViewV2, encode, encode_into

# The bot already learns these from 'start' and 'end'; match_start also
# carries the seed, from which a bot could recompute every shuffle.
NOT_NOTICED = frozenset({ev.MATCH_START, ev.MATCH_END})

_TEXT = attrgetter("text")            # a card's text, in C
_RAW_OPTIONS: dict[tuple[Any, ...], Raw] = {}
_NOTICE_HEAD = encode(EventNotice({}))[:-3]     # b'{"type":"event","event":', from the Struct itself


def _options_raw(options: tuple[Any, ...]) -> Raw:
    """Draw and buy options are a handful of tuples: their bytes are kept."""
    raw = _RAW_OPTIONS.get(options)
    if raw is None:
        raw = _RAW_OPTIONS[options] = Raw(encode(list(options)))
    return raw


def _texts_raw(cards: Sequence[Card]) -> Raw:
    """The JSON array of the cards' texts.  A card's text is letters and
    digits, nothing JSON escapes: joined as they are (cheaper than a list
    for msgspec to encode, once a decision)."""
    return Raw(('["' + '","'.join(map(_TEXT, cards)) + '"]').encode() if cards else b"[]")


def _meld_raw(m: TableMeld) -> Raw:
    return Raw(encode(m.to_json()))


def encode_start(match: str, seat: int, names: list[str], rules_mapping: dict[str, Any],
                 time: TimeLimits, protocol: int) -> bytes:
    return encode(Start(protocol, match, seat, len(names), list(names), rules_mapping,
                        TimeJSON(time.startup, time.decision, time.bank)))


def encode_error(req_id: int | None, fault: str, reason: str, fallback: dict[str, Any] | None) -> bytes:
    return encode(ErrorNotice(req_id, fault, reason, fallback))


def encode_end(match: str, totals: list[int], places: list[int], forfeited: list[bool]) -> bytes:
    return encode(End(match, list(totals), list(places), list(forfeited)))


class MatchEncoder:
    """Encodes one match's notices and requests; shared by all its seats."""

    def __init__(self, game: Game) -> None:
        self.game = game
        # Per game.log entry: its notice line with the newline, b"" if not sent.
        self._lines: list[bytes] = []
        self._hand_no = -1
        self._hand_public: list[Event] | None = None
        self._seat_head: dict[int, tuple[int, int, int, int, int, str]] = {}
        self._totals: Raw = Raw(b"[]")
        self._melds: dict[int, tuple[TableMeld, Raw]] = {}
        self._laid: tuple[list[TableMeld] | None, list[Raw]] = (None, [])   # the table's list, its bytes
        # Per seat: the last hand (and play options) and their card texts;
        # a seat's cards change once or twice a turn, its requests are more.
        self._cards: dict[int, tuple[list[Card], Raw]] = {}
        self._options: dict[int, tuple[tuple[Any, ...], Raw]] = {}
        self._history: list[bytes] = []           # protocol 1 only
        self._buffer = bytearray()                # the last request (request_data)

    # ------------------------------------------------------------------ notices
    def notices(self, since: int) -> list[bytes]:
        """Notice lines of the public events from ``game.log[since]`` on."""
        self._make_lines()
        return [line[:-1] for line in self._lines[since:] if line]

    def request_data(self, since: int, req_id: int, d: Decision, protocol: int = 2) -> tuple[bytes, int]:
        """All a seat is sent for decision ``d`` in one write: the notices from
        ``game.log[since]`` on, then the request, each line ending in its
        newline; and where the seat's next notices start."""
        lines = self._lines
        end = len(self.game.log)
        if len(lines) != end:
            self._make_lines()
        out: list[bytes | bytearray] = lines[since:end]  # type: ignore[assignment]
        if protocol != 1:
            # Into a buffer kept from one request to the next: msgspec would
            # grow a new one from a few bytes, realloc after realloc.
            encode_into(self._request_v2(req_id, d), self._buffer)
            out.append(self._buffer)
        else:
            out.append(self._request_v1(req_id, d))
        out.append(b"\n")
        return b"".join(out), end

    def _make_lines(self) -> None:
        lines = self._lines
        for e in self.game.log[len(lines):]:
            # ``EventNotice``'s bytes, its head and tail spliced on (checked by tests/test_codec.py)
            lines.append(b"" if e.kind in NOT_NOTICED else _NOTICE_HEAD + encode(e.public_json()) + b"}\n")

    # ----------------------------------------------------------------- requests
    def request(self, req_id: int, d: Decision, protocol: int = 2) -> bytes:
        """The request line for seat ``d.seat``."""
        return encode(self._request_v2(req_id, d)) if protocol != 1 else self._request_v1(req_id, d)

    def _request_v2(self, req_id: int, d: Decision) -> RequestV2:
        """The protocol 2 request, made once a decision: what a seat's view
        shares with its last request comes from the caches, inline.  The
        rest is read from the game as ``Game.view`` reads it, without making
        the whole view (which only a new hand or a new seat needs);
        tests/test_codec.py checks the bytes against ``request_message``."""
        game = self.game
        seat = d.seat
        head = self._seat_head.get(seat)
        if head is None or game.hand_no != self._hand_no:
            head = self._head(game.view(seat))
        _seat, players, hand, hands_total, dealer, contract = head
        # The seat's cards, in hand order: a list the game changes in place,
        # kept as a copy while it is unchanged (its Card objects compare by identity).
        cards = game.hands[seat]
        hit = self._cards.get(seat)
        if hit is None or hit[0] != cards:
            hit = self._cards[seat] = (cards[:], _texts_raw(cards))
        kind = d.kind
        if kind == "play":
            options = d.options
            play = self._options.get(seat)
            if play is None or (play[0] is not options and play[0] != options):
                play = self._options[seat] = (options, _texts_raw(options))
            options_raw = play[1]
        else:
            options_raw = _RAW_OPTIONS.get(d.options) or _options_raw(d.options)
        # The table's melds: a new list whenever one changes (as Game.view
        # assumes too), so the same list has the same bytes.
        table = game.melds
        laid = self._laid
        if laid[0] is not table:
            laid = self._laid = (table, self._melds_raw(table))
        melds = laid[1]
        pile = game.pile
        pile_top = pile[-1].text if pile else None
        return RequestV2(req_id, kind, options_raw, ViewV2(
            seat, players, hand, hands_total, dealer, contract, hit[1], melds,
            pile_top if game.upcard_live else None, pile_top,
            len(pile), len(game.stock), tuple(map(len, game.hands)), game.buys_left(),
            tuple(game.down), game.turn, game.turns, self._totals))

    def _melds_raw(self, table: list[TableMeld]) -> list[Raw]:
        """Each meld's JSON, kept per meld until it changes (a new TableMeld)."""
        melds: list[Raw] = []
        cache = self._melds
        for m in table:
            meld = cache.get(m.id)
            if meld is None or meld[0] is not m:        # new, or changed
                meld = cache[m.id] = (m, _meld_raw(m))
            melds.append(meld[1])
        return melds

    def _head(self, view: View) -> tuple[int, int, int, int, int, str]:
        """What a seat's requests share for the whole hand (a new hand first)."""
        if view.hand_no != self._hand_no:
            self._new_hand(view)
        head = self._seat_head[view.seat] = (
            view.seat, view.players, view.hand_no, view.hands_total, view.dealer, view.contract.text)
        return head

    def _new_hand(self, view: View) -> None:
        self._hand_no = view.hand_no
        self._seat_head.clear()
        self._melds.clear()
        self._totals = Raw(encode(list(view.totals)))

    def _request_v1(self, req_id: int, d: Decision) -> bytes:
        """The protocol 1 request: the view with the hand's history spliced in."""
        game = self.game
        public = game.public
        if public is not self._hand_public:              # a new hand began
            self._hand_public = public
            self._history = []
        for e in public[len(self._history):]:
            self._history.append(encode(e.to_json()))
        view = replace(game.view(d.seat), history=())    # its history is spliced in below
        msg = request_message(req_id, d, view, protocol=1)
        view_json = msg.pop("view")
        del view_json["history"]
        decision = view_json.pop("decision")
        head = encode(msg)[:-1]
        body = encode(view_json)[:-1]
        history = b",".join(self._history)
        return (head + b',"view":' + body + b',"history":[' + history + b'],"decision":'
                + encode(decision) + b"}}")


__all__ = ["MatchEncoder", "NOT_NOTICED", "encode_start", "encode_error", "encode_end",
           "V1_ONLY_VIEW_FIELDS", "start_message", "error_message", "end_message"]
