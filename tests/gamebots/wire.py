"""Misbehaves on the wire (argv[1] says how) from request number argv[2] on
(default 1); plays like the minimal bot otherwise.  Writes with os.write, so
every write is one system call:

    blank-flood     at that request: blank lines without end, and no reply
    junk-flood      answers that request, then writes "x" lines without end
    stale-flood     answers that request, then repeats that reply without end
    stop            at that request: SIGSTOP to itself
    close-stdout    at that request: closes stdout, keeps reading stdin
"""
import json
import os
import signal
import sys

import common

mode = sys.argv[1]
start = int(sys.argv[2]) if len(sys.argv) > 2 else 1


def line(obj):
    return json.dumps(obj).encode() + b"\n"


def forever(data):
    data = data * max(1, 65536 // len(data))
    while True:
        os.write(1, data)


def on_request(msg):
    reply = common.minimal_reply(msg)
    if msg["count"] < start:
        os.write(1, line(reply))
    elif mode == "blank-flood":
        forever(b" \r\n")
    elif mode in ("junk-flood", "stale-flood"):
        os.write(1, line(reply))
        forever(b"x\n" if mode == "junk-flood" else line(reply))
    elif mode == "stop":
        os.kill(os.getpid(), signal.SIGSTOP)
    elif mode == "close-stdout":
        os.close(1)
        sys.stdin.read()
    else:
        raise SystemExit(f"unknown mode {mode!r}")


def on_start(msg):
    os.write(1, line(common.ready(msg, "wire")))


common.run(on_request=on_request, on_start=on_start)
