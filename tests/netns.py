"""Run a command in a new network namespace with only loopback, up.

    python tests/netns.py COMMAND [ARG...]

Ray binds the machine's external interface and probes a public address to
find its own; in a private network namespace it binds 127.0.0.1 and can
reach nothing else.  Done here with unshare(2) and an ioctl, so that a test
machine needs neither util-linux's unshare nor iproute2's ip.  Needs root
(CAP_SYS_ADMIN); the command replaces this process (same pid).
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


def main(argv: list[str]) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        sys.exit(f"netns.py: unshare(CLONE_NEWNET): {os.strerror(err)} (root is needed)")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        request = struct.pack("16sH", b"lo", 0)
        flags = struct.unpack("16sH", fcntl.ioctl(s, SIOCGIFFLAGS, request)[:18])[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH", b"lo", flags | IFF_UP))
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
