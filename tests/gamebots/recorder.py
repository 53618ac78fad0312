"""The minimal bot, appending every message it receives (one JSON per line) to argv[1]."""
import json
import sys

import common

log = open(sys.argv[1], "a")


def record(msg):
    log.write(json.dumps(msg) + "\n")
    log.flush()


common.run(on_message=record)
