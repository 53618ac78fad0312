"""A league table's matches, as a tournament's schedule entries.

Table ``n`` (numbered as the register records them) is played in its ``k``
seatings of one balanced block (``pairing.seating``: every version in
every seat once, neighbours balanced over the blocks) on one duplicate
deal, whose seed derives from the league's key (or seed) and ``n`` alone
(``table_seed``: SHA-256, one-way, so the seeds of tables played, which
every stored match shows, say nothing of the next table's without the
league's seed).  So a table's matches follow from its register row, and a
run that stopped part-way through one plays exactly the rotations it lacks.

Match ids are ``L000042-r1`` (table 42, rotation 1): the rotations of one
table share their deal and their duplicate group (``ratings.duplicate_group``).
A match's schedule index is ``8 n + r``, unique for tables of up to 8.
"""

from __future__ import annotations

from ..shanghai.ruleset import MAX_PLAYERS
from ..tournament.pairing.schedule import ScheduleEntry, derive_seed
from ..tournament.pairing.seating import design, seatings
from .register import TableRow

__all__ = ["block_for", "dealt_entries", "table_entries", "table_seed"]


def block_for(table_no: int, k: int) -> int:
    """The seating block of table ``table_no``: they take turns, so that the
    neighbours of the league's tables balance as a tournament's do."""
    return table_no % len(design(k))


def table_seed(league_seed: int | str, table_no: int) -> int:
    """The seed of table ``table_no``'s deal."""
    return derive_seed(league_seed, "league", table_no)


def table_entries(table: TableRow, league_seed: int | str) -> list[ScheduleEntry]:
    """Every match of ``table``, rotation 0 first."""
    return dealt_entries(table, table_seed(league_seed, table.table_no))


def dealt_entries(table: TableRow, seed: int) -> list[ScheduleEntry]:
    """Every match of ``table`` dealt from ``seed`` (its ``table_seed``, or the one an export carries)."""
    return [ScheduleEntry(index=MAX_PLAYERS * table.table_no + r, match_id=f"L{table.table_no:06d}-r{r}",
                          table=table.table_no, rotation=r, deal=0, seats=seats, seed=seed)
            for r, seats in enumerate(seatings(table.seats, table.block))]
