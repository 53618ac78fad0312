"""Test bot: answers the first request, then kills itself with SIGKILL."""
import json
import os
import signal
import sys

sys.stdout.write(json.dumps({"id": json.loads(sys.stdin.readline()).get("id")}) + "\n")
sys.stdout.flush()
sys.stdin.readline()
os.kill(os.getpid(), signal.SIGKILL)
