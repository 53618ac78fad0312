"""The protocol log (``-vv``) follows the log level as it changes, on a
decision's path too.

The speed of that path is not tested here: it is measured by
``benchmarks/protocol.py`` ("arena CPU per decision", aim <= 40 us in
``benchmarks/all.py``'s table), on interleaved floor/subject pairs.  A count
of Python calls per decision, which this module asserted before, made the
path hand-inlined for gains below that benchmark's noise (issue 31 point 6).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

from arena.process import BotProcess, BotSpec, TimeControl

HERE = Path(__file__).parent


def test_the_protocol_log_follows_the_level_as_it_changes(caplog: Any) -> None:
    wire = logging.getLogger("arena.process")
    bot = BotProcess(BotSpec([sys.executable, str(HERE / "bots" / "echo.py")]),
                     time_control=TimeControl(startup_seconds=5, per_decision_seconds=5))
    with bot:
        seen = []
        for i, level in enumerate((logging.WARNING, logging.DEBUG, logging.INFO, logging.DEBUG)):
            caplog.set_level(level, logger="arena.process")
            caplog.clear()
            assert bot.request({"id": i + 1})[0]["id"] == i + 1
            logged = [r.getMessage() for r in caplog.records]
            seen.append((any(">> " in m for m in logged), any("<< " in m for m in logged)))
        assert wire.isEnabledFor(logging.DEBUG)
    # The line written and the reply read are logged exactly while DEBUG is on.
    assert seen == [(False, False), (True, True), (False, False), (True, True)]
