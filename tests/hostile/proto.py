"""The minimal protocol loop of the hostile test bots (not a bot itself):
draw from the stock, never buy, discard the first option."""
import json
import re
import sys

START = {}          # the current match's start message


def deal_group(match):
    """The duplicate group of a tournament match name (tTTT-rR-dD -> tTTT-dD)."""
    m = re.fullmatch(r"t(\d+)-r(\d+)-d(\d+)", match)
    return f"t{m.group(1)}-d{m.group(3)}" if m else match


def reply(msg):
    kind = msg["kind"]
    if kind == "draw":
        return {"id": msg["id"], "draw": "stock"}
    if kind == "buy":
        return {"id": msg["id"], "buy": False}
    return {"id": msg["id"], "discard": msg["options"][0]}


def serve(on_start=None, on_request=None, on_quit=None, name="hostile"):
    """Play until quit or EOF; the hooks run before the answer is sent."""
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg.get("type")
        out = None
        if kind == "start":
            START.clear()
            START.update(msg)
            if on_start is not None:
                on_start(msg)
            out = {"type": "ready", "name": name}
        elif kind == "request":
            if on_request is not None:
                on_request(msg)
            out = reply(msg)
        elif kind == "quit":
            if on_quit is None or on_quit():
                return
        if out is not None:
            sys.stdout.write(json.dumps(out) + "\n")
            sys.stdout.flush()
