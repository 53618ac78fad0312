"""Per-bot decision-time statistics."""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass
class DecisionStats:
    """Times (seconds) of the decisions a bot answered, plus its timeouts.

    A match has at most a few thousand decisions, so the raw list is kept and
    percentiles are exact (nearest-rank).
    """

    times: list[float] = field(default_factory=list)
    timeouts: int = 0

    def record(self, elapsed: float) -> None:
        self.times.append(elapsed)

    @property
    def count(self) -> int:
        return len(self.times)

    @property
    def total(self) -> float:
        return math.fsum(self.times)

    @property
    def mean(self) -> float | None:
        return self.total / len(self.times) if self.times else None

    @property
    def max(self) -> float | None:
        return max(self.times) if self.times else None

    def percentile(self, q: float) -> float | None:
        """Nearest-rank percentile, ``q`` in [0, 100]."""
        if not 0 <= q <= 100:
            raise ValueError("q must be within [0, 100]")
        if not self.times:
            return None
        ordered = sorted(self.times)
        rank = max(1, math.ceil(q / 100 * len(ordered)))
        return ordered[rank - 1]

    @property
    def p95(self) -> float | None:
        return self.percentile(95)

    def as_dict(self) -> dict[str, float | int | None]:
        return {"count": self.count, "timeouts": self.timeouts, "total": self.total,
                "mean": self.mean, "max": self.max, "p95": self.p95}
