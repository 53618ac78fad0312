"""The report of ``arena check``: one line per step, as text or JSON."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any

from ..process.errors import escaped

PASS, FAIL, WARN, SKIP = "PASS", "FAIL", "WARN", "SKIP"
AGAIN = "again: "            # a FAIL for a bug a step before named in full


def not_run(failed: str) -> str:
    """The summary of a step skipped because step ``failed`` failed."""
    return f"not run: step '{failed}' failed"


def _not_run_by(step: CheckStep) -> bool:
    return (step.status == SKIP and step.summary.startswith("not run: step '")
            and not (step.details or step.rule or step.request or step.reply))


def _again(step: CheckStep) -> bool:
    """A step that failed for a bug a step before it named in full (``extra.py``)."""
    return step.status == FAIL and step.summary.startswith(AGAIN)


def _repeats_shortened(steps: list[CheckStep]) -> list[CheckStep]:
    """The steps, each FAIL that says what an earlier one said in full
    shortened to one line naming it (the JSON keeps every word)."""
    first: dict[str, str] = {}
    out = []
    for s in steps:
        if s.status == FAIL and s.summary in first and not s.summary.startswith(AGAIN):
            out.append(CheckStep(s.name, FAIL, f"{AGAIN}the same as '{first[s.summary]}'"))
            continue
        if s.status == FAIL:
            first[s.summary] = s.name
        out.append(s)
    return out


def _run_end(steps: list[CheckStep], i: int) -> int:
    """The end of the run of steps from ``i`` the text report shows as one line."""
    s, j = steps[i], i + 1
    if _not_run_by(s) or _again(s):
        like = _not_run_by if _not_run_by(s) else _again
        while j < len(steps) and like(steps[j]) and steps[j].summary == s.summary:
            j += 1
    return j


@dataclass
class CheckStep:
    name: str
    status: str
    summary: str
    details: list[str] = field(default_factory=list)
    rule: str = ""                   # the rule a scenario exercises
    request: str = ""                # the request it is about, shortened
    reply: str = ""                  # the bot's reply line to it


@dataclass
class CheckReport:
    bot: str
    steps: list[CheckStep] = field(default_factory=list)
    stderr_logs: list[str] = field(default_factory=list)
    containment: str = ""            # what the bot ran under (sandbox or not)
    notes: list[str] = field(default_factory=list)   # what may make the check kinder than a tournament
    ignored_lines: int = 0           # lines the arena would have thrown away
    stderr_unkept: bool = False      # the bot wrote on stderr, into logs removed with the check

    @property
    def ok(self) -> bool:
        return all(s.status != FAIL for s in self.steps)

    def add(self, name: str, status: str, summary: str, details: list[str] | None = None,
            **more: str) -> CheckStep:
        step = CheckStep(name, status, summary, details or [], **more)
        self.steps.append(step)
        return step

    def counts(self) -> dict[str, int]:
        return {s: sum(1 for step in self.steps if step.status == s) for s in (PASS, WARN, SKIP, FAIL)}

    def verdict(self) -> str:
        failed = self.counts()[FAIL]
        return "PASS" if self.ok else f"FAIL ({failed} step{'s' if failed != 1 else ''} failed)"

    def _shown(self) -> list[CheckStep]:
        """The steps as the text report shows them: a run of steps skipped
        because one step failed is one line (after a failed start, 22 SKIP
        lines said the same thing), and so is a run of steps failed again
        for one bug (a bot that sends every reply twice); the JSON keeps
        every step."""
        steps = _repeats_shortened(self.steps)
        out: list[CheckStep] = []
        i = 0
        while i < len(steps):
            s = steps[i]
            j = _run_end(steps, i)
            if j - i < 2:
                out.append(s)
            else:
                n = j - i
                name = (f"the remaining {n} steps" if j == len(steps) and s.status == SKIP
                        else f"{n} steps, {s.name} to {steps[j - 1].name}")
                out.append(CheckStep(name, s.status, s.summary))
            i = j
        return out

    def lines(self) -> list[str]:
        out = [f"arena check: {self.bot}"]
        if self.containment:
            out.append(f"containment: {self.containment}")
        out += [f"note: {n}" for n in self.notes]
        shown = self._shown()
        width = max(len(s.name) for s in shown) if shown else 0
        pad = f"  {'':4}  {'':{width}}  "
        for s in shown:
            out.append(f"  {s.status:4}  {s.name:{width}}  {s.summary}")
            if s.rule:
                out.append(f"{pad}rule: {s.rule}")
            if s.request:
                out.append(f"{pad}request: {s.request}")
            if s.reply:
                out.append(f"{pad}reply: {s.reply}")
            out.extend(f"{pad}{d}" for d in s.details)
        counts = ", ".join(f"{n} {s}" for s, n in self.counts().items() if n)
        out = [escaped(line) for line in out]
        out.append(f"steps: {counts}; lines ignored: {self.ignored_lines}")
        out.append(f"result: {self.verdict()}")
        dirs = dict.fromkeys(os.path.dirname(p) for p in self.stderr_logs)
        for path in dirs:
            out.append(f"bot stderr logs: {path} (one per step)")
        if self.stderr_unkept:
            out.append("bot stderr logs: not kept (--log-dir DIR keeps them, one per step)")
        return out

    def to_json(self) -> dict[str, Any]:
        """For autograders: the same content, one object."""
        return {"bot": self.bot, "ok": self.ok, "result": self.verdict(),
                "containment": self.containment, "notes": self.notes, "counts": self.counts(),
                "ignored_lines": self.ignored_lines,
                "steps": [asdict(s) for s in self.steps],
                "stderr_logs": list(dict.fromkeys(self.stderr_logs))}


