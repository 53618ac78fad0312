"""Test bot: writes 1 MiB of blank lines (ignored by the arena) to stdout at the moments named
by argv[1] (``first-byte``: after reading the first byte of a request, before
the rest of it; ``quit``: on quit, before exiting), answers requests like echo
otherwise."""
import json
import sys

when = sys.argv[1]
out = sys.stdout.buffer
stdin = sys.stdin.buffer


def flood() -> None:
    for _ in range(1024):
        out.write(b" " * 1023 + b"\n")
    out.flush()


while True:
    first = stdin.read(1)
    if not first:
        break
    if when == "first-byte":
        flood()
    msg = json.loads(first + stdin.readline())
    if msg.get("type") == "quit":
        if when == "quit":
            flood()
        break
    out.write(json.dumps({"id": msg.get("id")}).encode() + b"\n")
    out.flush()
