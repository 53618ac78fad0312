"""A measured figure and its aim: what every benchmark's ``results()`` returns,
and what ``benchmarks/all.py`` puts in its table.

A figure keeps all its samples (one per interleaved pair, or per run), so the
table can show the median with its min and max; ``met`` compares the median
with the aim (None when the figure is informational and has no aim).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Figure:
    name: str
    samples: tuple[float, ...]
    unit: str                    # written after each number: "us", "B", "MB", "x", "%", ""
    aim: float | None            # None: informational, no target
    higher_is_better: bool       # the aim is a floor (>=) or a ceiling (<=)
    command: str                 # the command that measures this figure alone
    fmt: str = ",.1f"            # format of one number

    def __post_init__(self) -> None:
        if not self.samples:
            raise ValueError(f"{self.name}: no samples")

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def met(self) -> bool | None:
        if self.aim is None:
            return None
        return self.median >= self.aim if self.higher_is_better else self.median <= self.aim

    def number(self, value: float) -> str:
        if self.unit == "%":
            return f"{format(value * 100, self.fmt)} %"
        return f"{format(value, self.fmt)}{' ' + self.unit if self.unit else ''}"

    @property
    def target(self) -> str:
        if self.aim is None:
            return "(none)"
        return f"{'>=' if self.higher_is_better else '<='} {self.number(self.aim)}"

    @property
    def measured(self) -> str:
        """The median [min .. max]."""
        return (f"{self.number(self.median)} "
                f"[{format(min(self.samples) * (100 if self.unit == '%' else 1), self.fmt)} .. "
                f"{format(max(self.samples) * (100 if self.unit == '%' else 1), self.fmt)}]")

    def to_json(self) -> dict[str, Any]:
        return {"figure": self.name, "target": self.target, "aim": self.aim,
                "higher_is_better": self.higher_is_better, "unit": self.unit,
                "median": self.median, "min": min(self.samples), "max": max(self.samples),
                "samples": list(self.samples), "met": self.met, "command": self.command}
