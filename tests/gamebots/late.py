"""Answers each request (with --once: only the first) after sleeping argv[1] seconds."""
import sys
import time

import common

DELAY = float(sys.argv[1])


def late(msg):
    if msg["count"] == 1 or "--once" not in sys.argv:
        time.sleep(DELAY)
    return common.minimal_reply(msg)


common.run(on_request=late)
