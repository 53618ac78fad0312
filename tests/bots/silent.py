"""Test bot: never reads, never answers.  --ignore-term: survives SIGTERM too."""
import signal
import sys
import time

if "--ignore-term" in sys.argv:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
while True:
    time.sleep(3600)
