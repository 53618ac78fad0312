"""Who plays whom, where: the schedule of a round robin or gauntlet (``schedule``),
rounds chosen from the results so far for ``settle:`` and Swiss (``rounds``), and
the seat order at each table (``seating``)."""
