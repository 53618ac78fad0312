"""The JSON-lines bot protocol: messages and their typed meaning.

Knows nothing of processes; see ``messages`` for the message list.
"""

from .messages import (
    PROTOCOL_VERSION, ProtocolError, TimeLimits, end_message, error_message, event_message,
    parse_ready, parse_reply, quit_message, reply_from_action, request_message, start_message,
)

__all__ = [
    "PROTOCOL_VERSION", "ProtocolError", "TimeLimits", "end_message", "error_message",
    "event_message", "parse_ready", "parse_reply", "quit_message", "reply_from_action",
    "request_message", "start_message",
]
