"""Closes its stdout at its first request and keeps running (reading stdin):
the arena must see that it can never answer, sandboxed or not."""
import os
import sys

import common


def close_stdout(msg):
    sys.stdout.flush()
    os.close(1)
    for _line in sys.stdin:      # alive, reading whatever comes, answering nothing
        pass
    return None


common.run(on_request=close_stdout)
