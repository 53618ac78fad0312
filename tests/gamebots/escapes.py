"""Puts terminal control characters (an escape sequence that hides the text
after it, a carriage return, a right-to-left override) into what the arena
quotes back: a stray line after its first reply, its second reply (not JSON),
and the stderr line it writes before exiting with code 3 at its third
request."""
import json
import os

import common

CONTROL = "\x1b[8m\r\u202e"


def on_request(msg):
    reply = json.dumps(common.minimal_reply(msg)).encode()
    if msg["count"] == 1:
        os.write(1, reply + b"\n" + f"stray {CONTROL}".encode() + b"\n")
    elif msg["count"] == 2:
        os.write(1, f"{CONTROL} not json".encode() + b"\n")
    else:
        os.write(2, "last words \x1b[8m\u202e\n".encode())      # (a CR would end the line)
        os._exit(3)


common.run(on_request=on_request)
