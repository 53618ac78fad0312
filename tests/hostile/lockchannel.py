"""Hostile test bot: passes the cards it was dealt to other bot processes
through POSIX byte-range locks on a file every sandbox can read.

A read lock (F_RDLCK) needs only a read-only descriptor, works through a
read-only bind mount, and is kept by the kernel on the file's inode, which
every mount namespace shares; F_GETLK tells anyone who asks where a
conflicting lock lies.  So a lock at offset ``base + 256*i + byte`` writes
``byte`` at position ``i``, and any process of any sandbox can read it back.
No file is written.

The locks live as long as the process: a process kept idle in the arena's
``BotPool`` after its rotation goes on "saying" its hand while the next
rotation of the same duplicate deal is played by a fresh process.

Environment: LOCK_FILE, the file to lock (default: this script, which only
processes of this bot can open); LOCK_ROLE: ``both`` (default), ``leak`` or
``read``.

At every request of hand 1 it writes on stderr, like memory.py:
``MEMORY {"match": ..., "seat": ..., "cards": [...], "claims": {seat: cards}}``
(``cards``: its first hand of the match; ``claims``: the hands it read from
other processes for the same table and deal)."""
import fcntl
import json
import os
import struct
import sys
import time
import zlib

import proto

FLOCK = "hhqqi4x"         # struct flock on 64-bit Linux
REGION = 1 << 20          # room for one message (up to 4 KiB)
LOCK_FILE = os.environ.get("LOCK_FILE") or os.path.abspath(__file__)
ROLE = os.environ.get("LOCK_ROLE", "both")
fd = os.open(LOCK_FILE, os.O_RDONLY)   # kept open: closing it would drop the locks

start = proto.START
first_hand = {}           # match -> cards of the first request of hand 1
told = {}                 # match -> claims already reported


def base(group, seat):
    return (zlib.crc32(f"{group}/{seat}".encode()) % 4096 + 1) * REGION


def lock_byte(offset):
    fcntl.fcntl(fd, fcntl.F_SETLK, struct.pack(FLOCK, fcntl.F_RDLCK, os.SEEK_SET, offset, 1, 0))


def probe(start_, length):
    """Where a conflicting lock starts in [start_, start_+length), or None."""
    res = fcntl.fcntl(fd, fcntl.F_GETLK, struct.pack(FLOCK, fcntl.F_WRLCK, os.SEEK_SET,
                                                      start_, length, 0))
    kind, _whence, at, _len, _pid = struct.unpack(FLOCK, res)
    return None if kind == fcntl.F_UNLCK else at


def leak(group, seat, cards):
    try:
        _leak(group, seat, cards)
    except OSError:            # the lock calls are refused: no channel
        pass


def _leak(group, seat, cards):
    data = json.dumps(cards).encode()
    data = len(data).to_bytes(2, "big") + data
    b = base(group, seat)
    for i, byte in enumerate(data):
        lock_byte(b + 256 * i + byte)


def read(group, seat):
    try:
        return _read(group, seat)
    except OSError:            # refused: nothing to read
        return None


def _read(group, seat):
    b = base(group, seat)
    out = bytearray()
    for i in range(4096):
        at = probe(b + 256 * i, 256)
        if at is None:
            break
        out.append(at - b - 256 * i)
        if len(out) >= 2 and len(out) == 2 + int.from_bytes(out[:2], "big"):
            try:
                return json.loads(out[2:])
            except ValueError:
                return None
    return None


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
        if ROLE in ("both", "leak"):
            leak(group, seat, first_hand[match])
    claims = told.setdefault(match, {})
    new = False
    if ROLE in ("both", "read"):
        # Wait a little for the others to leak, at a match's first request only.
        deadline = time.monotonic() + (0.3 if first else 0.0)
        while True:
            for other in range(start.get("players", 0)):
                if other != seat and str(other) not in claims:
                    got = read(group, other)
                    if got is not None:
                        claims[str(other)] = got
                        new = True
            if claims or time.monotonic() > deadline:
                break
            time.sleep(0.02)
    if first or new:
        sys.stderr.write("MEMORY " + json.dumps({"match": match, "seat": seat,
                                                 "cards": first_hand[match],
                                                 "claims": claims}) + "\n")
        sys.stderr.flush()


proto.serve(on_request=on_request, name="lockchannel")
