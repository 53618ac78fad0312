"""Hostile test bot, second review: probes chosen by RT_PROBES (comma-
separated), run at the first ``start``; each writes one line
``REDTEAM-PROBE <name> <json>`` on stderr (the format of redteam.py, so
tests can read both the same way), then it plays the minimal policy.

Probes:

memfd      write RT_MEM_MB MiB into a memfd (memfd_create) with write(2),
           never mapping it, hold it RT_MEM_HOLD seconds (default 1.5, a few
           watchdog periods) and report how much was held: a memfd is not on
           any size-bounded tmpfs, and unmapped pages are in nobody's RSS.
sysvshm    the same with a System V shared memory segment: attach, touch,
           detach (pages stay in the segment, outside every RSS), hold.
mountinfo  the mount points the bot sees (/proc/self/mountinfo, field 5).
fds        the descriptors the bot inherited, with what they point to.
inotify    watch RT_INOTIFY (a file every sandbox can read) for opens for
           RT_INOTIFY_WAIT seconds; report how many opens were seen.
"""
import ctypes
import json
import os
import sys
import time

import proto

MiB = 1 << 20
libc = ctypes.CDLL(None, use_errno=True)


def _hold():
    time.sleep(float(os.environ.get("RT_MEM_HOLD", "1.5")))


def memfd():
    want = int(os.environ.get("RT_MEM_MB", "256"))
    fd = os.memfd_create("hoard")
    chunk = b"\x5a" * MiB
    held = 0
    try:
        for _ in range(want):
            os.write(fd, chunk)
            held += 1
        _hold()
        return {"held_mb": held, "alive": True}
    except OSError as exc:
        return {"held_mb": held, "error": exc.strerror}
    finally:
        os.close(fd)


def sysvshm():
    want = int(os.environ.get("RT_MEM_MB", "256"))
    libc.shmat.restype = ctypes.c_void_p
    shmid = libc.shmget(0, ctypes.c_size_t(want * MiB), 0o1000 | 0o600)   # IPC_PRIVATE, IPC_CREAT
    if shmid < 0:
        return {"error": os.strerror(ctypes.get_errno())}
    try:
        addr = libc.shmat(shmid, None, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            return {"error": os.strerror(ctypes.get_errno())}
        for off in range(0, want * MiB, MiB):
            ctypes.memset(addr + off, 0x5a, MiB)
        libc.shmdt(ctypes.c_void_p(addr))
        _hold()
        return {"held_mb": want, "alive": True}
    finally:
        libc.shmctl(shmid, 0, None)                                         # IPC_RMID


def mountinfo():
    with open("/proc/self/mountinfo") as f:
        return [line.split()[4] for line in f]


def fds():
    out = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            out[fd] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError as exc:
            out[fd] = exc.strerror
    return out


def inotify():
    fd = libc.inotify_init1(0o4000)                                         # IN_NONBLOCK
    if fd < 0:
        return {"error": os.strerror(ctypes.get_errno())}
    try:
        if libc.inotify_add_watch(fd, os.environ["RT_INOTIFY"].encode(), 0x20) < 0:   # IN_OPEN
            return {"error": os.strerror(ctypes.get_errno())}
        seen = 0
        deadline = time.monotonic() + float(os.environ.get("RT_INOTIFY_WAIT", "3"))
        while time.monotonic() < deadline:
            try:
                seen += len(os.read(fd, 65536)) // 16
            except BlockingIOError:
                time.sleep(0.05)
        return {"opens": seen}
    finally:
        os.close(fd)


PROBES = {f.__name__: f for f in (memfd, sysvshm, mountinfo, fds, inotify)}
done = False


def probe(msg):
    global done
    if done:
        return
    done = True
    for name in filter(None, os.environ.get("RT_PROBES", "").split(",")):
        try:
            value = PROBES[name]()
        except Exception as exc:                 # noqa: BLE001 - report, never crash
            value = {"exception": repr(exc)}
        sys.stderr.write(f"REDTEAM-PROBE {name} " + json.dumps(value) + "\n")
        sys.stderr.flush()


proto.serve(on_start=probe, name="redteam2")
