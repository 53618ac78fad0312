"""Test bot: holds memory in files rather than in its processes.  On each
request it writes up to MB MiB (argument, default 64) into a file in each of
its private file systems in memory (/tmp, /dev/shm, /run, /var/tmp and
$ARENA_SCRATCH: tmpfs, each bounded, none in any process's resident set),
waits HOLD seconds (second argument, default 2: a few watchdog scans) and
answers {"id": ..., "held": {path: MiB written}}."""
import json
import os
import sys
import time

MB = int(sys.argv[1]) if len(sys.argv) > 1 else 64
HOLD = float(sys.argv[2]) if len(sys.argv) > 2 else 2.0
PLACES = ["/tmp", "/dev/shm", "/run", "/var/tmp"] + (
    [os.environ["ARENA_SCRATCH"]] if "ARENA_SCRATCH" in os.environ else [])


def fill(folder: str) -> int:
    written = 0
    try:
        with open(os.path.join(folder, "hoard"), "wb") as f:
            for _ in range(MB):
                f.write(b"\x01" * (1 << 20))
                f.flush()
                written += 1
    except OSError:          # full: each is bounded
        pass
    return written


for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") == "quit":
        break
    held = {folder: fill(folder) for folder in PLACES}
    time.sleep(HOLD)
    sys.stdout.write(json.dumps({"id": msg.get("id"), "held": held}) + "\n")
    sys.stdout.flush()
