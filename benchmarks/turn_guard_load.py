"""How often the turn guard catches a bot computing between its turns on a
loaded CPU (arena/process/confine/turns.py).

This process, the bot (tests/bots/ponder.py) and a process computing without
end share one CPU; the bot is asked one request after another, with GAP
seconds between them (the other bots' turns), until it is caught or SECONDS
have passed:

    python benchmarks/turn_guard_load.py none --work,5,--thread 3 12
    python benchmarks/turn_guard_load.py bwrap --work,20 3 12     # honest: never caught

Arguments: sandbox mode, the bot's options (comma-separated), tries, seconds
a try.  Environment: GAP (0.02), HOGS (1), CPU (the last one this process may
use).  Prints when each try was caught (None: not caught).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.process import BotProcess, BotSpec, SandboxPolicy, TimeControl  # noqa: E402

BOT = ROOT / "tests" / "bots" / "ponder.py"


def one_try(mode: str, options: list[str], seconds: float, gap: float) -> float | None:
    spec = BotSpec([sys.executable, str(BOT), *options], sandbox=SandboxPolicy(mode), turn_guard=True)
    bot = BotProcess(spec, stderr_log=None,
                     time_control=TimeControl(startup_seconds=30, per_decision_seconds=30))
    bot.start()
    try:
        bot.handshake({"type": "start", "id": 0})
        clock = bot.pipe._turns
        assert clock is not None
        t0 = time.monotonic()
        n = 1
        while not clock.caught and time.monotonic() - t0 < seconds:
            bot.request({"type": "request", "id": n})
            n += 1
            time.sleep(gap)
        return round(time.monotonic() - t0, 1) if clock.caught else None
    finally:
        bot.close()


def main() -> None:
    mode, options, tries, seconds = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3]), float(sys.argv[4])
    cpu = int(os.environ.get("CPU", max(os.sched_getaffinity(0))))
    os.sched_setaffinity(0, {cpu})
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(int(os.environ.get("HOGS", "1")))]
    try:
        caught = [one_try(mode, [o for o in options if o], seconds, float(os.environ.get("GAP", "0.02")))
                  for _ in range(tries)]
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    print(f"{mode} {' '.join(options)}: caught after {caught} s: "
          f"{sum(c is not None for c in caught)} of {tries}")


if __name__ == "__main__":
    main()
