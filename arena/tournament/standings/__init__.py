"""What is computed and shown from stored results: the leaderboard and its tables
(``leaderboard``), stored matches as rated games (``ratings``), the neighbour effect
(``neighbours``), the per-bot summary of ``arena show`` (``summary``), the fault summary
that ends ``arena run`` (``faults``), and the output formats every table is printed in (``formats``)."""
