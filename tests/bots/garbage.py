"""Test bot: answers the first request with garbage of the kind named by argv[1]."""
import sys

GARBAGE = {
    "text": b"I think I will discard the 7 of hearts " * 20 + b"\n",
    "array": b"[1, 2, 3]\n",
    "binary": b'{"id": "\xff\xfe\xfd"}\n',
    "deep": b"[" * 200000 + b"]" * 200000 + b"\n",
}
sys.stdin.readline()
sys.stdout.buffer.write(GARBAGE[sys.argv[1]])
sys.stdout.flush()
sys.stdin.readline()
