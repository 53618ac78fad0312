"""What a bot-side program needs of the protocol: its versions and the reply
for an action.  Standard library only (with the engine's actions), so that
``arena.botkit`` runs under any Python 3 without arena's dependencies.
"""

from __future__ import annotations

from ..shanghai.actions import BUY, DRAW, Action

TYPE_CHECKING = False  # typing's flag without loading typing, which bots never need (tests/test_botstart.py)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["DEFAULT_READY_PROTOCOL", "PROTOCOL_VERSION", "PROTOCOLS", "reply_from_action"]

PROTOCOL_VERSION = 2          # what the arena speaks unless the bot asks for another
PROTOCOLS = (1, 2)            # what a bot may ask for in 'ready'
# A 'ready' without "protocol" comes from a bot written for protocol 1, whose
# strict 'ready' could not carry the field: it keeps getting what it expects.
DEFAULT_READY_PROTOCOL = 1


def reply_from_action(req_id: int, action: Action) -> dict[str, Any]:
    """The reply a bot would send for ``action`` (used by the Python bot kit and tests)."""
    data = action.to_json()
    kind = data.pop("type")
    if kind == DRAW:
        return {"id": req_id, "draw": data["source"]}
    if kind == BUY:
        return {"id": req_id, "buy": data["buy"]}
    return {"id": req_id, **data}
