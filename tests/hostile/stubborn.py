"""Hostile test bot: ignores SIGTERM, SIGHUP and SIGINT, answers quit by
carrying on, and stays alive after EOF.  Plays the minimal policy.

--setsid-child: at start, forks a grandchild in a new session (setsid) that
ignores the same signals and sleeps.  --swarm N: forks N sleeping children.
--mark TEXT: ignored; every process keeps the bot's command line, so a test
finds them all by that text."""
import os
import signal
import sys
import time

import proto

for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
    signal.signal(sig, signal.SIG_IGN)


def sleeper(new_session):
    if os.fork() == 0:
        if new_session:
            os.setsid()
            if os.fork() != 0:          # the grandchild, re-parented away from the bot
                os._exit(0)
        os.closerange(0, 3)
        while True:
            time.sleep(3600)


def start(msg):
    if "--setsid-child" in sys.argv:
        sleeper(True)
    if "--swarm" in sys.argv:
        for _ in range(int(sys.argv[sys.argv.index("--swarm") + 1])):
            sleeper(False)


started = False


def first_start(msg):
    global started
    if not started:
        started = True
        start(msg)


proto.serve(on_start=first_start, on_quit=lambda: False, name="stubborn")
while True:                             # EOF: carry on regardless
    time.sleep(3600)
