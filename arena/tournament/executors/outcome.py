"""What a match played by an executor comes back as: a ``MatchResult``, or a
``MatchFailure`` when the match raised an arena-side exception.

Apart from ``worker`` so that the arena's own process (which receives
outcomes but plays no match at ``--jobs 2`` and more) imports neither the
match runner nor the engine to know them.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass

from ...match.spec import MatchResult
from ...process.errors import excerpt

REASON_CHARS = 500      # an arena error's one line, at most

STOP = b""          # the message that tells a worker to finish


@dataclass(frozen=True)
class MatchFailure:
    """A match that raised an arena-side exception: no result, a reason.

    ``reason`` is one line (``"ZeroDivisionError: division by zero"``);
    ``traceback`` is the full text, for a log file (empty when there is none,
    e.g. a worker process that died).
    """

    match_id: str
    reason: str
    traceback: str = ""

    @classmethod
    def of(cls, match_id: str, exc: BaseException) -> MatchFailure:
        # Escaped and bounded: the message may quote what a bot sent, and the
        # line goes to the screen, the store and `arena matches`.
        text = excerpt(" ".join(str(exc).split()), REASON_CHARS)
        reason = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
        return cls(match_id, reason, "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))


Outcome = MatchResult | MatchFailure
