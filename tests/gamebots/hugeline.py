"""Answers every request with one 100 MB line (no newline until the end)."""
import sys

import common

CHUNK = b"x" * (1 << 20)


def huge(msg):
    out = sys.stdout.buffer
    out.write(b'{"id": %d, "discard": "' % msg["id"])
    for _ in range(100):
        out.write(CHUNK)
    out.write(b'"}\n')
    out.flush()


common.run(on_request=huge)
