"""Hostile test bot: a set of probes against the sandbox, chosen by the
RT_PROBES environment variable (comma-separated), run once when the first
match starts.  It writes what it found as one JSON line after "REDTEAM " on
stderr, then plays the minimal policy.  Every probe is bounded.

Probes (and their settings, from the environment):

sysctl     open kernel.core_pattern and fs.pipe-max-size for writing (nothing
           is written): a bot that can opens them can change the host kernel
           (a core_pattern of "|/its/own/program" runs it as full root).
setuid     create $ARENA_SCRATCH/planted and make it set-user-id.
read       read the files RT_READ (':'-separated); report their sizes.
env        whether the variable RT_ENV_NAME is in the bot's environment.
cmdline    the command line of the sandbox's pid 1 (bwrap and its arguments).
unix       connect to the unix socket RT_UNIX and send one line.
tmpfill    write RT_TMP_MB MiB to /tmp, 1 MiB at a time; report how many
           were written, then delete the file.
memsplit   fork RT_SPLIT children, each in a new session (setsid; not with
           RT_SPLIT_SETSID=0), each
           holding RT_SPLIT_MB MiB; wait 2 s; report that the bot is still
           alive.  (The children are killed with the sandbox.)
forks      fork RT_FORKS sleeping children, hold them RT_FORK_HOLD seconds;
           report how many forks worked; then kill them.
git        ``git show HEAD:RT_GIT_FILE`` in the repository RT_GIT_DIR (the
           history of a hidden file); report the lines that set a seed.
scratchfill write RT_SCRATCH_MB MiB to $ARENA_SCRATCH/fill; report how many
           were written, then delete the file.
"""
import json
import os
import signal
import socket
import sys
import time

import proto

MiB = 1 << 20


def sysctl():
    out = {}
    for path in ("/proc/sys/kernel/core_pattern", "/proc/sys/fs/pipe-max-size"):
        try:
            fd = os.open(path, os.O_WRONLY)
            os.close(fd)
            out[path] = "writable"
        except OSError as exc:
            out[path] = exc.strerror
    return out


def setuid():
    path = os.path.join(os.environ["ARENA_SCRATCH"], "planted")
    with open(path, "wb") as f:
        f.write(b"#!/bin/sh\nexit 0\n")
    os.chmod(path, 0o4755)
    st = os.stat(path)
    return {"mode": oct(st.st_mode), "uid": st.st_uid}


def read():
    out = {}
    for path in filter(None, os.environ.get("RT_READ", "").split(":")):
        try:
            with open(path, "rb") as f:
                out[path] = len(f.read())
        except OSError as exc:
            out[path] = exc.strerror
    return out


def env():
    return os.environ.get("RT_ENV_NAME", "") in os.environ


def cmdline():
    with open("/proc/1/cmdline", "rb") as f:
        return f.read().decode("utf-8", "replace").split("\0")


def unix():
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(2)
            s.connect(os.environ["RT_UNIX"])
            try:
                s.sendall(b"hello from the sandbox\n")
            except OSError:
                pass                              # the server may have closed already
        return "connected"
    except OSError as exc:
        return exc.strerror or str(exc)


def fill(path, mb):
    written = 0
    chunk = b"\xa5" * MiB
    try:
        with open(path, "wb") as f:
            for _ in range(mb):
                f.write(chunk)
                f.flush()
                written += 1
    except OSError as exc:
        return {"written_mb": written, "error": exc.strerror}
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    return {"written_mb": written}


def tmpfill():
    return fill("/tmp/fill", int(os.environ.get("RT_TMP_MB", "200")))


def scratchfill():
    return fill(os.path.join(os.environ["ARENA_SCRATCH"], "fill"),
                int(os.environ.get("RT_SCRATCH_MB", "200")))


def memsplit():
    n = int(os.environ.get("RT_SPLIT", "4"))
    mb = int(os.environ.get("RT_SPLIT_MB", "50"))
    for _ in range(n):
        if os.fork() == 0:
            if os.environ.get("RT_SPLIT_SETSID", "1") == "1":
                os.setsid()
            hold = bytearray(mb * MiB)
            for i in range(0, len(hold), 4096):
                hold[i] = 1
            os.closerange(0, 3)
            time.sleep(30)                        # killed with the sandbox long before
            os._exit(0)
    time.sleep(2.0)
    return {"children": n, "mb_each": mb, "parent_alive": True}


def forks():
    want = int(os.environ.get("RT_FORKS", "200"))
    pids = []
    try:
        for _ in range(want):
            pid = os.fork()
            if pid == 0:
                os.closerange(0, 3)
                time.sleep(30)
                os._exit(0)
            pids.append(pid)
    except OSError as exc:
        err = exc.strerror
    else:
        err = None
    time.sleep(float(os.environ.get("RT_FORK_HOLD", "0")))
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    for pid in pids:
        os.waitpid(pid, 0)
    return {"forked": len(pids), "error": err}


def git():
    import subprocess
    done = subprocess.run(["git", "--no-optional-locks", "-C", os.environ["RT_GIT_DIR"], "show",
                           "HEAD:" + os.environ["RT_GIT_FILE"]], capture_output=True, text=True,
                          timeout=20, check=False)
    return [line for line in done.stdout.splitlines() if '"seed"' in line or line.startswith("seed")]


PROBES = {f.__name__: f for f in (sysctl, setuid, read, env, cmdline, unix, tmpfill,
                                  memsplit, forks, scratchfill, git)}
done = False


def probe(msg):
    global done
    if done:
        return
    done = True
    report = {}
    for name in filter(None, os.environ.get("RT_PROBES", "").split(",")):
        try:
            report[name] = PROBES[name]()
        except Exception as exc:                 # noqa: BLE001 - report, never crash
            report[name] = {"exception": repr(exc)}
        sys.stderr.write(f"REDTEAM-PROBE {name} " + json.dumps(report[name]) + "\n")
        sys.stderr.flush()
    sys.stderr.write("REDTEAM " + json.dumps(report) + "\n")
    sys.stderr.flush()


proto.serve(on_start=probe, name="redteam")
