"""The JSON-lines bot protocol: messages and their typed meaning.

Knows nothing of processes: ``messages`` lists the messages and checks
replies, ``wire`` holds their msgspec Structs (the codec), ``encoder`` makes
a match's lines, ``schemas`` ships their JSON Schemas.
"""

from .messages import (
    DEFAULT_READY_PROTOCOL, PROTOCOL_VERSION, PROTOCOLS, ProtocolError, Ready, ReplyLine, TimeLimits,
    decode_reply_line, end_message, error_message, event_message, parse_ready, parse_ready_message,
    parse_reply, quit_message, reply_action, reply_from_action, request_message, start_message,
)

__all__ = [
    "DEFAULT_READY_PROTOCOL", "PROTOCOL_VERSION", "PROTOCOLS", "ProtocolError", "Ready", "ReplyLine",
    "TimeLimits", "decode_reply_line", "end_message", "error_message", "event_message", "parse_ready",
    "parse_ready_message", "parse_reply", "quit_message", "reply_action", "reply_from_action",
    "request_message", "start_message",
]
