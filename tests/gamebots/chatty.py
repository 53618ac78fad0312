"""Plays like minimal, but writes two stderr lines per request naming its id,
and with --illegal-at N makes its Nth play an illegal meld (a fault whose
reply and stderr a report must show)."""
import sys

import common

ILLEGAL_AT = int(sys.argv[sys.argv.index("--illegal-at") + 1]) if "--illegal-at" in sys.argv else None
plays = 0


def reply(msg):
    global plays
    sys.stderr.write(f"thinking about request {msg['id']}\n")
    sys.stderr.write(f"decided request {msg['id']}\n")
    sys.stderr.flush()
    if msg["kind"] == "play":
        plays += 1
        if plays == ILLEGAL_AT:
            cards = msg["view"]["cards"]
            return {"id": msg["id"], "go_down": [cards[:3]], "discard": cards[-1]}
    return common.minimal_reply(msg)


common.run(on_request=reply)
