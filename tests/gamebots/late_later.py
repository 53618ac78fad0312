"""Answers its first argv[2] requests at once, then each after sleeping argv[1]
seconds: a bot that turns slow only later in the game, past a probe's first
decisions."""
import sys
import time

import common

DELAY, PROMPT = float(sys.argv[1]), int(sys.argv[2])


def later(msg):
    if msg["count"] > PROMPT:
        time.sleep(DELAY)
    return common.minimal_reply(msg)


common.run(on_request=later)
