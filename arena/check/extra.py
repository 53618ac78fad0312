"""Lines a bot wrote that answered no request, over a whole ``arena check``.

A tournament throws them away (a reply sent twice, a buy nobody asked for, a
second reply to an answered request, a line between requests) or takes them
for late answers, with no fault: the bot plays on, confused.  The check
fails them, and names each bug once: the first step it shows in says what it
is and how often it happened in the whole check (``every reply is sent
twice``), each later step that shows it only ``again``, and the text report
shows a run of those as one line.  The steps are worded when the check is
over, as only then is it known how often a bug happened.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..match import TIMEOUT
from ..words import plural
from .report import AGAIN, CheckStep
from .transcript import BEHIND, DUPLICATE, NOTICE, SECOND, UNASKED, UNSOLICITED, WRONG_ID, Exchange, Issue, read

# What each kind of extra line is, in a few words, for the steps after the first.
HEADLINES = {
    DUPLICATE: "a reply sent twice",
    UNASKED: "a buy nobody asked for",
    SECOND: "a second reply to a request",
    WRONG_ID: "a reply with the wrong id",
    UNSOLICITED: "a line written while no request was waiting",
    NOTICE: "it replies to notices",
    BEHIND: "a reply read after its answer to a notice",
}
EVERY_REPLY_TWICE = "every reply is sent twice"
ADVICE_ONCE = "write exactly one line per request (docs/PROTOCOL.md, 'Lines, streams and processes')"


@dataclass
class ExtraLines:
    """Every reply seen so far (a late copy of one is a duplicate), and the
    steps that failed for extra lines, to be worded at the end."""

    seen: set[str] = field(default_factory=set)
    replies: int = 0                                     # replies read, 'ready' included, not copies
    found: Counter[str] = field(default_factory=Counter)  # extra lines by kind
    steps: Counter[str] = field(default_factory=Counter)  # steps that showed each kind
    flagged: list[tuple[CheckStep, list[Issue]]] = field(default_factory=list)

    def read(self, lines: list[tuple[str, str]]) -> tuple[list[Exchange], list[Issue]]:
        """``transcript.read`` of one step's lines, counted."""
        exchanges, issues = read(lines, self.seen)
        self.replies += sum(1 for e in exchanges if e.reply is not None and not e.copied)
        self.found.update(i.what for i in issues)
        self.steps.update({i.what for i in issues})
        return exchanges, issues

    def new_process(self) -> None:
        """The bot's process was killed: the next one cannot send a copy of
        what this one wrote, though it may write the same lines."""
        self.seen.clear()

    def flag(self, step: CheckStep, issues: list[Issue]) -> None:
        """``step`` failed for ``issues``: word it at the end."""
        self.flagged.append((step, issues))

    def systematic(self) -> bool:
        """Nearly every reply came twice (not one copy among many replies)."""
        copies = self.found[DUPLICATE]
        return copies >= 3 and copies * 10 >= self.replies * 9

    def headline(self, what: str) -> str:
        return EVERY_REPLY_TWICE if what == DUPLICATE and self.systematic() else HEADLINES.get(what, what)

    def word(self) -> None:
        """The summaries of the flagged steps: the first of each kind in
        full, the later ones ``again``."""
        first: dict[str, str] = {}
        for step, issues in self.flagged:
            what = issues[0].what
            if what in first:
                step.summary = f"{AGAIN}{self.headline(what)} (first at '{first[what]}')"
                continue
            first[what] = step.name
            step.summary = self._in_full(issues[0])

    def _in_full(self, issue: Issue) -> str:
        what, n, steps = issue.what, self.found[issue.what], self.steps[issue.what]
        if what == DUPLICATE and self.systematic():
            return (f"{EVERY_REPLY_TWICE}: {n} lines were copies of a reply it had sent already, "
                    f"in {plural(steps, 'step')} of the check; {ADVICE_ONCE}")
        count = f"; {n} such lines in {plural(steps, 'step')} of the check" if n > 1 else ""
        return f"{what}: {issue.detail}{count}"


def caused_by(kind: str, excerpt: str | None, issues: list[Issue]) -> bool:
    """Whether a fault (its kind and the line refused) came of the extra
    lines: the line it refused is one of them (a copy of 'ready' taken for
    the reply), or it timed out after the bot's answer was thrown away."""
    if kind == TIMEOUT:
        return True
    text = (excerpt or "").removesuffix("...")[:100]
    return bool(text) and any(i.line.startswith(text) for i in issues)
