"""The minimal bot, with a child process that computes all the time: between
its turns too, on the CPU its match shares.  A process, not a thread, so
that its turns stay as short as the minimal bot's (no lock to wait for).

The child is forked once the arena has written to the bot: unsandboxed, the
arena moves a bot into its cgroup just after its exec, and a child forked
before that, on a busy machine, was left outside, its CPU uncounted (the
tests that catch it then failed at 6 busy loops)."""
import os
import select
import sys

import common

parent = os.getpid()
select.select([sys.stdin], [], [])        # 'start' is there to read (not read here)
if os.fork() == 0:
    n = 0
    while True:
        n += 1
        if n % 100_000 == 0 and os.getppid() != parent:
            os._exit(0)         # its bot is gone: never left behind

common.run()
