"""Sends every reply twice: the second copy answers nothing and is ignored (not a fault)."""
import common


def reply_twice(msg):
    reply = common.minimal_reply(msg)
    common.write(reply)
    return reply


common.run(on_request=reply_twice)
