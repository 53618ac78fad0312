"""One decision request's time: its allowance, the bank behind it, and the
bank's balance across a match.

``TimeControl`` gives each decision ``per_decision_seconds`` and, on top of
it, whatever is left of ``bank_seconds``: a reply that takes longer than
its allowance spends the difference from the bank, and a timeout empties
it.  A caller's explicit timeout replaces both (the bank is not touched).
"""

from __future__ import annotations

from typing import NamedTuple


class Request(NamedTuple):
    """A request's inputs: the id its reply must carry (None: any), when it
    started to be written, its own allowance and the bank then (None: no
    bank for this request).  A named tuple: made once a decision, it costs
    less than a frozen dataclass."""

    expect_id: object
    started: float
    allowance: float
    bank: float | None

    @property
    def limit(self) -> float:
        """All the seconds it may take: its allowance and the whole bank."""
        return self.allowance + (self.bank or 0.0)


class TimeBank:
    """What is left of a bot's bank of seconds in this match (None: no bank)."""

    __slots__ = ("remaining",)

    def __init__(self, seconds: float | None) -> None:
        self.remaining = seconds

    def request(self, expect_id: object, started: float, per_decision: float,
                timeout: float | None) -> Request:
        """The next request: ``timeout`` if given (no bank), else the time control's."""
        if timeout is not None:
            return Request(expect_id, started, timeout, None)
        return Request(expect_id, started, per_decision, self.remaining)

    def spend(self, request: Request, elapsed: float) -> float | None:
        """The seconds of a reply beyond its allowance come from the bank;
        those seconds (None when none were)."""
        if request.bank is None or elapsed <= request.allowance:
            return None
        over = elapsed - request.allowance
        self.remaining = max(0.0, request.bank - over)
        return over

    def timed_out(self, request: Request) -> None:
        """A timeout spends all of the bank it could use."""
        if request.bank is not None:
            self.remaining = 0.0
