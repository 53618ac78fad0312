"""A match record turned into the replay viewer's data: one step per event.

The record (``Game.to_record`` plus the runner's ``trace`` and ``faults``) is
played again with the engine, action by action, so every step carries the
table as it was after that event: each seat's cards, the melds, the pile and
the stock, the scores.  Events of one action after which the engine was not
asked (a go-down before its discard, the hand end before the next deal) get
their table from the previous one, changed by the event itself.

Each decision keeps the request line exactly as the encoder wrote it for that
seat (same encoder, same request id, same protocol), the notices that came
before it, the reply (the action the record holds), the time taken, its fault
if any, and the stderr the bot wrote while deciding (the byte range between
two trace offsets of its log).  Only JSON-ready values come out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..process.errors import escaped_lines
from ..protocol.encoder import NOT_NOTICED, MatchEncoder
from ..shanghai.actions import action_from_json
from ..shanghai.cards import Card, card, parse_card, sort_key
from ..shanghai.chance import RecordedChance
from ..shanghai.errors import ShanghaiError
from ..shanghai.game import Game
from ..shanghai.ruleset import Ruleset
from ..shanghai.view import TableMeld

__all__ = ["ReplayError", "build_replay", "decision_stderr", "STDERR_PER_DECISION"]

# A decision's stderr shown in the viewer, at most (a flood stays in the log file).
STDERR_PER_DECISION = 4000
# Bytes of a stderr log read at most (the log itself is bounded by stderr_max_bytes).
STDERR_READ = 8 * 1024 * 1024
# Keys left out of the events shown: whole shuffled orders and the seed say nothing to a reader.
HIDDEN_KEYS = frozenset({"shoe", "order", "seed"})


class ReplayError(Exception):
    """A record that cannot be replayed (damaged, or of another arena version); one line."""


@dataclass
class _Seat:
    protocol: int | None        # None: a built-in player (shown its view in protocol 2 form)
    decisions: dict[int, list[Any]]    # decision index -> [index, request id, ms, stderr offset]
    stderr_end: int | None
    log: bytes | None


def _seats(record: Mapping[str, Any], players: int, stderr_logs: Sequence[str | None]) -> list[_Seat]:
    trace = record.get("trace")
    out = []
    for s in range(players):
        t = trace[s] if isinstance(trace, list) and s < len(trace) and isinstance(trace[s], dict) else {}
        decisions = {int(d[0]): list(d) for d in t.get("decisions", []) if isinstance(d, list) and len(d) >= 4}
        path = stderr_logs[s] if s < len(stderr_logs) else None
        out.append(_Seat(t.get("protocol"), decisions, t.get("stderr_end"), _read_log(path)))
    return out


def _read_log(path: str | None) -> bytes | None:
    if not path:
        return None
    try:
        with open(path, "rb") as f:
            return f.read(STDERR_READ)
    except OSError:
        return None         # moved or deleted: the replay shows no stderr rather than failing


def _stderr_text(seat: _Seat, index: int | None) -> str | None:
    """What the bot wrote between the start of decision ``index`` and its next
    one (``index`` None: before its first decision, as it started: a syntax
    error's traceback), escaped line by line (it goes to terminals as well as
    to pages)."""
    if seat.log is None:
        return None
    if index is None:
        start = 0
    else:
        entry = seat.decisions.get(index)
        if entry is None or entry[3] is None:
            return None
        start = entry[3]
    later = [d[3] for i, d in seat.decisions.items() if (index is None or i > index) and d[3] is not None]
    end = min(later) if later else seat.stderr_end if seat.stderr_end is not None else len(seat.log)
    chunk = seat.log[start:end]
    text = escaped_lines(chunk[:STDERR_PER_DECISION].decode("utf-8", errors="replace"))
    if len(chunk) > STDERR_PER_DECISION:
        text += f"\n[... {len(chunk) - STDERR_PER_DECISION} more bytes in the log]"
    return text


def decision_stderr(record: Mapping[str, Any], seat: int, decision: int, log: str | None) -> str | None:
    """What the bot of ``seat`` wrote on stderr while deciding ``decision``
    (None: no trace, no log, or nothing written)."""
    players = len(record.get("trace") or [])
    if not 0 <= seat < players:
        return None
    logs: list[str | None] = [None] * players
    logs[seat] = log
    return _stderr_text(_seats(record, players, logs)[seat], decision) or None


def _hidden(shown: dict[str, Any]) -> dict[str, Any]:
    if HIDDEN_KEYS.isdisjoint(shown):       # most events: the dict made for them, as it is
        return shown
    return {k: v for k, v in shown.items() if k not in HIDDEN_KEYS}


class _Tables:
    """Snapshots of one game's table, in order.  Most actions change one
    seat's cards and no meld, so the cards of a seat and the melds are made
    into text only when they change; a snapshot shares the unchanged ones
    (the same list objects) with the one before it, which also makes
    ``_delta``'s comparisons cheap.  Nothing here or downstream mutates them."""

    def __init__(self) -> None:
        self._hands: dict[int, tuple[tuple[Card, ...], list[str]]] = {}
        self._melds: tuple[tuple[TableMeld, ...], list[dict[str, Any]]] = ((), [])
        self._all: list[list[str]] = []

    def snapshot(self, game: Game) -> dict[str, Any]:
        hands = []
        changed = len(game.hands) != len(self._all)
        for s, h in enumerate(game.hands):
            cards = tuple(h)
            known = self._hands.get(s)
            if known is None or known[0] != cards:
                known = self._hands[s] = (cards, [c.text for c in sorted(cards, key=sort_key)])
                changed = True
            hands.append(known[1])
        if changed:
            self._all = hands
        hands = self._all
        melds = tuple(game.melds)
        if self._melds[0] != melds:
            self._melds = (melds, [m.to_json() for m in melds])
        return _table(game, hands, self._melds[1])


