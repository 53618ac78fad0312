#!/usr/bin/env python3
"""Random bot: arena's in-process RandomPlayer behind the JSON-lines protocol.

Run it with arena:  arena play "python3 bots/random_bot.py" greedy random
Its random generator is seeded from the match id and its seat, so the same
match plays the same way every time.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # run from a checkout

from arena import botkit  # noqa: E402
from arena.players.random_player import RandomPlayer  # noqa: E402

if __name__ == "__main__":
    sys.exit(botkit.run(make_player=lambda info: RandomPlayer(info.rng(), name="random-bot"), name="random-bot"))
