"""Answers every request with a line of prose instead of JSON."""
import sys

import common


def garbage(msg):
    sys.stdout.write("I think I will discard the seven of hearts\n")
    sys.stdout.flush()


common.run(on_request=garbage)
