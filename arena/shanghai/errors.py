"""Typed errors of the rules engine.

``MalformedInput`` means the input could not be understood at all (not a card,
wrong shape); ``IllegalAction`` means it was understood and the rules refuse it;
``RulesetError`` means a ruleset setting is unknown or out of range.  Bot
failures (timeouts, crashes) are not the engine's business and live elsewhere.
"""

from __future__ import annotations


class ShanghaiError(Exception):
    """Base class of every error the engine raises on purpose."""


class MalformedInput(ShanghaiError, ValueError):
    """Input that does not parse: not a card, a missing field, a wrong type."""


class IllegalAction(ShanghaiError):
    """A well-formed action that the rules refuse; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class RulesetError(ShanghaiError, ValueError):
    """An unknown or out-of-range ruleset setting; the message names it."""

    def __init__(self, setting: str, message: str) -> None:
        super().__init__(f"setting '{setting}': {message}")
        self.setting = setting
