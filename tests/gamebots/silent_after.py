"""Answers the first argv[1] requests of its process, then reads every
request and never answers (as a bot that flushes only some of its lines)."""
import sys

import common

ANSWERED = int(sys.argv[1])

common.run(on_request=lambda msg: common.minimal_reply(msg) if msg["count"] <= ANSWERED else None)
