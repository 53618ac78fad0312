"""What a settling run decided before each round: stored by the results
database (``results.database``) before the round is played, so that a resumed
run replays it instead of assessing again."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["RoundDecision"]


@dataclass(frozen=True)
class RoundDecision:
    """What was decided before round ``round_no`` of a tournament played in
    rounds, from the stored results of the rounds before it (the first
    ``matches`` matches, from schedule index 0 up to ``start_index``).

    ``stop``: the stopping rule stopped the run here ("settled"; no round
    follows), else None.  ``tables``: the round's tables, bots by name (a
    Swiss round's are chosen; a round robin's are the config's: empty).
    ``next_look``: the stopping rule's ``next_look`` after the decision.
    ``assessment``: what the rule and the tables were decided from (order,
    margins, duplicate groups, unsettled pairs; None when the round was not
    assessed, as the first ``deals`` rounds are not)."""

    round_no: int
    start_index: int
    matches: int
    next_look: int
    stop: str | None = None
    tables: tuple[tuple[str, ...], ...] = ()
    assessment: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "tables", tuple(tuple(t) for t in self.tables))

    @property
    def to_settle(self) -> int | None:
        """Adjacent pairs the stopping rule had yet to tell apart, at its own
        level (None: not assessed); ``unsettled`` where not stored."""
        if self.assessment is None:
            return None
        value = self.assessment.get("to_settle")
        return value if isinstance(value, int) else self.unsettled

    @property
    def leader(self) -> tuple[str, float] | None:
        """The assessment's first bot and its rating (None: not assessed, or not stored)."""
        if self.assessment is None or not self.assessment.get("order"):
            return None
        mu = self.assessment.get("leader_mu")
        return (str(self.assessment["order"][0]), mu) if isinstance(mu, float) else None

    @property
    def unsettled(self) -> int | None:
        """Adjacent pairs not separated at the assessment (None: not assessed)."""
        if self.assessment is None:
            return None
        value = self.assessment.get("unsettled")
        return value if isinstance(value, int) else None
