"""Test bot: answers argv[1] (default 1) requests, then exits with code 3."""
import json
import sys

answers = int(sys.argv[1]) if len(sys.argv) > 1 else 1
for line in sys.stdin:
    if answers == 0:
        sys.stderr.write("exit_midway: giving up now\n")
        sys.exit(3)
    answers -= 1
    sys.stdout.write(json.dumps({"id": json.loads(line).get("id")}) + "\n")
    sys.stdout.flush()
