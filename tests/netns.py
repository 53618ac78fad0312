"""Run a command in a new network namespace with only loopback, up.

    python tests/netns.py [--listen PORT] COMMAND [ARG...]

Ray binds the machine's external interface and probes a public address to
find its own; in a private network namespace it binds 127.0.0.1 and can
reach nothing else.  Done here with unshare(2) and an ioctl, so that a test
machine needs neither util-linux's unshare nor iproute2's ip.  Needs root
(CAP_SYS_ADMIN); the command replaces this process (same pid).

``--listen PORT``: a socket listens on 127.0.0.1:PORT there, and the
command inherits it.  Nothing ever accepts or answers, yet connections to it
succeed (the kernel completes them into its backlog): a server that is up
but does not speak, such as a Ray head that hangs.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import socket
import struct
import sys

CLONE_NEWNET = 0x40000000
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1


_KEPT: list[socket.socket] = []   # open across the exec


def main(argv: list[str]) -> None:
    listen = None
    if argv[:1] == ["--listen"]:
        listen, argv = int(argv[1]), argv[2:]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        sys.exit(f"netns.py: unshare(CLONE_NEWNET): {os.strerror(err)} (root is needed)")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        request = struct.pack("16sH", b"lo", 0)
        flags = struct.unpack("16sH", fcntl.ioctl(s, SIOCGIFFLAGS, request)[:18])[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH", b"lo", flags | IFF_UP))
    if listen is not None:
        server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        server.bind(("127.0.0.1", listen))
        server.listen(64)
        server.set_inheritable(True)
        _KEPT.append(server)
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
