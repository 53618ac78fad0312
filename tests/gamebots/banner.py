"""Prints a banner line on stdout before anything else, as a student's first bot
often does, then plays like minimal.py.  With --exit N it exits with code N
right after the banner instead, as a JVM refused its memory does (its error on
stdout, then a non-zero exit); with --linger S too, S seconds after it."""
import sys
import time

import common

if "--exit" in sys.argv:
    sys.stdout.write("Error occurred during initialization of VM\n"
                     "Could not reserve enough space for object heap\n")
    sys.stdout.flush()
    if "--linger" in sys.argv:            # a runtime slow to exit once it has said why
        time.sleep(float(sys.argv[sys.argv.index("--linger") + 1]))
    sys.exit(int(sys.argv[sys.argv.index("--exit") + 1]))
sys.stdout.write("\x1b[1mMy Shanghai bot v1 \u2665 starting\x1b[0m\n")
sys.stdout.flush()
common.run()
