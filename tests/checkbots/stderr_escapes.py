"""Writes terminal control characters on stderr (an escape sequence that
clears the screen, a right-to-left override, a carriage return) and answers
every request with a line that is not JSON: each step fails, and its
evidence quotes the end of this stderr."""
import json
import os
import sys

for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") == "start":
        os.write(1, b'{"type": "ready", "name": "stderr-escapes", "protocol": 2}\n')
    elif msg.get("type") == "request":
        os.write(2, "oops \x1b[2J\u202e\r done\n".encode())
        os.write(1, b"not json\n")
    elif msg.get("type") == "quit":
        break
