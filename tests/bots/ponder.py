"""Test bot: answers each line at once with {"id": ..., "spun": N}, and
computes between its turns: in a thread (``--thread``), in a ``setsid()``
child process (``--setsid``), or not at all (no option: it only reads and
answers).  N is how far the computing has counted so far (shared memory
with the child).  With ``--busy-after-end`` it also computes 0.3 s of CPU on
each message whose "type" is "end" (what a bot may do after a match), and
answers nothing to it."""
import json
import mmap
import os
import struct
import sys
import threading
import time

counter = mmap.mmap(-1, 8)          # shared with a forked child
parent = os.getpid()


def spin() -> None:
    n = 0
    while True:
        n += 1
        if n % 1000 == 0:
            counter[:8] = struct.pack("q", n)
            if os.getppid() != parent and os.getpid() != parent:
                os._exit(0)         # a child whose bot is gone: never left behind


if "--thread" in sys.argv:
    threading.Thread(target=spin, daemon=True).start()
elif "--setsid" in sys.argv and os.fork() == 0:
    os.setsid()
    spin()

for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") == "quit":
        break
    if msg.get("type") == "end":
        if "--busy-after-end" in sys.argv:
            start = time.process_time()
            while time.process_time() - start < 0.3:
                pass
        continue
    spun = struct.unpack("q", counter[:8])[0]
    sys.stdout.write(json.dumps({"id": msg.get("id"), "spun": spun}) + "\n")
    sys.stdout.flush()
