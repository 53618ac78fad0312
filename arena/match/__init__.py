"""The match runner: one match between built-in players and bot programs.

``run_match(spec, pool=None) -> MatchResult`` is a plain function of plain
data (``MatchSpec`` and ``MatchResult`` pickle and have a JSON form), so it
can run in a worker process or on another machine.

A bot seat, for each decision: the public events since its last notice are
sent as ``event`` notices (batched in one write just before the request, and
once more before ``end``), then a ``request`` with a fresh id; the reply is
parsed and applied.  Every way that can fail is a ``Fault``:

=========  ================================================================
timeout    no reply within the time control (per-decision time, then bank)
crash      the process died or closed its pipes (always forfeits)
malformed  not one JSON object per line, too long, missing fields, bad cards
wrong_id   a reply to an id that was never sent (late answers to earlier
           requests are dropped silently and cannot answer a later request)
illegal    understood, but the rules refuse it (the reason is the engine's)
=========  ================================================================

Fallback: after a fault the bot gets an ``error`` notice with the reason and
the action played for it instead, the legal fallback: draw from the stock,
do not buy, or discard the first card of the hand (always legal).

Forfeits (``FaultPolicy``): each fault is a strike; the seat is forfeited at
``max_strikes`` (3), at the first fault when ``strict`` (``arena check``),
and at once on a crash, a failed handshake, or anything that leaves the
process unusable.  A forfeited bot's process is killed and its seat plays the
fallback to the end of the match, so the other seats' match stays a normal
game (their scores remain comparable with other matches).

Placing: ``places`` rank non-forfeited seats by total (lowest first), equal
totals sharing a place (competition ranking: 1, 1, 3), then every forfeited
seat in the last place (the number of seats), whatever its total (the
fallback's play, not its bot's): forfeited seats tie, and a match every seat
forfeited is a draw in which all lost.  ``totals`` are the game's scores
unchanged.

Process reuse (``BotPool``, see ``pool``): a pool keeps healthy bot
processes between the matches it serves, because a tournament worker plays
many matches with the same few programs and a Python or node start-up costs
more than a whole fast match; without a pool every process is started for
the match and closed (``quit``, then killed) at its end.  Bots are told that
``start`` may follow ``end`` on the same process; one that exits instead is
restarted for its next match without a fault.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .pool import BotHandle, BotPool
    from .runner import run_match
    from .seats import fallback_action
    from .spec import (
                       CRASH,
                       FAULT_KINDS,
                       ILLEGAL,
                       MALFORMED,
                       START,
                       TIMEOUT,
                       WRONG_ID,
                       Fault,
                       FaultPolicy,
                       IgnoredLines,
                       MatchResult,
                       MatchSpec,
                       SeatSpec,
                       SeatStats,
                       bot_key,
                       forfeit_places,
                       pool_key,
    )

__all__ = [
    "run_match", "BotPool", "BotHandle", "MatchSpec", "MatchResult", "SeatSpec", "FaultPolicy",
    "Fault", "IgnoredLines", "SeatStats", "fallback_action", "forfeit_places", "bot_key", "pool_key", "FAULT_KINDS",
    "TIMEOUT", "CRASH", "MALFORMED", "WRONG_ID", "ILLEGAL", "START",
]

# Where each name lives; anything not listed is in ``spec``.  The names are
# loaded on first use (PEP 562): the tournament's parent process needs the
# plain data (``spec``) but not the runner, the engine, the protocol codec or
# the process layer, which only the processes that play matches load.
_MODULE_OF = {"BotHandle": "pool", "BotPool": "pool", "run_match": "runner", "fallback_action": "seats"}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{_MODULE_OF.get(name, 'spec')}", __name__), name)
    globals()[name] = value
    return value
