"""Test bot: takes and probes file locks on its own script, a file every
process of this bot can open read-only (as every bot can open the interpreter).

Each request line is {"id": N, "do": "lock" | "probe"}; the reply carries
what each call gave: "ok", or the errno's name.

* lock: flock(LOCK_EX), fcntl F_SETLK, F_OFD_SETLK (read locks at bytes 100
  and 200, which a read-only descriptor allows), and F_SETLK through a raw
  system call with high bits set in its command (byte 300): the kernel reads
  the command as 32 bits, a filter comparing all 64 would miss it.  The
  locks are held as long as the process lives.
* probe, on a descriptor of its own: flock(LOCK_EX | LOCK_NB), and F_GETLK
  and F_OFD_GETLK asking for a write lock on the whole file: "free", or
  where a conflicting lock starts.

Two more ways to learn that another process touched a shared file:

* watch: a lease on its script (F_SETLEASE: another process's open breaks
  it, with a signal to the holder, and a non-blocking open fails) and a
  directory notification on its directory (F_NOTIFY: any read of a file
  there signals the watcher), both signalling SIGIO, which it counts.
* touch: opens its script (non-blocking, as a lease makes it fail) and reads it.
* signals: how many SIGIO it has had.
"""
import ctypes
import errno
import fcntl
import json
import os
import platform
import signal
import struct
import sys

FLOCK = "hhqqi4x"         # struct flock on 64-bit Linux
F_OFD_GETLK, F_OFD_SETLK = 36, 37
F_SETLEASE, F_NOTIFY = 1024, 1026
SYS_FCNTL = {"x86_64": 72, "aarch64": 25}.get(platform.machine())
HERE = os.path.abspath(__file__)
held = []                 # descriptors kept open: closing one would drop its locks
signals = []
signal.signal(signal.SIGIO, lambda *_: signals.append(1))


def call(fn, *args):
    try:
        fn(*args)
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc.errno))
    return "ok"


def raw_setlk(fd, start):
    if SYS_FCNTL is None:
        return "unsupported"
    libc = ctypes.CDLL(None, use_errno=True)
    lock = ctypes.create_string_buffer(struct.pack(FLOCK, fcntl.F_RDLCK, os.SEEK_SET, start, 1, 0))
    libc.syscall.restype = ctypes.c_long
    done = libc.syscall(ctypes.c_long(SYS_FCNTL), ctypes.c_long(fd),
                        ctypes.c_long((1 << 32) | fcntl.F_SETLK), lock)
    return "ok" if done == 0 else errno.errorcode.get(ctypes.get_errno(), "?")


def lock():
    fd = os.open(HERE, os.O_RDONLY)
    held.append(fd)
    ofd = os.open(HERE, os.O_RDONLY)
    held.append(ofd)
    rdlock = fcntl.F_RDLCK
    return {
        "flock": call(fcntl.flock, fd, fcntl.LOCK_EX),
        "setlk": call(fcntl.fcntl, fd, fcntl.F_SETLK, struct.pack(FLOCK, rdlock, 0, 100, 1, 0)),
        "ofd_setlk": call(fcntl.fcntl, ofd, F_OFD_SETLK, struct.pack(FLOCK, rdlock, 0, 200, 1, 0)),
        "raw_setlk": raw_setlk(fd, 300),
    }


def getlk(fd, command):
    try:
        res = fcntl.fcntl(fd, command, struct.pack(FLOCK, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0))
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc.errno))
    kind, _whence, start, _len, _pid = struct.unpack(FLOCK, res)
    return "free" if kind == fcntl.F_UNLCK else f"locked at {start}"


def probe():
    fd = os.open(HERE, os.O_RDONLY)
    try:
        return {"flock": call(fcntl.flock, fd, fcntl.LOCK_EX | fcntl.LOCK_NB),
                "getlk": getlk(fd, fcntl.F_GETLK),
                "ofd_getlk": getlk(fd, F_OFD_GETLK)}
    finally:
        os.close(fd)


def watch():
    fd = os.open(HERE, os.O_RDONLY)
    held.append(fd)
    folder = os.open(os.path.dirname(HERE), os.O_RDONLY)
    held.append(folder)
    return {"lease": call(fcntl.fcntl, fd, F_SETLEASE, fcntl.F_WRLCK),
            "notify": call(fcntl.fcntl, folder, F_NOTIFY, fcntl.DN_ACCESS | fcntl.DN_MULTISHOT)}


def touch():
    try:
        fd = os.open(HERE, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        return {"open": errno.errorcode.get(exc.errno, str(exc.errno))}
    os.read(fd, 100)
    os.close(fd)
    return {"open": "ok"}


ACTIONS = {"lock": lock, "probe": probe, "watch": watch, "touch": touch,
           "signals": lambda: {"signals": len(signals)}}

for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") == "quit":
        break
    result = ACTIONS[msg["do"]]()
    sys.stdout.write(json.dumps({"id": msg.get("id"), **result}) + "\n")
    sys.stdout.flush()
