"""What a bot wrote and was sent, line by line, read from the process layer's
debug log (``>>`` lines written to the bot, ``<<`` lines read from it).

The match runner forgives a bot that writes lines nobody asked for (they are
thrown away) and replies carrying an earlier request's id (taken for late
answers).  A tournament must, but a conformance check must not: a reply sent
twice, a buy nobody asked for or ids the bot counts itself are bugs, and the
transcript is where they show.  So is a line answering a notice: a JSON object
with neither an id nor a choice, after notices that no such line answered yet
(one line a notice, in their order; the arena may have taken it for a reply).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from types import TracebackType
from typing import Any

OUT, IN = ">>", "<<"
# The process layer's debug lines: "<bot> >> <line>" and "<bot> << <line>".
_LOGGERS = ("arena.process.exchange", "arena.process.streams")
_HEAD = re.compile(r'"(type|kind)":"(\w+)"|"id":(-?\d+)')


UNASKED_BUY = ("a buy nobody asked for: buy only in answer to a buy request, which comes when "
               "you may buy (docs/RULES.md, 'The buy window')")


# What an extra line is (Issue.what).
DUPLICATE, UNASKED, SECOND, WRONG_ID, UNSOLICITED, NOTICE, BEHIND = (
    "duplicate", "unasked buy", "second reply", "wrong id", "unsolicited", "notice reply",
    "reply behind a notice reply")
# The messages a bot must never answer, as a notice answered is named.
NOTICES = {"event": "an event notice", "error": "an 'error' notice", "end": "the 'end' notice"}


@dataclass(frozen=True)
class Issue:
    """A line the arena ignored (or took for a reply it was not), and what it means."""

    what: str           # DUPLICATE, UNASKED, SECOND, WRONG_ID, UNSOLICITED, NOTICE or BEHIND
    detail: str         # one sentence naming the rule
    line: str           # the line, shortened
    taken: bool = False  # the arena took it for a reply (a notice's answer can be): not ignored


class Transcript(logging.Handler):
    """Collects the debug lines while in a ``with`` block.  Records at the
    level the loggers had before still reach their usual handlers."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[tuple[str, str]] = []
        # (logger, its own level, its effective level, propagate) to restore
        self._saved: list[tuple[logging.Logger, int, int, bool]] = []

    def __enter__(self) -> Transcript:
        for name in _LOGGERS:
            logger = logging.getLogger(name)
            self._saved.append((logger, logger.level, logger.getEffectiveLevel(), logger.propagate))
            logger.setLevel(logging.DEBUG)
            logger.propagate = False
            logger.addHandler(self)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        for logger, level, _effective, propagate in self._saved:
            logger.removeHandler(self)
            logger.setLevel(level)
            logger.propagate = propagate
        self._saved.clear()

    def emit(self, record: logging.LogRecord) -> None:
        fmt = str(record.msg)
        if fmt.startswith(("%s >> ", "%s << ")) and isinstance(record.args, tuple):
            direction = OUT if fmt.startswith("%s >> ") else IN
            plain = fmt in ("%s >> %s", "%s << %s")
            text = str(record.args[-1]) if plain else record.getMessage().split(f" {direction} ", 1)[1]
            self.lines.append((direction, text))
        for logger, _level, effective, propagate in self._saved:
            # What configured handlers would have seen still goes up; without
            # any, the warnings about ignored lines are in the report already.
            if (logger.name == record.name and propagate and record.levelno >= effective
                    and logger.parent is not None and logger.parent.hasHandlers()):
                logger.parent.handle(record)

    def mark(self) -> int:
        return len(self.lines)

    def since(self, mark: int) -> list[tuple[str, str]]:
        return self.lines[mark:]


def _head(text: str) -> dict[str, Any]:
    """type, kind and id of a message, also from a line the log shortened."""
    try:
        obj = json.loads(text)
        if isinstance(obj, dict):
            return obj
    except ValueError:
        pass
    out: dict[str, Any] = {}
    for key, value, number in _HEAD.findall(text[:200]):
        if number and "id" not in out:
            out["id"] = int(number)
        elif key and key not in out:
            out[key] = value
    return out


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


@dataclass
class Exchange:
    """One request (or 'start') and the reply the arena took for it."""

    request_id: int | None          # None for 'start'
    kind: str                       # draw, buy, play or start
    request: str
    reply: str | None = None
    copied: bool = False            # the reply was a copy of an earlier one
    noticed: bool = False           # the line taken for its reply answered a notice


def read(lines: list[tuple[str, str]], earlier: set[str] | None = None
         ) -> tuple[list[Exchange], list[Issue]]:
    """The exchanges in order, and the lines the arena ignored.  ``earlier``
    holds the replies of earlier matches (a late copy of one is a duplicate);
    the replies read here are added to it."""
    seen = earlier if earlier is not None else set()
    exchanges: list[Exchange] = []
    extra: list[_Extra] = []
    pending: Exchange | None = None
    owed: list[str] = []            # the notices written, not yet answered by a line without an id
    for direction, text in lines:
        if direction == OUT:
            head = _head(text)
            if head.get("type") in NOTICES:
                owed.append(str(head["type"]))
            pending = _sent(head, text, exchanges) or pending
            continue
        if not text.strip():
            continue
        reply = _head(text)
        rid = reply.get("id")
        judged = pending is not None and not _stale(reply, pending) and (
            pending.request_id is None or rid == pending.request_id or not isinstance(rid, int)
            or isinstance(rid, bool) or rid >= pending.request_id)
        # A bot that answers notices writes one line for each, in their order.
        notice = owed.pop(0) if owed and _answers_notice(text, reply) else None
        copy = notice is None and text.strip() in seen and _copy(reply, rid, pending)
        if copy or not judged or notice is not None:
            extra.append(_Extra(text, reply, rid, copy, pending, notice, judged))
        if judged and pending is not None:
            # The arena took this line for the answer (a fault if it is wrong).
            pending.reply, pending.copied, pending.noticed = text, copy, notice is not None
            seen.add(text.strip())
            pending = None
    # Told apart once every reply is known: a wrong id followed by the right
    # answer was an extra line, one never followed by it a miscounted answer.
    kinds = {e.request_id: e.kind for e in exchanges if e.request_id is not None}
    behind = {e.request_id for e in exchanges if e.noticed}
    return exchanges, [x.issue(kinds, behind) for x in extra]


