"""The protocol loop shared by the test game bots (not a bot itself).

The minimal policy: draw from the stock, never buy, discard the first option.
A bot changes one thing by passing ``on_request`` (return the reply object,
or None to send nothing) or ``on_start``.
"""
import json
import sys


def write(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def minimal_reply(msg):
    kind = msg["kind"]
    if kind == "draw":
        return {"id": msg["id"], "draw": "stock"}
    if kind == "buy":
        return {"id": msg["id"], "buy": False}
    return {"id": msg["id"], "discard": msg["options"][0]}


def ready(msg, name="minimal"):
    # Protocol 2, unless started with --protocol-1 (a bot written for protocol 1).
    if "--protocol-1" in sys.argv:
        return {"type": "ready", "name": name}
    return {"type": "ready", "name": name, "protocol": 2}


def run(on_request=minimal_reply, on_start=ready, on_message=None):
    """Serve matches until quit (or until the first end, with --exit-after-end).
    ``on_message`` sees every message first."""
    count = 0
    for line in sys.stdin:
        msg = json.loads(line)
        if on_message is not None:
            on_message(msg)
        kind = msg.get("type")
        if kind == "start":
            out = on_start(msg)
        elif kind == "request":
            count += 1
            msg["count"] = count      # how many requests this process has had
            out = on_request(msg)
        elif kind == "end" and "--exit-after-end" in sys.argv:
            return
        elif kind == "quit":
            return
        else:                         # event and error notices need no answer
            out = None
        if out is not None:
            write(out)
