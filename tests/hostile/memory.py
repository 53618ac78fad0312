"""Hostile test bot: remembers the cards of one match for the next.

Tournament workers keep bot processes alive between matches (``BotPool``),
and with duplicate deals every rotation of a table is dealt the same cards,
rotated by one seat.  The match name (``tTTT-rR-dD``) even says which deal it
is.  So a bot that remembers its first hand of rotation 0 knows, in rotation
1, the whole hand of the opponent now sitting in its old seat.

At the first request of hand 1 of each match, it writes one line on stderr:
``MEMORY {"match": ..., "seat": ..., "cards": [...], "claims": {seat: cards}}``
where ``claims`` are the hands it believes other seats hold, from memory."""
import json
import sys

import proto

start = proto.START
seen = {}          # (table, deal) -> {seat: first-hand cards}
reported = set()


def on_request(msg):
    match = start.get("match", "")
    view = msg.get("view", {})
    if match in reported or view.get("hand") != 1:
        return
    reported.add(match)
    cards = sorted(view.get("cards", []))
    seat = start.get("seat")
    group = proto.deal_group(match)
    claims = {}
    if group != match:
        memory = seen.setdefault(group, {})
        claims = {str(s): c for s, c in memory.items() if s != seat}
        memory[seat] = cards
    sys.stderr.write("MEMORY " + json.dumps({"match": match, "seat": seat, "cards": cards,
                                             "claims": claims}) + "\n")
    sys.stderr.flush()


proto.serve(on_request=on_request, name="memory")
