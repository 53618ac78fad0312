"""Test bot: answers {"id": id} after sleeping msg["delay"] (default argv[1]) seconds."""
import json
import sys
import time

default = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") == "quit":
        break
    time.sleep(msg.get("delay", default))
    sys.stdout.write(json.dumps({"id": msg.get("id")}) + "\n")
    sys.stdout.flush()
