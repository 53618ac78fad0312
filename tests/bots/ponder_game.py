"""A correct game bot (botkit, the greedy player) that also computes all the
time in a thread: between its turns too, on the CPU its match shares."""
import os
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from arena import botkit  # noqa: E402
from arena.players.greedy import GreedyPlayer  # noqa: E402


def spin() -> None:
    n = 0
    while True:
        n += 1


threading.Thread(target=spin, daemon=True).start()
botkit.run(make_player=lambda info: GreedyPlayer(info.rng(), name="ponder"), name="ponder")
