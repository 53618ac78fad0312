"""Test bot: writes argv[1] (a line, "\\n" added) to stdout without end and
never reads; with argv[2] ``after-first``, answers the first request (like
echo) first."""
import json
import os
import sys

if sys.argv[2:] == ["after-first"]:
    msg = json.loads(sys.stdin.readline())
    os.write(1, json.dumps({"id": msg["id"]}).encode() + b"\n")
line = sys.argv[1].encode() + b"\n"
data = line * max(1, 65536 // len(line))
while True:
    os.write(1, data)
