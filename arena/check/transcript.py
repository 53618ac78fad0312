"""What a bot wrote and was sent, line by line, read from the process layer's
debug log (``>>`` lines written to the bot, ``<<`` lines read from it).

The match runner forgives a bot that writes lines nobody asked for (they are
thrown away) and replies carrying an earlier request's id (taken for late
answers).  A tournament must, but a conformance check must not: a reply sent
twice, a buy nobody asked for or ids the bot counts itself are bugs, and the
transcript is where they show.
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


@dataclass(frozen=True)
class Issue:
    """A line the arena ignored, and what it means."""

    what: str           # duplicate, unasked buy, wrong id, unsolicited
    detail: str         # one sentence naming the rule
    line: str           # the line, shortened


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


def read(lines: list[tuple[str, str]], earlier: set[str] | None = None
         ) -> tuple[list[Exchange], list[Issue]]:
    """The exchanges in order, and the lines the arena ignored.  ``earlier``
    holds the replies of earlier matches (a late copy of one is a duplicate);
    the replies read here are added to it."""
    seen = earlier if earlier is not None else set()
    exchanges: list[Exchange] = []
    issues: list[Issue] = []
    pending: Exchange | None = None
    kinds: dict[int, str] = {}
    for direction, text in lines:
        if direction == OUT:
            head = _head(text)
            if head.get("type") == "start":
                pending = Exchange(None, "start", text)
                exchanges.append(pending)
            elif head.get("type") == "request" and isinstance(head.get("id"), int):
                pending = Exchange(head["id"], str(head.get("kind")), text)
                kinds[head["id"]] = pending.kind
                exchanges.append(pending)
            continue
        if not text.strip():
            continue
        reply = _head(text)
        rid = reply.get("id")
        judged = pending is not None and (
            pending.request_id is None or rid == pending.request_id or not isinstance(rid, int)
            or isinstance(rid, bool) or rid >= pending.request_id)
        copy = text.strip() in seen and (pending is None or rid != pending.request_id)
        if copy or not judged:
            issues.append(_ignored(text, reply, rid, seen, kinds, pending))
        if judged and pending is not None:
            # The arena took this line for the answer (a fault if it is wrong).
            pending.reply = text
            seen.add(text.strip())
            pending = None
    return exchanges, issues


def _ignored(text: str, reply: dict[str, Any], rid: Any, seen: set[str],
             kinds: dict[int, str], pending: Exchange | None) -> Issue:
    line = _short(text)
    if pending is not None and isinstance(rid, int) and _answers(reply, pending.kind):
        return Issue("wrong id", f"a {pending.kind} reply carried id {rid} while request "
                     f"{pending.request_id} was waiting: echo the request's id, do not count "
                     "requests yourself (docs/PROTOCOL.md, 'request')", line)
    if text.strip() in seen:
        return Issue("duplicate", "a reply sent twice: write exactly one line per request "
                     "(docs/PROTOCOL.md, 'Lines, streams and processes')", line)
    if "buy" in reply and (not isinstance(rid, int) or kinds.get(rid) != "buy"):
        return Issue("unasked buy", UNASKED_BUY, line)
    if pending is not None and isinstance(rid, int):
        return Issue("wrong id", f"the reply carried id {rid} while request {pending.request_id} "
                     "was waiting: echo the request's id (docs/PROTOCOL.md, 'request')", line)
    return Issue("unsolicited", "a line written while no request was waiting: write only replies "
                 "to stdout, one per request (docs/PROTOCOL.md, 'Lines, streams and processes')",
                 line)


_PLAY_FIELDS = ("go_down", "lay_off", "swap", "steps", "discard")


def _answers(reply: dict[str, Any], kind: str) -> bool:
    """Whether a line has the field a reply to a ``kind`` request needs."""
    if kind == "play":
        return any(k in reply for k in _PLAY_FIELDS)
    return kind in reply
