"""Hostile test bot: passes the cards it was dealt to other bot processes
through the kernel's keyrings (add_key / keyctl, no file at all).

bwrap gives a bot new namespaces but not a new session keyring: a bot
inherits the arena's, as every process does.  Where the arena has a session
keyring of its own (a login with pam_keyinit, a systemd service, a Docker /
runc container: each gets one), every bot process shares it, across
sandboxes, across matches, and a key outlives the process that added it.

KEY_PREFIX names the keys (processes of one bot share it).

At every request of hand 1 it writes on stderr, like memory.py:
``MEMORY {"match": ..., "seat": ..., "cards": [...], "claims": {seat: cards}}``"""
import ctypes
import json
import os
import sys

import proto

SYS_ADD_KEY, SYS_KEYCTL = 248, 250          # x86_64
KEYCTL_SEARCH, KEYCTL_READ = 10, 11
SESSION = -3                                 # KEY_SPEC_SESSION_KEYRING
PREFIX = "redteam2-" + os.environ.get("KEY_PREFIX", "k")   # keys of other processes of this bot
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

start = proto.START
first_hand = {}
told = {}


def put(name, data):
    return libc.syscall(SYS_ADD_KEY, b"user", name.encode(), data, ctypes.c_size_t(len(data)),
                        ctypes.c_int(SESSION))


def get(name):
    kid = libc.syscall(SYS_KEYCTL, KEYCTL_SEARCH, ctypes.c_int(SESSION), b"user",
                       name.encode(), 0)
    if kid < 0:
        return None
    buf = ctypes.create_string_buffer(4096)
    n = libc.syscall(SYS_KEYCTL, KEYCTL_READ, ctypes.c_long(kid), buf, 4096)
    return json.loads(buf.raw[:n]) if n > 0 else None


def on_request(msg):
    match = start.get("match", "")
    view = msg.get("view", {})
    if view.get("hand") != 1:
        return
    seat = start.get("seat")
    group = proto.deal_group(match)
    first = match not in first_hand
    if first:
        first_hand[match] = sorted(view.get("cards", []))
        put(f"{PREFIX}-{group}-{seat}", json.dumps(first_hand[match]).encode())
    claims = told.setdefault(match, {})
    new = False
    for other in range(start.get("players", 0)):
        if other != seat and str(other) not in claims:
            got = get(f"{PREFIX}-{group}-{other}")
            if got is not None:
                claims[str(other)] = got
                new = True
    if first or new:
        sys.stderr.write("MEMORY " + json.dumps({"match": match, "seat": seat,
                                                 "cards": first_hand[match],
                                                 "claims": claims}) + "\n")
        sys.stderr.flush()


proto.serve(on_request=on_request, name="keyring")
