"""Test bot: answers each line with {"id": <same id>, "echo": <the message>}; stops on quit."""
import json
import sys

for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") == "quit":
        break
    sys.stdout.write(json.dumps({"id": msg.get("id"), "echo": msg}) + "\n")
    sys.stdout.flush()
