"""Test bot: never reads, never answers.  --ignore-term: survives SIGTERM too.
--term-exit N: exits N on SIGTERM, and says "ready" on stderr once it would."""
import signal
import sys
import time

if "--ignore-term" in sys.argv:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if "--term-exit" in sys.argv:
    code = int(sys.argv[sys.argv.index("--term-exit") + 1])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(code))
    print("ready", file=sys.stderr, flush=True)
while True:
    time.sleep(3600)
