"""The JSON-lines bot protocol: messages and their typed meaning.

Knows nothing of processes: ``messages`` lists the messages and checks
replies, ``wire`` holds their msgspec Structs (the codec), ``encoder`` makes
a match's lines, ``schemas`` ships their JSON Schemas.
"""

from __future__ import annotations

from importlib import import_module

TYPE_CHECKING = False  # typing's flag without loading typing, which bots never need (tests/test_botstart.py)
if TYPE_CHECKING:
    from typing import Any

    from .messages import (
        ProtocolError,
        Ready,
        ReplyLine,
        TimeLimits,
        decode_reply_line,
        end_message,
        error_message,
        event_message,
        parse_ready,
        parse_ready_message,
        parse_reply,
        quit_message,
        reply_action,
        request_message,
        start_message,
    )
    from .replies import DEFAULT_READY_PROTOCOL, PROTOCOL_VERSION, PROTOCOLS, reply_from_action

__all__ = [
    "DEFAULT_READY_PROTOCOL", "PROTOCOL_VERSION", "PROTOCOLS", "ProtocolError", "Ready", "ReplyLine",
    "TimeLimits", "decode_reply_line", "end_message", "error_message", "event_message", "parse_ready",
    "parse_ready_message", "parse_reply", "quit_message", "reply_action", "reply_from_action",
    "request_message", "start_message",
]


def __getattr__(name: str) -> Any:
    # Loaded on first use (PEP 562): ``arena.protocol.replies`` must import
    # without the codec's msgspec, for bots that use arena.botkit.
    if name in __all__:
        return getattr(import_module(".messages", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
