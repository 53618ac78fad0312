"""Test bot: a covert channel through the machine's memory counters, which
every sandbox reads alike (/proc/meminfo is not per namespace).

Each line is a JSON object with an "id" and "do":
  "send", "mb": N  leave N MiB in a file in its (private, bounded) /dev/shm,
                   removing what an earlier send left; the machine's
                   "Shmem:" count goes up by as much, for every process to see
  "read"           answer {"shmem_kb": ...}, the machine's Shmem count now
Nothing is shared between the two bots: the file is in the sender's own
/dev/shm, which no other sandbox sees; only the count is global."""
import json
import os
import sys

PATH = "/dev/shm/channel"


def send(mb: int) -> None:
    if os.path.exists(PATH):
        os.remove(PATH)
    if mb:
        with open(PATH, "wb") as f:
            f.write(b"\x01" * (mb << 20))      # written, not sparse: the pages are held


def shmem_kb() -> int:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("Shmem:"):
                return int(line.split()[1])
    return -1


for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") == "quit":
        break
    out = {"id": msg.get("id")}
    if msg.get("do") == "send":
        send(int(msg["mb"]))
    elif msg.get("do") == "read":
        out["shmem_kb"] = shmem_kb()
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
