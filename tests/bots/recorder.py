"""Test bot: writes every line it gets to stderr, unchanged (its log is then
everything the arena told it), and plays the simplest legal moves: the
stock, no buy, the first card of the options; except that its third request
of each match gets a malformed reply, so that it is sent an 'error' notice
too.  Its 'ready' name is its first argument (default "recorder")."""
import json
import sys

NAME = sys.argv[1] if len(sys.argv) > 1 else "recorder"
asked = 0

for line in sys.stdin:
    sys.stderr.write(line)
    sys.stderr.flush()
    msg = json.loads(line)
    kind = msg.get("type")
    if kind == "quit":
        break
    if kind == "start":
        asked = 0
        reply = {"type": "ready", "name": NAME, "protocol": 2}
    elif kind == "request":
        asked += 1
        choice = {"draw": {"draw": "stock"}, "buy": {"buy": False}}.get(msg["kind"])
        reply = {"id": msg["id"], **(choice or {"discard": msg["options"][0]})}
        if asked == 3:
            reply = {"id": msg["id"], "nonsense": True}
    else:
        continue
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
