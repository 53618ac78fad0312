"""Plays normally, then exits with code 3 at request number argv[1] (mid-hand)."""
import sys

import common

AT = int(sys.argv[1])


def maybe_exit(msg):
    if msg["count"] >= AT:
        sys.stderr.write("exit_midway: giving up now\n")
        sys.exit(3)
    return common.minimal_reply(msg)


common.run(on_request=maybe_exit)
