"""``arena league``: a competition that runs for weeks, with a live page.

A league is a directory (``config``: its file; ``store``: every version
handed in, copied and named by its content; ``register``: the versions and
tables; ``DIR/results/``: a tournament's results database).  Authors hand in
versions (``versions.submit``), each is checked before it plays
(``versions.check_waiting``), ``run`` plays tables for ever (``matchmaking``
chooses them, ``plan`` deals them), ``standings`` reads the table, and
``web`` serves it (Starlette; loaded only by ``arena league serve``).
Nothing below the command line imports this package.
"""
