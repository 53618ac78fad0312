"""What a refused reply most likely was, told from the line the bot wrote:
the fault's own reason says what the arena could not take, these name the
bug behind it (a buy nobody asked for, a second 'ready', a misspelt field).
"""

from __future__ import annotations

import re

from ..match import MALFORMED, Fault
from ..protocol.messages import READY_FIELDS, REPLY_FIELDS
from ..words import closest
from .transcript import UNASKED_BUY

# Every name a reply or 'ready' has, wherever in the line, and the words
# the fields that take one accept.
NAMES = frozenset({"id", *READY_FIELDS, *(f for fields in REPLY_FIELDS.values() for f in fields),
                   "meld", "card", "end", "take", "cards", "kind"})
WORDS = {"draw": ("stock", "upcard"), "end": ("low", "high"), "kind": ("set", "run")}
_KEY = re.compile(r'"([^"\\]{1,40})"\s*:')
_WORD = re.compile(r'"(draw|end|kind)"\s*:\s*"([^"\\]{1,40})"')


def misread(fault: Fault) -> str | None:
    """The bug when the arena took a line that was no answer for the reply."""
    line = (fault.excerpt or "").replace(" ", "")
    if fault.decision_kind != "buy" and '"buy"' in line:
        return UNASKED_BUY
    if '"type":"ready"' in line:
        return "a second 'ready' (is every line sent twice?)"
    return None


def fault_summary(fault: Fault, where: str) -> str:
    """The FAIL line of a fault at ``where`` (``its draw reply``), the bug
    behind it first when the line tells it."""
    bug = misread(fault)
    if bug is not None:
        return f"{bug}; taken for {where}: {fault.kind}: {fault.detail}"
    hint = near_misses(fault.excerpt or "") if fault.kind == MALFORMED else ""
    return f"{fault.kind} at {where}: {fault.detail}{hint}"


def near_misses(line: str) -> str:
    """`` (did you mean 'lay_off'?)`` for each field name or word of ``line``
    the protocol does not have but has one close to, as the tournament
    file's reader suggests; nothing if there is none."""
    pairs: dict[str, str] = {}
    for key in _KEY.findall(line):
        if key not in NAMES:
            near = closest(key.lower(), NAMES)
            if near is not None:
                pairs[key] = near
    for key, word in _WORD.findall(line):
        if word not in WORDS[key]:
            near = closest(word.lower(), WORDS[key])
            if near is not None:
                pairs[word] = near
    if not pairs:
        return ""
    if len(pairs) == 1:
        return f" (did you mean '{next(iter(pairs.values()))}'?)"
    return " (did you mean " + ", ".join(f"'{right}' for '{wrong}'" for wrong, right in pairs.items()) + "?)"
