"""The minimal bot, with a child process that computes all the time: between
its turns too, on the CPU its match shares.  A process, not a thread, so
that its turns stay as short as the minimal bot's (no lock to wait for)."""
import os

import common

parent = os.getpid()
if os.fork() == 0:
    n = 0
    while True:
        n += 1
        if n % 100_000 == 0 and os.getppid() != parent:
            os._exit(0)         # its bot is gone: never left behind

common.run()
