"""Red-team bot: on its first request, tries to hold more than its limits
allow, and answers what it got, as one JSON reply (one process checks
several limits: cheap in CI).

* ``shm``: a System V shared memory segment of SHM_MB (default 1024) MB,
  attached and written (what a bot limited to 256 MB held 16 times over);
* ``msg``: a System V message queue (kernel memory no limit sees);
* ``threads``: how many of THREADS (default 1001) threads it could start.
"""
import ctypes
import json
import os
import sys
import threading

libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
IPC_PRIVATE, IPC_CREAT, IPC_RMID = 0, 0o1000, 0


def shm(megabytes: int) -> dict:
    size = megabytes << 20
    ident = libc.shmget(IPC_PRIVATE, ctypes.c_size_t(size), IPC_CREAT | 0o600)
    if ident < 0:
        return {"held_mb": 0, "errno": ctypes.get_errno()}
    address = libc.shmat(ident, None, 0)
    if address in (None, ctypes.c_void_p(-1).value):
        libc.shmctl(ident, IPC_RMID, None)
        return {"held_mb": 0, "errno": ctypes.get_errno()}
    ctypes.memset(address, 1, size)
    libc.shmdt(ctypes.c_void_p(address))
    libc.shmctl(ident, IPC_RMID, None)
    return {"held_mb": megabytes, "errno": 0}


def msg() -> dict:
    ident = libc.msgget(IPC_PRIVATE, IPC_CREAT | 0o600)
    if ident >= 0:
        libc.msgctl(ident, IPC_RMID, None)
    return {"made": ident >= 0, "errno": 0 if ident >= 0 else ctypes.get_errno()}


def threads(wanted: int) -> dict:
    stop = threading.Event()
    started = []
    threading.stack_size(64 * 1024)
    error = ""
    for _ in range(wanted):
        t = threading.Thread(target=stop.wait, daemon=True)
        try:
            t.start()
        except RuntimeError as exc:            # "can't start new thread"
            error = str(exc)
            break
        started.append(t)
    stop.set()
    for t in started:
        t.join()
    return {"started": len(started), "error": error}


line = sys.stdin.readline()
request = json.loads(line)
report = {"id": request.get("id"),
          "shm": shm(int(os.environ.get("SHM_MB", "1024"))),
          "msg": msg(),
          "threads": threads(int(os.environ.get("THREADS", "1001")))}
sys.stdout.write(json.dumps(report) + "\n")
sys.stdout.flush()
sys.stdin.readline()
