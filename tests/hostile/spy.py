"""Hostile test bot: at its first request it looks for everything it should
not see and writes what it found, as one JSON line after "SPY-REPORT ", on
stderr.  Then it plays the minimal policy.

Environment: SPY_FILES (paths to try to read, separated by ':'), SPY_PORT (a
TCP port on 127.0.0.1 to connect to), SPY_MARK (the value of another bot's
VICTIM_SECRET variable: seeing it means a secret leaked)."""
import json
import os
import socket
import sys

import proto


def processes():
    me = os.getpid()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        entry = {"pid": int(name)}
        for what in ("cmdline", "environ"):
            try:
                with open(f"/proc/{name}/{what}", "rb") as f:
                    entry[what] = f.read().decode("utf-8", "replace").split("\0")
            except OSError:
                entry[what] = None
        try:
            fd = os.open(f"/proc/{name}/fd/0", os.O_RDONLY | os.O_NONBLOCK)
            os.close(fd)
            entry["stdin_opened"] = True
        except OSError:
            entry["stdin_opened"] = False
        found.append(entry)
    return found


def files():
    result = {}
    for path in filter(None, os.environ.get("SPY_FILES", "").split(":")):
        try:
            if os.path.isdir(path):
                result[path] = sorted(os.listdir(path))
            else:
                with open(path, "rb") as f:
                    result[path] = len(f.read())
        except OSError:
            result[path] = None
    return result


def connect():
    port = os.environ.get("SPY_PORT")
    if not port:
        return None
    try:
        with socket.create_connection(("127.0.0.1", int(port)), timeout=2):
            return True
    except OSError:
        return False


def writable(path):
    try:
        with open(os.path.join(path, f"spy-{os.getpid()}"), "w") as f:
            f.write("x")
        return True
    except OSError:
        return False


done = False


def spy(msg):
    global done
    if done:
        return
    done = True
    secret = "VICTIM_SECRET=" + os.environ.get("SPY_MARK", "")
    procs = processes()
    report = {
        "processes": procs,
        "leaks": [p["pid"] for p in procs if secret in (p["environ"] or [])],
        "files": files(),
        "connected": connect(),
        "wrote_tmp": writable("/tmp"),
        "wrote_cwd": writable(os.getcwd()),
    }
    sys.stderr.write("SPY-REPORT " + json.dumps(report) + "\n")
    sys.stderr.flush()


proto.serve(on_request=spy, name="spy")
