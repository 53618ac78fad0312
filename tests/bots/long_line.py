"""Test bot: answers with a 100 MB line (written 1 MiB at a time, never all in memory)."""
import sys

sys.stdin.readline()
out = sys.stdout.buffer
out.write(b'{"id": 1, "pad": "')
chunk = b"x" * (1 << 20)
for _ in range(100):
    out.write(chunk)
out.write(b'"}\n')
out.flush()
sys.stdin.readline()