def _snapshot(game: Game) -> dict[str, Any]:
    """The table now, made afresh (``_Tables`` makes the same, sharing)."""
    return _table(game, [[c.text for c in sorted(h, key=sort_key)] for h in game.hands],
                  [m.to_json() for m in game.melds])


def _table(game: Game, hands: list[list[str]], melds: list[dict[str, Any]]) -> dict[str, Any]:
    pile = game.pile
    limit = game.rules.buy_limit(game.hand_no - 1) if game.hand_no else 0
    return {
        "hands": hands,
        "melds": melds,
        "pile_top": pile[-1].text if pile else None,
        "pile_size": len(pile),
        "stock": len(game.stock),
        "down": list(game.down),
        "buys_left": [limit - b for b in game.buys],
        "totals": list(game.totals),
        "dealer": game.dealer,
    }


def _sorted_texts(texts: list[str]) -> list[str]:
    return sorted(texts, key=lambda t: sort_key(parse_card(t)))


def _without(cards: list[str], taken: Sequence[str]) -> list[str]:
    rest = list(cards)
    for t in taken:
        if t in rest:
            rest.remove(t)
    return rest


def _grown(meld: Mapping[str, Any], e: Mapping[str, Any]) -> list[str] | None:
    """What each place of ``meld`` stands for after the lay-off ``e``: a set
    keeps its rank whatever is laid off (a wild card too), a run gains the
    next card of its suit at the end ``e`` names.  The engine's ``Meld``
    says the same after the action (``TableMeld.to_json``)."""
    was = meld.get("stands_for")
    if not was:
        return None
    if meld["kind"] == "set":
        return [was[0]] * len(e["result"])
    if e["end"] == "low":
        first = parse_card(was[0])          # never the ace: nothing goes below it
        return [card(first.rank - 1, first.suit).text, *was]
    last = parse_card(was[-1])              # never the ace: nothing goes above it
    return [*was, card(1 if last.rank == 13 else last.rank + 1, last.suit).text]


