"""Answers every request with an id that was never sent (the request's id + 1000)."""
import common


def wrong(msg):
    reply = common.minimal_reply(msg)
    reply["id"] = msg["id"] + 1000
    return reply


common.run(on_request=wrong)
