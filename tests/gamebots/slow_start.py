"""The minimal bot after sleeping argv[1] seconds at start-up (a slow interpreter or JIT)."""
import sys
import time

time.sleep(float(sys.argv[1]))

import common  # noqa: E402

common.run()
