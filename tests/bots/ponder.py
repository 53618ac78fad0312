"""Test bot: answers each line at once with {"id": ..., "spun": N}, and
computes between its turns: in a thread (``--thread``), in a ``setsid()``
child process (``--setsid``), or not at all (no option: it only reads and
answers).  N is how far the computing has counted so far (shared memory
with the child).  With ``--busy-after-end`` it also computes 0.3 s of CPU on
each message whose "type" is "end" (what a bot may do after a match), and
answers nothing to it.  With ``--spin-after-end`` it computes after each
"end" until its next line comes (a process kept idle for a later match,
taking the CPU of the matches played meanwhile).  ``--duty PCT`` computes
in a thread PCT % of the time (2 ms at a time): a little, all the time.
``--work MS`` computes MS ms of CPU on each request before it answers (a
bot that thinks on its turns, as a real one does)."""
import json
import mmap
import os
import select
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


def duty(percent: float) -> None:
    busy = 0.002                    # of this thread's CPU: the share holds on a busy machine too
    while True:
        start = time.thread_time()
        while time.thread_time() - start < busy:
            pass
        time.sleep(busy * (100 - percent) / percent)


def spin_until_input() -> None:
    n = 0
    while not select.select([sys.stdin], [], [], 0)[0]:
        n += 1


if "--thread" in sys.argv:
    threading.Thread(target=spin, daemon=True).start()
elif "--duty" in sys.argv:
    share = float(sys.argv[sys.argv.index("--duty") + 1])
    threading.Thread(target=duty, args=(share,), daemon=True).start()
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
        if "--spin-after-end" in sys.argv:
            spin_until_input()
        continue
    if "--work" in sys.argv:
        start = time.thread_time()
        while time.thread_time() - start < float(sys.argv[sys.argv.index("--work") + 1]) / 1000:
            pass
    spun = struct.unpack("q", counter[:8])[0]
    sys.stdout.write(json.dumps({"id": msg.get("id"), "spun": spun}) + "\n")
    sys.stdout.flush()
