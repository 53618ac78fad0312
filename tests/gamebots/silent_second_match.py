"""Answers every request of its first match, then none (as a bot that is
slow only now and then: it flushes its replies, so nothing hints at a flush)."""
import common

STARTS = 0


def on_start(msg):
    global STARTS
    STARTS += 1
    return common.ready(msg)


common.run(on_request=lambda msg: common.minimal_reply(msg) if STARTS == 1 else None,
           on_start=on_start)
