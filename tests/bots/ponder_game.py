"""A correct game bot (botkit, the greedy player) that also computes all the
time in a thread: between its turns too, on the CPU its match shares.
With ``--after-end`` the thread starts only at the first ``end``: the bot
plays its first match cleanly, then computes while it waits for its next."""
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


spinning = threading.Event()


def start_spinning(_msg: object = None) -> None:
    if not spinning.is_set():
        spinning.set()
        threading.Thread(target=spin, daemon=True).start()


if "--after-end" not in sys.argv:
    start_spinning()
botkit.run(make_player=lambda info: GreedyPlayer(info.rng(), name="ponder"), name="ponder",
           on_end=start_spinning)
