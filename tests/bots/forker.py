"""Test bot: forks a child that sleeps forever (holding stdout/stderr), then echoes
{"id", "child": pid}.  --exit-after-first: the parent exits after one answer."""
import json
import os
import sys
import time

child = os.fork()
if child == 0:
    while True:
        time.sleep(3600)
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") == "quit":
        break
    sys.stdout.write(json.dumps({"id": msg.get("id"), "child": child}) + "\n")
    sys.stdout.flush()
    if "--exit-after-first" in sys.argv:
        sys.exit(0)
