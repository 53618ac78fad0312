"""A bot that, at its first start, looks for everything the allow-list must
keep out of its sandbox, and reports it in one line on stderr:

    ALLOWLIST {"read": {...}, "list": {...}, "unix": {...}, ...}

What to try comes in ALLOWLIST_PROBE (JSON): "read" (paths: a file is read,
a folder walked and each file read; zlib is undone, as git's objects need),
"secrets" (strings: a path "leaks" if one is found in what was read),
"list" (folders to list), "unix" (socket files to connect to).  Relative
paths are taken from its working directory (on a Ray node: its copy).
Then it plays as proto does.
"""
import json
import os
import socket
import sys
import zlib

import proto

MAX_FILES = 5000
MAX_BYTES = 1 << 20


def _contents(path):
    """Every file's bytes under ``path`` (a file or a folder), and any error."""
    if os.path.isfile(path):
        files = [path]
    else:
        files = [os.path.join(root, n) for root, _d, names in os.walk(path) for n in names]
        if not files and not os.listdir(path):
            return [], None
    found = []
    for name in files[:MAX_FILES]:
        try:
            with open(name, "rb") as f:
                data = f.read(MAX_BYTES)
        except OSError as exc:
            return found, exc
        found.append(data)
        try:
            found.append(zlib.decompress(data))
        except zlib.error:
            pass
    return found, None


def read(path, secrets):
    if not os.path.lexists(path):
        return "missing"
    try:
        found, error = _contents(path)
    except OSError as exc:
        return f"error: {exc.strerror}"
    if any(s.encode() in data for data in found for s in secrets):
        return "secret"
    if error is not None:
        return f"error: {error.strerror}"
    return "read" if found else "empty"


def listing(path):
    try:
        return sorted(os.listdir(path))
    except OSError as exc:
        return f"error: {exc.strerror}"


def unix(path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
        sock.sendall(b"hello\n")
        return "connected"
    except OSError as exc:
        return f"error: {exc.strerror}"
    finally:
        sock.close()


def identity():
    with open("/proc/self/status") as f:
        status = dict(line.split(":", 1) for line in f if ":" in line)
    return {"uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(),
            "cap_eff": status["CapEff"].strip(), "home": os.environ.get("HOME"),
            "home_writable": os.access(os.environ.get("HOME", "/nonexistent"), os.W_OK)}


def report():
    probe = json.loads(os.environ.get("ALLOWLIST_PROBE", "{}"))
    secrets = probe.get("secrets", [])
    with open("/proc/self/mountinfo") as f:
        mounts = [line.split()[4] for line in f]
    found = {"read": {p: read(p, secrets) for p in probe.get("read", [])},
             "list": {p: listing(p) for p in probe.get("list", [])},
             "unix": {p: unix(p) for p in probe.get("unix", [])},
             "mountinfo": mounts, "identity": identity(), "cwd": os.getcwd()}
    sys.stderr.write("ALLOWLIST " + json.dumps(found) + "\n")
    sys.stderr.flush()


DONE = []


def on_start(_msg):
    if not DONE:
        DONE.append(True)
        report()


if __name__ == "__main__":
    if "--now" in sys.argv:         # outside any arena: the probe's own check that it finds what it can read
        report()
    else:
        proto.serve(on_start=on_start, name="allowlist")