def patch(state: dict[str, Any], e: dict[str, Any]) -> dict[str, Any]:
    """The table after event ``e`` (full JSON form), from the table before it:
    for the events inside one action, after which the engine was not asked."""
    s = {k: (list(v) if isinstance(v, list) else v) for k, v in state.items()}
    seat: int = e.get("seat", -1)       # every event patched here has one
    kind = e["type"]
    hands = s["hands"] = [list(h) for h in state["hands"]]
    melds = s["melds"] = [dict(m) for m in state["melds"]]
    if kind == "go_down":
        hands[seat] = _without(hands[seat], [c for m in e["melds"] for c in m["cards"]])
        melds.extend(dict(m) for m in e["melds"])
        s["down"][seat] = True
    elif kind == "lay_off":
        hands[seat] = _without(hands[seat], [e["card"]])
        for m in melds:
            if m["id"] == e["meld"]:
                m["cards"], m["stands_for"] = list(e["result"]), _grown(m, e)
    elif kind == "swap":
        hands[seat] = _sorted_texts(_without(hands[seat], [e["card"]]) + [e["took"]])
        for m in melds:
            if m["id"] == e["meld"] and e["took"] in m["cards"]:
                cards = list(m["cards"])
                cards[cards.index(e["took"])] = e["card"]
                m["cards"] = cards
    elif kind == "discard":
        hands[seat] = _without(hands[seat], [e["card"]])
        s["pile_top"], s["pile_size"] = e["card"], state["pile_size"] + 1
    elif kind == "draw" and "card" in e:
        hands[seat] = _sorted_texts(hands[seat] + [e["card"]])
    elif kind == "hand_end":
        s["totals"] = list(e["totals"])
    elif kind == "reshuffle":
        s["stock"] = e["cards"]
    return s


def _delta(prev: dict[str, Any] | None, state: dict[str, Any]) -> dict[str, Any]:
    """The keys that changed: the viewer carries the rest forward."""
    if prev is None:
        return dict(state)
    out: dict[str, Any] = {}
    for k, v in state.items():
        was: Any = prev.get(k)
        if v is was:        # shared by _Tables: unchanged
            continue
        if k == "hands":
            changed = {str(i): h for i, (h, p) in enumerate(zip(v, was)) if h is not p and h != p}
            if changed:
                out["hands"] = changed
        elif was != v:
            out[k] = v
    return out


def _game(record: Mapping[str, Any]) -> Game:
    events = record["events"]
    start = events[0]
    if start.get("type") != "match_start":
        raise ReplayError("the record does not start with a match_start event")
    rules = Ruleset.from_mapping(start["rules"])
    shoes = [e["shoe"] for e in events if e["type"] == "deal"]
    orders = [e["order"] for e in events if e["type"] == "reshuffle"]
    return Game(rules, start["players"], RecordedChance(shoes, orders), seed=start.get("seed"))


def build_replay(record: Mapping[str, Any], names: Sequence[str], *, title: str,
                 stderr_logs: Sequence[str | None] = (), faults: Sequence[Mapping[str, Any]] | None = None,
                 places: Sequence[int] | None = None, back_link: str | None = None) -> dict[str, Any]:
    """The viewer's data for one match.  ``faults`` default to the record's
    own (with the offending reply); a stored match's rows have no reply."""
    try:
        return _build(record, names, title, stderr_logs, faults, places, back_link)
    except ReplayError:
        raise
    except (KeyError, IndexError, TypeError, ValueError, ShanghaiError) as exc:
        raise ReplayError(f"the record cannot be replayed ({type(exc).__name__}: {exc})") from None


class _Steps:
    """The replay's steps, event by event: each event as shown, the table's
    state as a delta from the step before, and the event's public form where
    it hides something."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.steps: list[dict[str, Any]] = []
        self._prev: dict[str, Any] | None = None
        self._tables = _Tables()

    def add(self, first: int, action: int | None) -> None:
        """The events of the game's log from ``first`` on, made by ``action`` (None: the deal)."""
        new = self.game.log[first:]
        prev = state = self._prev
        for j, e in enumerate(new):
            full = e.to_json()      # made once: shown, and what patch reads
            shown = _hidden(full)
            last = j == len(new) - 1
            state = self._tables.snapshot(self.game) if last or state is None else patch(state, full)
            step: dict[str, Any] = {"e": shown, "a": action, "s": _delta(prev, state)}
            if e.secret:            # an event with no secret is its own public form
                public = _hidden(e.public_json())
                if public != shown:
                    step["p"] = public
            if e.kind in NOT_NOTICED:
                step["nn"] = True          # never sent to the bots as a notice
            self.steps.append(step)
            prev = state
        self._prev = prev


