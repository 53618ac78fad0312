"""Messages between the arena and a worker: length-prefixed bytes on a socket.

One socket pair per worker; each message is an 8-byte big-endian length and
that many bytes (a pickled ``MatchSpec`` one way, a pickled outcome the
other).  Written here on bare file descriptors rather than with
``multiprocessing.connection``, which would cost every worker the import of
``multiprocessing`` and ``socket`` (about 1.3 MB of its memory) for the same
two calls.
"""

from __future__ import annotations

import os

HEADER_BYTES = 8
CHUNK = 1 << 20


def send(fd: int, data: bytes) -> None:
    """Write one message; OSError (BrokenPipeError...) if the other end is gone."""
    view = memoryview(len(data).to_bytes(HEADER_BYTES, "big") + data)
    while view:
        view = view[os.write(fd, view):]


def receive(fd: int) -> bytes:
    """Read one message; EOFError if the other end closed (or died) first."""
    size = int.from_bytes(_exactly(fd, HEADER_BYTES), "big")
    return _exactly(fd, size)


def _exactly(fd: int, size: int) -> bytes:
    chunks = []
    left = size
    while left:
        chunk = os.read(fd, min(left, CHUNK))
        if not chunk:
            raise EOFError("the other end of the channel closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
