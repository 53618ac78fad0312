"""Words for messages: counted nouns (``1 buy``, ``2 buys``, ``1 match``,
``3 matches``), and the nearest of some choices to a misspelt word (``did
you mean 'lay_off'?``), for the tournament file's reader and ``arena check``
alike."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping


def plural(n: int, one: str, many: str | None = None) -> str:
    """``n`` and the noun in the number it needs (``many`` for irregular plurals)."""
    return f"{n} {one}" if n == 1 else f"{n} {many or one + 's'}"


def closest(word: str, choices: Iterable[str], aliases: Mapping[str, str] | None = None) -> str | None:
    """The choice nearest ``word``, or None if none is near (difflib's
    ratio of at least 0.6); a word near an old spelling in ``aliases`` gets
    the current one."""
    aliases = aliases or {}
    close = difflib.get_close_matches(word, [*choices, *aliases], n=1, cutoff=0.6)
    return aliases.get(close[0], close[0]) if close else None


def did_you_mean(word: str, choices: Iterable[str], aliases: Mapping[str, str] | None = None) -> str:
    """`` (did you mean 'x'?)`` for the choice nearest ``word``, or nothing."""
    near = closest(word, choices, aliases)
    return f" (did you mean '{near}'?)" if near is not None else ""
