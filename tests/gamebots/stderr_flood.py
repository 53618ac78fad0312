"""Plays like the minimal bot but writes 256 KB to stderr with every request."""
import sys

import common

NOISE = ("debug: thinking very hard " * 40 + "\n") * 256


def noisy(msg):
    sys.stderr.write(NOISE)
    sys.stderr.flush()
    return common.minimal_reply(msg)


common.run(on_request=noisy)
