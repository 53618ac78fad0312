"""Counted nouns for messages: ``1 buy``, ``2 buys``, ``1 match``, ``3 matches``."""

from __future__ import annotations


def plural(n: int, one: str, many: str | None = None) -> str:
    """``n`` and the noun in the number it needs (``many`` for irregular plurals)."""
    return f"{n} {one}" if n == 1 else f"{n} {many or one + 's'}"
