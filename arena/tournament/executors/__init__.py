"""Where matches run: ``local`` (this process, or worker processes) and ``ray``.

``choose.make(config, jobs, most)`` builds the executor the tournament asks for
(``executor:`` in its file, ``--executor`` on the command line).

Beside them: ``worker`` (what a worker process runs: one match after another),
``channel`` (the pipe between the arena and a worker), ``outcome`` (a match's
result or failure as it comes back) and ``node`` (what a Ray node does to a
spec and its logs).  ``assign``, ``forked`` and ``rayjoin`` serve the executors.
This file imports nothing: a worker imports ``executors.worker`` alone.
"""