def _build(record: Mapping[str, Any], names: Sequence[str], title: str, stderr_logs: Sequence[str | None],
           faults: Sequence[Mapping[str, Any]] | None, places: Sequence[int] | None,
           back_link: str | None) -> dict[str, Any]:
    game = _game(record)
    n = game.n
    names = [names[i] if i < len(names) else f"seat {i}" for i in range(n)]
    seats = _seats(record, n, stderr_logs)
    steps = _Steps(game)
    steps.add(0, None)
    decisions = _replay_decisions(record, game, seats, steps)
    return {
        "title": title,
        "names": names,
        "players": n,
        "contracts": [c.describe() for c in game.rules.contracts],
        "steps": steps.steps,
        "decisions": decisions,
        "faults": _faults(record, faults, decisions, steps.steps, seats),
        "places": list(places) if places is not None else list(game.places()) if game.over else None,
        "off_turn": [_off_turn(record, s) for s in range(n)],
        "back": back_link,
    }


def _replay_decisions(record: Mapping[str, Any], game: Game, seats: Sequence[_Seat],
                      steps: _Steps) -> list[dict[str, Any]]:
    """Apply the record's actions to ``game``, adding their events to
    ``steps``: each decision as the viewer shows it (its request re-made as
    the bot got it, its reply, time and stderr)."""
    encoder = MatchEncoder(game)
    notified = [0] * game.n
    decisions: list[dict[str, Any]] = []
    for k, entry in enumerate(record["actions"]):
        d = game.decision()
        seat = entry["seat"]
        if d is None or d.seat != seat:
            raise ReplayError(f"action {k} is by seat {seat}, but the game asks "
                              f"{'nobody' if d is None else f'seat {d.seat}'}")
        info = seats[seat]
        traced = info.decisions.get(k)
        asked = traced is not None or not info.decisions
        notices_from = notified[seat]
        line = None
        req_id = None
        if asked:
            protocol = info.protocol or 2
            req_id = traced[1] if traced is not None and traced[1] is not None else k + 1
            line = encoder.request(req_id, d, protocol).decode("utf-8")
            notified[seat] = len(game.log)
        before = len(game.log)
        game.apply(action_from_json(entry["action"]), seat=seat)
        decisions.append({
            "k": k, "id": req_id, "seat": seat, "kind": d.kind, "step": before - 1, "reply": entry["action"],
            "asked": asked, "builtin": info.protocol is None,
            "request": line, "notices": [notices_from, before] if asked else None,
            "ms": traced[2] if traced is not None else None,
            "stderr": _stderr_text(info, k),
        })
        steps.add(before, k)
    return decisions


def _off_turn(record: Mapping[str, Any], seat: int) -> float | None:
    """CPU seconds the seat's bot used between its turns, if it was caught at it."""
    trace = record.get("trace")
    t = trace[seat] if isinstance(trace, list) and seat < len(trace) and isinstance(trace[seat], dict) else {}
    cpu = t.get("off_turn_cpu")
    return float(cpu) if isinstance(cpu, (int, float)) and not isinstance(cpu, bool) else None


def _faults(record: Mapping[str, Any], given: Sequence[Mapping[str, Any]] | None,
            decisions: list[dict[str, Any]], steps: list[dict[str, Any]], seats: list[_Seat]) -> list[dict[str, Any]]:
    """Each fault with the step where it shows: the first event of the fallback
    the arena played (handshake faults: the first step)."""
    raw = given if given is not None else record.get("faults") or []
    first_step: dict[int, int] = {}
    for i, st in enumerate(steps):
        if st["a"] is not None:
            first_step.setdefault(st["a"], i)
    out = []
    for f in raw:
        k = f.get("decision")
        step = 0
        if isinstance(k, int) and 0 <= k < len(decisions):
            step = first_step.get(k, decisions[k]["step"] + 1)
            step = min(step, len(steps) - 1)
        seat = f.get("seat")
        stderr = _stderr_text(seats[seat], k if isinstance(k, int) else None) \
            if isinstance(seat, int) and 0 <= seat < len(seats) else None
        rid = f.get("request_id")
        if rid is None and isinstance(k, int) and 0 <= k < len(decisions) and decisions[k]["seat"] == seat:
            rid = decisions[k]["id"]        # a record of an older arena: the id it was sent
        out.append({"seat": seat, "kind": f.get("kind"), "hand": f.get("hand"), "decision": k, "request_id": rid,
                    "decision_kind": f.get("decision_kind"), "detail": f.get("detail"),
                    "reply": f.get("excerpt"), "forfeit": bool(f.get("forfeit")), "strike": f.get("strike"),
                    "step": step, "stderr": stderr})
    return out
