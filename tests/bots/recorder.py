"""Test bot: writes every line it gets to stderr, unchanged (its log is then
everything the arena told it), and plays the simplest legal moves: the
stock, no buy, the first card of the options.  Its 'ready' name is its
first argument (default "recorder")."""
import json
import sys

NAME = sys.argv[1] if len(sys.argv) > 1 else "recorder"

for line in sys.stdin:
    sys.stderr.write(line)
    sys.stderr.flush()
    msg = json.loads(line)
    kind = msg.get("type")
    if kind == "quit":
        break
    if kind == "start":
        reply = {"type": "ready", "name": NAME, "protocol": 2}
    elif kind == "request":
        choice = {"draw": {"draw": "stock"}, "buy": {"buy": False}}.get(msg["kind"])
        reply = {"id": msg["id"], **(choice or {"discard": msg["options"][0]})}
    else:
        continue
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
