#!/usr/bin/env python3
"""Starter bot for the Shanghai Rummy arena, in plain Python (no arena imports).

The arena starts this program and talks to it with one JSON object per line:
it writes messages to our stdin, we answer on stdout (and flush!).  Anything
we print on stderr goes to a log file, so debug output belongs there.
The full protocol is docs/PROTOCOL.md.

What this bot does:
  draw : takes the upcard if it makes a pair with a card in hand, else the stock
  buy  : never
  play : goes down when the contract is only sets and the hand holds them with
         natural cards; once down, lays off cards on sets of the same rank;
         discards its costliest card that is not wild and not part of a pair.

Run:  arena play "python3 examples/python/bot.py" greedy random
"""
import json
import re
import sys

RANKS = {"A": 1, "J": 11, "Q": 12, "K": 13}
WILD_DEUCES = True  # replaced by the match's rule when "start" arrives


def rank(card):
    """'7H' -> 7, '10S' -> 10, 'QC' -> 12, 'AD' -> 1, 'JK' (joker) -> 0."""
    if card == "JK":
        return 0
    text = card[:-1]
    return RANKS[text] if text in RANKS else int(text)


def is_wild(card):
    return card == "JK" or (WILD_DEUCES and rank(card) == 2)


def penalty(card):
    """Points a card costs if it is still in hand when the hand ends."""
    r = rank(card)
    return 25 if r == 0 else 20 if r == 2 else 15 if r == 1 else 10 if r >= 10 else 5


def set_lengths(contract):
    """'2S3' -> [3, 3]; None if the contract has a run (this bot only does sets)."""
    lengths = []
    for term in contract.split("+"):
        count, kind, length = re.fullmatch(r"(\d*)([SR])(\d+)", term).groups()
        if kind == "R":
            return None
        lengths += [int(length)] * int(count or 1)
    return sorted(lengths, reverse=True)


def find_sets(cards, contract):
    """Natural sets for the whole contract (different ranks), or None."""
    lengths = set_lengths(contract)
    if lengths is None:
        return None
    by_rank = {}
    for c in cards:
        if not is_wild(c):
            by_rank.setdefault(rank(c), []).append(c)
    groups = sorted(by_rank.values(), key=len, reverse=True)[: len(lengths)]
    if len(groups) < len(lengths) or any(len(g) < n for g, n in zip(groups, lengths)):
        return None
    return groups  # each group is all our cards of one rank: longer sets are fine


def choose_discard(cards):
    """The costliest card that is not wild and not part of a pair."""
    naturals = [c for c in cards if not is_wild(c)] or cards
    single = [c for c in naturals if sum(rank(o) == rank(c) for o in naturals) == 1] or naturals
    return max(single, key=penalty)


def draw(request):
    view = request["view"]
    up = view["upcard"]
    if "upcard" in request["options"] and up and not is_wild(up):
        if any(rank(c) == rank(up) for c in view["cards"] if not is_wild(c)):
            return {"draw": "upcard"}
    return {"draw": "stock"}


def play(request):
    view = request["view"]
    cards = list(view["cards"])
    me = view["seat"]
    if not view["down"][me]:
        sets = find_sets(cards, view["contract"])
        if sets:
            rest = [c for c in cards]
            for group in sets:
                for c in group:
                    rest.remove(c)
            if not rest:  # the sets use every card: we go out, no discard
                return {"go_down": sets, "discard": None}
            if len(rest) >= 2:  # a discard must leave at least one card in hand
                return {"go_down": sets, "discard": choose_discard(rest)}
        return {"discard": choose_discard(cards)}
    # Already down: lay off cards on sets of their rank (ours or anyone's).
    lay_off = []
    for meld in view["melds"]:
        if meld["kind"] != "set":
            continue
        for c in list(cards):
            if not is_wild(c) and c[:-1] == meld["stands_for"][0]:
                lay_off.append({"meld": meld["id"], "card": c})
                cards.remove(c)
    if len(cards) == 1:  # keep two cards so that we can discard one
        cards.append(lay_off.pop()["card"])
    if not cards:
        return {"lay_off": lay_off, "discard": None}  # hand empty: we went out
    return {"lay_off": lay_off, "discard": choose_discard(cards)}


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()  # without this the arena never sees the answer


def main():
    global WILD_DEUCES
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "start":
            WILD_DEUCES = msg["rules"]["wild_deuces"]
            # Protocol 2: requests carry no history (the events come as notices).
            send({"type": "ready", "name": "starter-python", "protocol": 2})
        elif kind == "request":
            try:
                body = {"draw": draw, "buy": lambda r: {"buy": False}, "play": play}[msg["kind"]](msg)
            except Exception as err:  # a bug must not cost a strike: play safe
                print(f"bot error: {err!r}", file=sys.stderr)
                body = {"draw": {"draw": "stock"}, "buy": {"buy": False}}.get(
                    msg["kind"], {"discard": msg["view"]["cards"][0]})
            send({"id": msg["id"], **body})
        elif kind == "error":
            print(f"arena refused request {msg['id']}: {msg['reason']}", file=sys.stderr)
        elif kind == "quit":
            return
        # "event" and "end" need no answer; after "end" another "start" may come.


if __name__ == "__main__":
    main()
