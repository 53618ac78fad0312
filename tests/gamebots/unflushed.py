"""The minimal bot, but it never flushes stdout: to a pipe, Python buffers its
lines, so the arena sees nothing unless PYTHONUNBUFFERED is set."""
import json
import sys

import common

for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") == "start":
        print(json.dumps(common.ready(msg)))
    elif msg.get("type") == "request":
        print(json.dumps(common.minimal_reply(msg)))
    elif msg.get("type") == "quit":
        break
