"""The ``arena`` command line (click): the one layer above the library.

``app`` holds the ``arena`` group and the commands that play or check single
matches and write reports; ``tournament`` the commands that run a tournament
and show its leaderboard (``run``, ``leaderboard``); ``results`` those that
read stored matches (``matches``, ``show``, ``verify``); ``common`` what they
share (the group's help, verbosity options, interrupts).  Nothing below
imports this package.
"""

from .app import main

__all__ = ["main"]
