#!/usr/bin/env python3
"""Greedy bot: arena's in-process GreedyPlayer behind the JSON-lines protocol.

Run it with arena:  arena play "python3 bots/greedy_bot.py" greedy random
Its random generator is seeded from the match id and its seat, so the same
match plays the same way every time.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # run from a checkout

from arena import botkit  # noqa: E402
from arena.players.greedy import GreedyPlayer  # noqa: E402

if __name__ == "__main__":
    sys.exit(botkit.run(make_player=lambda info: GreedyPlayer(info.rng(), name="greedy-bot"), name="greedy-bot"))
