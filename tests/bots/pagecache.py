"""Test bot: memory that outlives the process, in the page cache (which
pages of a file the kernel holds in memory), shared by every sandbox: the
file is read-only to all, but reading a page puts it in the cache, and
asking for a page without waiting (preadv2 with RWF_NOWAIT) tells whether it
is there.

Each line is a JSON object with an "id" and "do", on the file PAGECACHE_FILE
(environment; one page a bit, the file's first pages):
  "clear", "bits": N   drop the first N pages from the cache (posix_fadvise
                       DONTNEED, allowed on a read-only file)
  "send", "value": V, "bits": N   read page i for each bit i of V that is 1
  "read", "bits": N    answer {"value": V}: bit i is 1 if page i is cached
It answers {"id": ...} (and "value" to "read")."""
import json
import mmap
import os
import sys

PAGE = mmap.PAGESIZE
fd = os.open(os.environ["PAGECACHE_FILE"], os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)      # no read-ahead: a read caches its page only


def cached(page: int) -> bool:
    try:
        return os.preadv(fd, [bytearray(1)], page * PAGE, os.RWF_NOWAIT) == 1
    except BlockingIOError:
        return False


for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("type") == "quit":
        break
    out = {"id": msg.get("id")}
    bits = int(msg.get("bits", 0))
    if msg.get("do") == "clear":
        os.posix_fadvise(fd, 0, bits * PAGE, os.POSIX_FADV_DONTNEED)
    elif msg.get("do") == "send":
        for i in range(bits):
            if msg["value"] >> i & 1:
                os.pread(fd, 1, i * PAGE)
    elif msg.get("do") == "read":
        out["value"] = sum(1 << i for i in range(bits) if cached(i))
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
