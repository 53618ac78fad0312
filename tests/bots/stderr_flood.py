"""Test bot: writes 50 MB to stderr before each answer."""
import json
import sys

chunk = b"e" * 1023 + b"\n"
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") == "quit":
        break
    for _ in range(50 * 1024):
        sys.stderr.buffer.write(chunk)
    sys.stderr.flush()
    sys.stdout.write(json.dumps({"id": msg.get("id")}) + "\n")
    sys.stdout.flush()
