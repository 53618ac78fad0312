"""See a tournament: the HTML report, the replay viewer and the grade book.

- ``replay``: a match record turned into the viewer's steps (the engine plays
  it again; requests re-encoded exactly as sent; stderr per decision).
- ``data``: what the report shows, from a results database.
- ``charts``: Vega-Lite charts (Vega-Altair) and Vega's JavaScript, inlined
  (the ``report`` extra).
- ``html``: the pages, from ``templates/`` (jinja2, autoescaped).
- ``build``: the files ``arena report`` and ``arena show --html`` write;
  ``writers`` writes a report's replays, by worker processes; ``files``
  holds the errors and the file writing both use.

Reads results and records; never runs a bot.
"""