def _sent(head: dict[str, Any], text: str, exchanges: list[Exchange]) -> Exchange | None:
    """The exchange a line written to the bot opens ('start' or a request), if any."""
    if head.get("type") == "start":
        exchanges.append(Exchange(None, "start", text))
    elif head.get("type") == "request" and isinstance(head.get("id"), int):
        exchanges.append(Exchange(head["id"], str(head.get("kind")), text))
    else:
        return None
    return exchanges[-1]


def _copy(reply: dict[str, Any], rid: Any, pending: Exchange | None) -> bool:
    """Whether a line the bot wrote before, written again, is a copy: not
    when it answers the request waiting, and not a line without an id that
    is no 'ready' (a debug print the same as one of a process before)."""
    if pending is None:
        return True
    return rid != pending.request_id and (isinstance(rid, int) or reply.get("type") == "ready")


def _stale(reply: dict[str, Any], pending: Exchange) -> bool:
    """A reply to some request, read while 'start' waits for 'ready': the
    bot wrote it after the last match ended, and the arena threw it away
    before it wrote 'start' (its log can show it after)."""
    return (pending.kind == "start" and reply.get("type") != "ready"
            and ("id" in reply or any(_answers(reply, kind) for kind in ("draw", "buy", "play"))))


def _answers_notice(text: str, reply: dict[str, Any]) -> bool:
    """Whether a line can be the answer to a notice: a JSON object (a debug
    print is no answer) with no id, no 'ready' and no choice (a reply that
    lacks only its id is a reply)."""
    return (text.lstrip().startswith("{") and reply.get("id") is None
            and reply.get("type") != "ready"
            and not any(_answers(reply, kind) for kind in ("draw", "buy", "play")))


def _answered(exchange: Exchange) -> bool:
    """Whether the request got a reply carrying its own id."""
    return exchange.reply is not None and _head(exchange.reply).get("id") == exchange.request_id


@dataclass(frozen=True)
class _Extra:
    """A line the arena did not take for the answer to a request, or a copy."""

    text: str
    reply: dict[str, Any]
    rid: Any
    copy: bool                      # the same text as a reply sent before
    pending: Exchange | None        # the request waiting when it came
    notice: str | None = None       # the type of the notice it answered
    taken: bool = False             # taken for the reply to ``pending``

    def issue(self, kinds: dict[int, str], behind: set[int | None]) -> Issue:
        """What the line was; ``kinds`` of the requests by id, ``behind``:
        the ids of those whose reply was taken from a notice's answer."""
        line, rid, pending = _short(self.text), self.rid, self.pending
        number = isinstance(rid, int) and not isinstance(rid, bool)
        if self.notice is not None:
            return Issue(NOTICE, f"it replied to {NOTICES[self.notice]}, which bots must never "
                         "answer: only 'start' and 'request' are answered (docs/PROTOCOL.md, "
                         "'event')", line, self.taken)
        if number and rid in behind and not self.copy:
            return Issue(BEHIND, f"its reply to request {rid}, read after its answer to a notice "
                         "had been taken for it", line)
        if (pending is not None and number and _answers(self.reply, pending.kind)
                and not _answered(pending)):
            return Issue(WRONG_ID, f"a {pending.kind} reply carried id {rid} while request "
                         f"{pending.request_id} was waiting: echo the request's id, do not count "
                         "requests yourself (docs/PROTOCOL.md, 'request')", line)
        if self.copy:
            return Issue(DUPLICATE, "a reply sent twice: write exactly one line per request "
                         "(docs/PROTOCOL.md, 'Lines, streams and processes')", line)
        if "buy" in self.reply and kinds.get(rid) != "buy":
            return Issue(UNASKED, UNASKED_BUY, line)
        if number and rid in kinds:
            return Issue(SECOND, f"a second reply to request {rid}, which it had answered: write "
                         "exactly one line per request (docs/PROTOCOL.md, 'Lines, streams and "
                         "processes')", line)
        if pending is not None and number:
            return Issue(WRONG_ID, f"the reply carried id {rid} while request {pending.request_id} "
                         "was waiting: echo the request's id (docs/PROTOCOL.md, 'request')", line)
        return Issue(UNSOLICITED, "a line written while no request was waiting: write only "
                     "replies to stdout, one per request (docs/PROTOCOL.md, 'Lines, streams and "
                     "processes')", line)


_PLAY_FIELDS = ("go_down", "lay_off", "swap", "steps", "discard")


def _answers(reply: dict[str, Any], kind: str) -> bool:
    """Whether a line has the field a reply to a ``kind`` request needs."""
    if kind == "play":
        return any(k in reply for k in _PLAY_FIELDS)
    return kind in reply
