"""botkit: write a Shanghai arena bot in Python in a few dozen lines.

The arena speaks to a bot with one JSON object per line on stdin/stdout
(``docs/PROTOCOL.md``).  This module does the talking: it answers ``start``
with ``ready``, turns each ``request`` into a real ``View`` (the same object
the in-process players of ``arena.players`` get), asks your code for a
decision, writes the reply (and flushes), prints the arena's ``error``
notices on stderr, and plays match after match until ``quit``.

The smallest bot::

    from arena import botkit
    from arena.botkit import Draw, Buy, Play, STOCK

    def play(view):                       # view: arena.shanghai.game.View
        melds = botkit.find_contract(view.hand, view.contract, view.rules)
        ...                               # build a Play, or just discard:
        return Play((), max(view.hand, key=lambda c: c.penalty()))

    botkit.run(name="my-bot",
               draw=lambda view: Draw(STOCK),
               buy=lambda view: Buy(False),
               play=play)

or give it an object with ``draw``, ``buy`` and ``play`` methods::

    from arena.players.greedy import GreedyPlayer
    botkit.run(make_player=lambda info: GreedyPlayer(info.rng()), name="greedy-bot")

A callback returns an action (``Draw``, ``Buy``, ``Play``), or a dict in the
reply form without the id (``{"draw": "stock"}``), or a dict in the engine's
form (``{"type": "draw", "source": "stock"}``).  If it raises, the traceback
goes to stderr and a safe move is sent instead (draw from the stock, do not
buy, discard the costliest card), so one bug does not cost a strike.

Optional hooks, as keyword arguments or as methods of the player object:
``on_start(info)``, ``on_event(event)`` (the event dict), ``on_error(msg)``
(the whole error message), ``on_end(msg)``.

botkit speaks protocol 2 (it says so in ``ready``): requests carry no
history, and the history arrives as ``event`` notices, each once.  botkit
keeps it, hand by hand, and puts it in every view it builds
(``view.history``, ``view.hand_scores``), so a player sees the same ``View``
as an in-process player of ``arena.players``.

Meld search and meld rules are re-exported here: ``find_contract``,
``find_best_contract``, ``could_go_down``, ``make_meld``, ``make_set``,
``make_run``, ``lay_off``, ``lay_off_ends``, ``swap_wild``, ``guess_kind``.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable, Mapping
from importlib import import_module

from .protocol.replies import PROTOCOL_VERSION, reply_from_action
from .shanghai.actions import (
    BUY,
    DRAW,
    PLAY,
    STOCK,
    UPCARD,
    Action,
    Buy,
    Draw,
    GoDown,
    LayOff,
    MeldCards,
    Play,
    Step,
    Swap,
    action_from_json,
    discard_only,
)
from .shanghai.cards import JOKER, JOKER_RANK, Card, cards_text, parse_card, parse_cards, sort_key
from .shanghai.events import Event, HandEnded, event_from_json
from .shanghai.melds import Meld, guess_kind, lay_off, lay_off_ends, make_meld, make_run, make_set, swap_wild
from .shanghai.record import field, record
from .shanghai.ruleset import RUN, SET, Contract, Ruleset, parse_contract
from .shanghai.view import Decision, TableMeld, View  # not .game: a bot plays no Game

TYPE_CHECKING = False  # typing's flag without loading typing, which bots never need (tests/test_botstart.py)
if TYPE_CHECKING:
    from typing import Any, TextIO

    from .shanghai.finder import could_go_down, find_best_contract, find_contract

    Callback = Callable[[View], Any]
    Codec = tuple[Callable[[str], Any], Callable[[Any], str]]

_LAZY = {"could_go_down", "find_best_contract", "find_contract"}


def __getattr__(name: str) -> Any:
    # The meld search loads on first use (PEP 562): a bot that never searches
    # does without it, and every bot answers ``start`` sooner.
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(".shanghai.finder", __package__), name)
    globals()[name] = value
    return value

__all__ = [
    # the loop
    "run", "BotSession", "MatchInfo", "FunctionPlayer",
    # decoding
    "view_from_json", "parse_request", "History", "fallback_action", "is_wild",
    # actions
    "Action", "Draw", "Buy", "Play", "GoDown", "LayOff", "Swap", "MeldCards", "Step", "discard_only",
    "DRAW", "BUY", "PLAY", "STOCK", "UPCARD", "SET", "RUN",
    # cards, melds, rules
    "Card", "JOKER", "parse_card", "parse_cards", "cards_text", "sort_key",
    "Meld", "TableMeld", "make_meld", "make_set", "make_run", "lay_off", "lay_off_ends", "swap_wild",
    "guess_kind", "find_contract", "find_best_contract", "could_go_down",
    "View", "Decision", "Contract", "Ruleset", "parse_contract", "Event", "event_from_json", "PROTOCOL_VERSION",
]


# -- decoding ------------------------------------------------------------------


def _card_or_none(text: Any) -> Card | None:
    return None if text is None else parse_card(text)


def _option(kind: str, value: Any) -> Any:
    # The engine's Decision holds Card objects as play options; draw and buy
    # options are plain strings and booleans.
    return parse_card(value) if kind == PLAY else value


def view_from_json(obj: Mapping[str, Any], rules: Ruleset, *,
                   history: tuple[Event, ...] | None = None,
                   hand_scores: tuple[tuple[int, ...], ...] | None = None,
                   decision: Decision | None = None) -> View:
    """Rebuild the engine's ``View`` from its JSON form (a request's ``view``).

    ``rules`` is the match's ruleset (``Ruleset.from_mapping(start["rules"])``);
    melds are rebuilt with the engine's own meld rules, so ``view.melds[i].meld``
    knows which cards are wild and where a run can grow.  A protocol 2 view
    has no ``history``, ``hand_scores`` nor ``decision``: give them (botkit
    keeps the first two from the notices; the decision is the request's).
    A protocol 1 view carries them.
    """
    wd = rules.wild_deuces
    d = obj.get("decision")
    if d is not None:
        kind = d["kind"]
        decision = Decision(obj["seat"], kind, tuple(_option(kind, o) for o in d["options"]))
    if "history" in obj:
        # Views hold public events only; .public() drops the secret-key marks.
        history = tuple(event_from_json(e).public() for e in obj["history"])
    if "hand_scores" in obj:
        hand_scores = tuple(tuple(s) for s in obj["hand_scores"])
    return View(
        seat=obj["seat"],
        players=obj["players"],
        hand_no=obj["hand"],
        hands_total=obj["hands_total"],
        dealer=obj["dealer"],
        contract=parse_contract(obj["contract"]),
        hand=tuple(parse_card(c) for c in obj["cards"]),
        melds=tuple(
            TableMeld(m["id"], m["owner"], make_meld([parse_card(c) for c in m["cards"]], m["kind"], wd))
            for m in obj["melds"]
        ),
        upcard=_card_or_none(obj.get("upcard")),
        pile_top=_card_or_none(obj.get("pile_top")),
        pile_size=obj["pile_size"],
        stock_size=obj["stock_size"],
        card_counts=tuple(obj["card_counts"]),
        buys_left=tuple(obj["buys_left"]),
        down=tuple(obj["down"]),
        turn=obj["turn"],
        turns_taken=obj["turns_taken"],
        hand_scores=hand_scores or (),
        totals=tuple(obj["totals"]),
        history=history or (),
        decision=decision,
        rules=rules,
    )


def parse_request(msg: Mapping[str, Any], rules: Ruleset, *,
                  history: tuple[Event, ...] | None = None,
                  hand_scores: tuple[tuple[int, ...], ...] | None = None,
                  ) -> tuple[str, tuple[Any, ...], View]:
    """``(kind, options, view)`` of a request message; play options are Cards.
    ``history`` and ``hand_scores`` complete a protocol 2 view (see
    ``view_from_json``); ``History`` keeps them from the notices."""
    kind = msg["kind"]
    options = tuple(_option(kind, o) for o in msg.get("options", ()))
    raw_view = msg["view"]
    decision = Decision(raw_view["seat"], kind, options)
    view = view_from_json(raw_view, rules, history=history, hand_scores=hand_scores,
                          decision=decision)
    return kind, options, view


class History:
    """The public history, rebuilt from the ``event`` notices as they come:
    this hand's events (``events``, from its ``deal`` on) and the scores of
    the hands played (``hand_scores``).  Each notice is read once; a view
    gets the events as a tuple made only when it changed."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.hand_scores: list[tuple[int, ...]] = []
        self._frozen: tuple[Event, ...] | None = ()

    def clear(self) -> None:
        """A new match."""
        self.events, self.hand_scores, self._frozen = [], [], ()

    def add(self, event: Mapping[str, Any]) -> None:
        e = event_from_json(event).public()
        if e.kind == "deal":
            self.events = []
        self.events.append(e)
        self._frozen = None
        if isinstance(e, HandEnded):
            self.hand_scores.append(tuple(e.scores))

    def history(self) -> tuple[Event, ...]:
        if self._frozen is None:
            self._frozen = tuple(self.events)
        return self._frozen


def is_wild(c: Card, rules: Ruleset | bool = True) -> bool:
    """Whether ``c`` is a wild candidate (a joker, or a 2 when deuces are wild).

    A 2 that stands for itself in a meld is natural there; the meld functions
    know that, this quick test does not.
    """
    wd = rules.wild_deuces if isinstance(rules, Ruleset) else rules
    return c.rank == JOKER_RANK or (wd and c.rank == 2)


def fallback_action(kind: str, view: View | None) -> Action:
    """A move that is always legal: stock, no buy, discard the costliest natural card."""
    if kind == DRAW:
        return Draw(STOCK)
    if kind == BUY:
        return Buy(False)
    assert view is not None and view.hand, "a play decision always has cards in hand"
    naturals = [c for c in view.hand if not is_wild(c, view.rules)] or list(view.hand)
    return discard_only(max(naturals, key=lambda c: (c.penalty(), c.rank)))


# -- match information -------------------------------------------------------------


@record(slots=False)
class MatchInfo:
    """The ``start`` message, decoded."""

    match: str
    seat: int
    players: int
    names: tuple[str, ...]
    rules: Ruleset
    time: Mapping[str, Any]
    raw: Mapping[str, Any] = field(repr=False)

    @classmethod
    def from_message(cls, msg: Mapping[str, Any]) -> MatchInfo:
        return cls(
            match=str(msg.get("match", "")),
            seat=int(msg.get("seat", 0)),
            players=int(msg.get("players", len(msg.get("names", ())))),
            names=tuple(msg.get("names", ())),
            rules=Ruleset.from_mapping(msg.get("rules") or {}),
            time=dict(msg.get("time") or {}),
            raw=dict(msg),
        )

    @property
    def seed(self) -> int:
        """A seed that depends only on the match id and the seat (stable across runs)."""
        digest = _sha256(f"{self.match}/{self.seat}".encode())
        return int.from_bytes(digest[:8], "big")

    def rng(self) -> random.Random:
        """A random generator seeded with ``seed``: same match, same seat, same game."""
        return random.Random(self.seed)


def _sha256(data: bytes) -> bytes:
    """SHA-256 from CPython's own module: ``hashlib`` would first load
    OpenSSL's libcrypto, about 2 ms of every bot's start; the digest is the same."""
    for name in ("_sha256", "_sha2"):   # CPython up to 3.11, from 3.12
        try:
            return bytes(import_module(name).sha256(data).digest())
        except ImportError:
            continue
    # lazy: a fallback only; hashlib loads OpenSSL's libcrypto, ~4 ms of a bot's start (python -X importtime)
    import hashlib
    return hashlib.sha256(data).digest()


# -- players made of functions -----------------------------------------------------



class FunctionPlayer:
    """A player made of up to three functions of the view; missing ones play safe."""

    def __init__(self, draw: Callback | None = None, buy: Callback | None = None,
                 play: Callback | None = None, name: str = "python-bot") -> None:
        self.name = name
        self._draw, self._buy, self._play = draw, buy, play

    def draw(self, view: View) -> Any:
        return self._draw(view) if self._draw else Draw(STOCK)

    def buy(self, view: View) -> Any:
        return self._buy(view) if self._buy else Buy(False)

    def play(self, view: View) -> Any:
        return self._play(view) if self._play else fallback_action(PLAY, view)


# -- the session -------------------------------------------------------------------


def _reply_for(req_id: Any, answer: Any) -> dict[str, Any]:
    """The reply line for what a callback returned (an action or a dict)."""
    if isinstance(answer, (Draw, Buy, Play)):
        return reply_from_action(req_id, answer)
    if isinstance(answer, Mapping):
        if "type" in answer:  # the engine's form, as in docs/RULES.md
            return reply_from_action(req_id, action_from_json(answer))
        return {**answer, "id": req_id}
    raise TypeError(f"a decision callback must return Draw, Buy, Play or a dict, not {type(answer).__name__}")


def _safe_reply(req_id: Any, kind: Any, msg: Mapping[str, Any], view: View | None) -> dict[str, Any]:
    """A legal reply even when the view could not be read: stock, no buy, a discard."""
    if kind in (DRAW, BUY):
        return reply_from_action(req_id, fallback_action(kind, None))
    if view is not None and view.hand:
        return reply_from_action(req_id, fallback_action(PLAY, view))
    raw_view = msg.get("view")
    cards = (raw_view.get("cards") if isinstance(raw_view, Mapping) else None) or msg.get("options") or [None]
    return {"id": req_id, "discard": cards[0]}


class BotSession:
    """The protocol loop of one bot process, testable without a process.

    ``handle(msg)`` takes one decoded message and returns the reply to write
    (or None); ``run()`` reads stdin and writes stdout until ``quit`` or EOF.
    """

    # Lines read with json before msgspec takes over (see _json_codec): its
    # import (~10.5 ms) over what it saves a line (~2.6 us, measured on whole matches).
    faster_after = 4000

    def __init__(
        self,
        player: Any = None,
        *,
        name: str | None = None,
        make_player: Callable[[MatchInfo], Any] | None = None,
        draw: Callback | None = None,
        buy: Callback | None = None,
        play: Callback | None = None,
        on_start: Callable[[MatchInfo], None] | None = None,
        on_event: Callable[[dict[str, Any]], None] | None = None,
        on_error: Callable[[dict[str, Any]], None] | None = None,
        on_end: Callable[[dict[str, Any]], None] | None = None,
        print_errors: bool = True,
        stderr: TextIO | None = None,
    ) -> None:
        if player is None and make_player is None:
            player = FunctionPlayer(draw, buy, play, name or "python-bot")
        self.player = player
        self.make_player = make_player
        self.name = name or getattr(player, "name", None) or "python-bot"
        self.hooks = {"on_start": on_start, "on_event": on_event, "on_error": on_error, "on_end": on_end}
        self.print_errors = print_errors
        self._stderr = stderr
        self.info: MatchInfo | None = None
        self.rules: Ruleset = Ruleset()
        self.done = False
        self.matches = 0
        self.errors: list[dict[str, Any]] = []
        self.history = History()
        self.lines_read = 0
        self._decode, self._encode = _json_codec()

    @property
    def stderr(self) -> TextIO:
        return self._stderr if self._stderr is not None else sys.stderr

    def log(self, text: str) -> None:
        print(text, file=self.stderr, flush=True)

    def _hook(self, name: str, arg: Any) -> None:
        fns = [self.hooks.get(name), getattr(self.player, name, None)]
        for fn in fns:
            if fn is None:
                continue
            try:
                fn(arg)
            except Exception:  # a bug in a hook must not kill the bot
                self.log(f"botkit: {name} raised:\n{_traceback()}")

    # -- one message ---------------------------------------------------------------
    def handle(self, msg: Any) -> dict[str, Any] | None:
        if not isinstance(msg, Mapping):
            self.log(f"botkit: ignoring a message that is not a JSON object: {msg!r:.200}")
            return None
        kind = msg.get("type")
        if kind == "start":
            return self._start(msg)
        if kind == "request":
            return self._request(msg)
        if kind == "event":
            event = msg.get("event")
            try:
                self.history.add(event)  # type: ignore[arg-type]  # checked by add, caught below
            except Exception:  # a notice botkit cannot read must not stop the bot
                self.log(f"botkit: cannot read the event {event!r:.200}:\n{_traceback()}")
            self._hook("on_event", event)
        elif kind == "error":
            self.errors.append(dict(msg))
            if self.print_errors:
                self.log(
                    f"arena: request {msg.get('id')} refused ({msg.get('fault')}): {msg.get('reason')}; "
                    f"played instead: {self._encode(msg.get('fallback'))}"
                )
            self._hook("on_error", dict(msg))
        elif kind == "end":
            self._hook("on_end", dict(msg))
        elif kind == "quit":
            self.done = True
        # Unknown message types are ignored: later protocol versions may add some.
        return None

    def _start(self, msg: Mapping[str, Any]) -> dict[str, Any]:
        if msg.get("protocol") != PROTOCOL_VERSION:
            self.log(f"botkit: protocol {msg.get('protocol')!r} announced, this botkit speaks {PROTOCOL_VERSION}")
        self.history.clear()
        try:
            self.info = MatchInfo.from_message(msg)
            self.rules = self.info.rules
        except Exception:
            self.log(f"botkit: cannot read the start message, using the default rules:\n{_traceback()}")
            self.info, self.rules = None, Ruleset()
        self.matches += 1
        if self.make_player is not None and self.info is not None:
            self.player = self.make_player(self.info)
        self._hook("on_start", self.info)
        return {"type": "ready", "name": self.name, "protocol": PROTOCOL_VERSION}

    def _request(self, msg: Mapping[str, Any]) -> dict[str, Any]:
        req_id = msg.get("id")
        kind = msg.get("kind")
        view: View | None = None
        try:
            history = self.history
            kind, _options, view = parse_request(msg, self.rules, history=history.history(),
                                                 hand_scores=tuple(history.hand_scores))
            method = getattr(self.player, kind)
            return _reply_for(req_id, method(view))
        except Exception:
            self.log(f"botkit: the {kind} decision failed, sending a safe move:\n{_traceback()}")
            return _safe_reply(req_id, kind, msg, view)

    # -- the loop ------------------------------------------------------------------
    def run(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
        """Read messages until ``quit`` or the end of input; returns 0."""
        inp = stdin if stdin is not None else sys.stdin
        out = stdout if stdout is not None else sys.stdout
        while not self.done:
            line = inp.readline()
            if not line:
                break  # EOF: the arena closed our input
            if not line.strip():
                continue
            self.lines_read += 1
            if self.lines_read == self.faster_after:
                self._decode, self._encode = _msgspec_codec() or (self._decode, self._encode)
            try:
                msg = self._decode(line)
            except ValueError as err:   # msgspec's DecodeError and json's JSONDecodeError are ValueErrors
                self.log(f"botkit: ignoring a line that is not JSON ({err}): {line[:200]!r}")
                continue
            reply = self.handle(msg)
            if reply is not None:
                out.write(self._encode(reply) + "\n")
                out.flush()  # the arena waits for this line: never leave it in a buffer
        return 0


# -- reading and writing lines ----------------------------------------------------
#
# The standard json module loads in about 1 ms.  msgspec reads and writes a
# line about 2.6 us faster, but loading it costs about 10 ms of CPU (it brings
# inspect, typing, datetime, decimal, uuid...): a third of a bot's start,
# paid again by every bot process a tournament, ``arena check`` or ``arena
# play`` starts.  So a session reads and writes with json, and switches to
# msgspec (where it is installed) at ``BotSession.faster_after`` lines, about
# three matches: by then json has cost what msgspec's import costs, so
# whatever the bot's life, it pays at most twice the better choice (the
# rent-or-buy rule).  A bot that plays one match never loads msgspec; one
# that plays a hundred pays for it once.  Both write the same reply bytes,
# so the switch changes no reply.


def _like_msgspec(obj: Any) -> Any:
    """What both codecs write for the values json does not know, so that a
    reply reads the same either way: a set as a list, a dataclass as its
    fields (as msgspec writes them), a Card as its text (where a reply wants
    a card), any other engine value as its fields (msgspec's ``enc_hook``)."""
    if isinstance(obj, Card):
        return obj.text
    if isinstance(obj, (set, frozenset)):
        return list(obj)
    fields = getattr(type(obj), "__dataclass_fields__", None)
    if fields is not None:
        return {name: getattr(obj, name) for name in fields}
    fields = getattr(type(obj), "__record_fields__", None)
    if fields is not None:
        return {f.name: getattr(obj, f.name) for f in fields}
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


def _json_codec() -> Codec:
    encoder = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=_like_msgspec)
    return json.loads, encoder.encode


def _msgspec_codec() -> Codec | None:
    try:
        # lazy: optional (a bot falls back to json), and ~10 ms a short match never repays (faster_after)
        import msgspec
    except Exception:  # noqa: BLE001 - not installed, or broken: the bot goes on with json, mid-match
        return None
    encode = msgspec.json.Encoder(enc_hook=_like_msgspec).encode

    def encode_text(obj: Any) -> str:
        return encode(obj).decode()

    return msgspec.json.decode, encode_text


def _traceback() -> str:
    # Imported here: a bot that never fails starts without the module (3-5 ms
    # of every bot's start-up, and tournaments start bots often).
    import traceback
    return traceback.format_exc()


def run(player: Any = None, **kwargs: Any) -> int:
    """Play over stdin/stdout until ``quit``; see ``BotSession`` for the arguments."""
    stdin = kwargs.pop("stdin", None)
    stdout = kwargs.pop("stdout", None)
    return BotSession(player, **kwargs).run(stdin, stdout)
