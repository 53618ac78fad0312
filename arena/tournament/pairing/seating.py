"""Who sits where at a table: seats and neighbours balanced over the tournament.

Play goes left in Shanghai, so the bot in seat ``s + 1`` (mod the table
size ``k``) plays right after the bot in seat ``s``: it sees that bot's
discards first, as its upcard, and has the first right to buy them.  Sitting
after a weak player is worth points.  Rotating one seat order around a table
(what arena did before ``seating: balanced``) gives every bot every seat, so
seat luck cancels over a duplicate deal, but it keeps the list's cyclic
order: a bot always sat after the same neighbour, and two copies of one
program were ranked apart by where they were listed.

A **block** is ``k`` seatings of one table, played on one duplicate deal:
a Latin square (row ``r`` is the seating ``r``, entry ``s`` the table
position, 0 to ``k - 1``, of the bot in seat ``s``), so every bot sits in
every seat once per deal.  A **design** is ``k - 1`` blocks whose ``k(k-1)``
seatings put every bot directly after every other bot exactly ``k`` times.

The designs come from a group ``G`` of order ``k`` on the table positions:
block ``j`` has a cyclic sequence ``b`` of the group's elements, and row
``r`` seats ``r^-1 b_s`` in seat ``s``.  Then ``y`` sits directly after
``x`` in that block as often as ``x^-1 y`` occurs among the quotients
``b_s^-1 b_(s+1)``, and the sequences below were found (by an exhaustive
search) so that over the ``k - 1`` blocks every non-identity quotient
occurs exactly ``k`` times.  For a prime ``k`` they are the multiples
``b_s = s j``, the rotations of the cycle ``x -> x + j``, and then every
bot also sits exactly ``k`` times at every distance after every other.  For
``k = 4`` the group is ``Z2 x Z2`` (``Z4`` has no such design, nor has any
set of ``k - 1`` rotated cycles for 4 or 6 seats); for 6 and 8 it is
``Z6`` and ``Z8``, exact for the seat directly after (and directly before);
further on, 4 to 8 times instead of 6 (6 seats) and 2 to 20 instead of 8
(8 seats): no better design was found by the search.

The table of deal ``d`` plays block ``(d + offset) mod (k - 1)``, so every
``k - 1`` consecutive deals of a table play the whole design: exact balance
at no extra matches.  The offsets of the tables are chosen greedily
(:class:`NeighbourBalance`) so that the deals left over, when a table's
deals are not a multiple of ``k - 1``, balance across the tables.
``seating: rotate`` keeps the old single block: the rotations of the listed
order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache

from ..config.model import BALANCED, ROTATE, SEATINGS

__all__ = ["BALANCED", "ROTATE", "SEATINGS", "design", "seatings", "NeighbourBalance", "balanced_offsets",
           "successor_counts", "neighbour_summary"]


Block = tuple[tuple[int, ...], ...]

# (group, the cyclic sequences b of its blocks), per table size.  "cyclic" is
# Z_k (x + y mod k), "xor" is Z2 x Z2 (x ^ y).  tests/test_seating.py checks
# every count the module docstring promises.
_SEQUENCES: dict[int, tuple[str, tuple[tuple[int, ...], ...]]] = {
    2: ("cyclic", ((0, 1),)),
    3: ("cyclic", ((0, 1, 2), (0, 2, 1))),
    4: ("xor", ((0, 1, 2, 3), (0, 1, 3, 2), (0, 2, 1, 3))),
    5: ("cyclic", ((0, 1, 2, 3, 4), (0, 2, 4, 1, 3), (0, 3, 1, 4, 2), (0, 4, 3, 2, 1))),
    6: ("cyclic", ((0, 1, 2, 3, 5, 4), (0, 2, 1, 5, 4, 3), (0, 2, 4, 1, 5, 3), (0, 1, 4, 3, 5, 2),
                   (0, 1, 4, 5, 3, 2))),
    7: ("cyclic", tuple(tuple(s * j % 7 for s in range(7)) for j in range(1, 7))),
    8: ("cyclic", ((0, 1, 2, 3, 4, 6, 7, 5), (0, 7, 6, 5, 4, 3, 2, 1), (0, 5, 2, 7, 4, 1, 6, 3),
                   (0, 2, 5, 1, 7, 3, 6, 4), (0, 2, 6, 4, 7, 3, 1, 5), (0, 2, 4, 6, 1, 3, 7, 5),
                   (0, 1, 3, 4, 2, 6, 7, 5))),
}


def _group(name: str, k: int) -> tuple[Callable[[int, int], int], Callable[[int], int]]:
    if name == "xor":
        return (lambda x, y: x ^ y), (lambda x: x)
    return (lambda x, y: (x + y) % k), (lambda x: -x % k)


@cache
def design(k: int, seating: str = BALANCED) -> tuple[Block, ...]:
    """The blocks of a table of ``k`` seats: ``k - 1`` for ``balanced``
    (one for 2 seats), the one block of rotations for ``rotate``: its row
    ``r`` seats position ``(s - r) mod k`` in seat ``s``."""
    if k < 2:
        raise ValueError(f"a table has at least 2 seats, not {k}")
    if seating == ROTATE:
        return (tuple(tuple((s - r) % k for s in range(k)) for r in range(k)),)
    if seating != BALANCED:
        raise ValueError(f"seating must be one of {', '.join(SEATINGS)}, not {seating!r}")
    if k not in _SEQUENCES:
        raise ValueError(f"no balanced seating is known for tables of {k} seats (2 to {max(_SEQUENCES)})")
    name, sequences = _SEQUENCES[k]
    mul, inv = _group(name, k)
    return tuple(tuple(tuple(mul(inv(r), b[s]) for s in range(k)) for r in range(k)) for b in sequences)


def seatings(bots: Sequence[str], block: int, seating: str = BALANCED) -> list[tuple[str, ...]]:
    """The ``k`` seatings (seat 0 first) of the table ``bots`` (in table
    order) on one deal: block ``block`` of the design, taken mod its size."""
    blocks = design(len(bots), seating)
    return [tuple(bots[p] for p in row) for row in blocks[block % len(blocks)]]


def successor_counts(seated: Sequence[Sequence[str]]) -> dict[tuple[str, str], int]:
    """How often ``b`` sat directly after ``a`` (the seat after, mod the
    table size), for each ordered pair ``(a, b)``, over the seatings given."""
    counts: dict[tuple[str, str], int] = {}
    for seats in seated:
        k = len(seats)
        for s in range(k):
            pair = (seats[s], seats[(s + 1) % k])
            counts[pair] = counts.get(pair, 0) + 1
    return counts


def neighbour_summary(seated: Sequence[Sequence[str]], seating: str) -> str | None:
    """One line on how balanced the neighbours of ``seated`` are (None for
    tables of 2, where each bot sits after the other every time)."""
    if not seated or len(seated[0]) < 3:
        return None
    k = len(seated[0])
    after = successor_counts(seated)
    shared: dict[tuple[str, str], int] = {}
    for seats in seated:
        for a in seats:
            for b in seats:
                if a != b:
                    shared[(a, b)] = shared.get((a, b), 0) + 1
    shares = [after.get(pair, 0) / n for pair, n in shared.items()]
    fair = f"1 of every {k - 1}"
    if all(abs(s * (k - 1) - 1) < 1e-9 for s in shares):
        return f"neighbours: each bot sits directly after each bot it meets in exactly {fair} of their matches " \
               f"(seating: {seating})"
    return (f"neighbours: a bot sits directly after a bot it meets in {min(shares):.0%} to {max(shares):.0%} of "
            f"their matches, against a fair {fair} (seating: {seating})")


class NeighbourBalance:
    """Chooses each table's block so that neighbours stay balanced over the
    tournament, whatever its tables: the offsets of a round robin's or a
    gauntlet's tables (:func:`balanced_offsets`), and the block of each
    table of each Swiss round.

    It keeps, for each ordered pair ``(a, b)`` and each number ``L`` of
    deals in ``lengths``, how often ``b`` sat directly after ``a`` in the
    first ``L`` deals of every table, minus how often it would in a perfectly
    balanced schedule (``1 / (k - 1)`` of their seatings together); and
    picks the block that keeps the sum of the squares smallest, ties going
    to the lowest block.  Only the deals left over after a multiple of
    ``k - 1`` can be out of balance: a round robin of ``deals`` deals needs
    only ``L = deals mod (k - 1)``; one played in rounds, that may stop after
    any, all of ``1`` to ``k - 2``."""

    def __init__(self, k: int, seating: str = BALANCED, lengths: Sequence[int] = (1,)) -> None:
        self.k = k
        self.blocks = design(k, seating)
        self.lengths = tuple(lengths) or (1,)
        self.excess: list[dict[tuple[str, str], float]] = [{} for _ in self.lengths]
        # per offset and length: successor counts by table position over blocks o .. o + L - 1
        self._runs = [[self._run(o, length) for length in self.lengths] for o in range(len(self.blocks))]

    def _run(self, offset: int, length: int) -> list[tuple[int, int, float]]:
        c = len(self.blocks)
        counts = {(i, j): 0 for i in range(self.k) for j in range(self.k) if i != j}
        for d in range(length):
            for row in self.blocks[(offset + d) % c]:
                for s in range(self.k):
                    counts[row[s], row[(s + 1) % self.k]] += 1
        fair = length * self.k / (self.k - 1)
        return [(i, j, n - fair) for (i, j), n in counts.items()]

    def choose(self, bots: Sequence[str]) -> int:
        """The block (offset) for the table ``bots`` that keeps the balance
        best; the balance is updated as if it were played."""
        return self.choose_order([bots])[1]

    def choose_order(self, orders: Sequence[Sequence[str]]) -> tuple[Sequence[str], int]:
        """The table order and block, among ``orders`` of one table's bots
        (the first wins a tie), that keep the balance best; counted in as
        :meth:`choose` does.  A prime table's block seats a pair ``k``
        times or not at all, so a Swiss round, whose tables are new each
        time, balances better when it may also choose which bot is which
        table position."""
        best, best_cost = (orders[0], 0), float("inf")
        for order in orders:
            for offset in range(len(self.blocks)):
                cost = self._cost(order, offset)
                if cost < best_cost - 1e-9:
                    best, best_cost = (order, offset), cost
        self.add(*best)
        return best

    def _cost(self, bots: Sequence[str], offset: int) -> float:
        cost = 0.0
        for excess, run in zip(self.excess, self._runs[offset]):
            for i, j, more in run:
                cost += (excess.get((bots[i], bots[j]), 0.0) + more) ** 2
        return cost

    def add(self, bots: Sequence[str], offset: int, sign: float = 1.0) -> None:
        """Count the table ``bots`` playing from block ``offset`` in (``sign``
        -1: take it out again)."""
        for excess, run in zip(self.excess, self._runs[offset]):
            for i, j, more in run:
                pair = (bots[i], bots[j])
                excess[pair] = excess.get(pair, 0.0) + sign * more

    def add_seated(self, seated: Sequence[Sequence[str]]) -> None:
        """Count seatings already played (a Swiss run's earlier rounds) into
        the balance of ``lengths[0]``: each bot's neighbour before it,
        against ``1 / (k - 1)`` of every other bot at its table."""
        excess = self.excess[0]
        for seats in seated:
            k = len(seats)
            for s, b in enumerate(seats):
                before = seats[s - 1]
                excess[(before, b)] = excess.get((before, b), 0.0) + 1.0
                for a in seats:
                    if a != b:
                        excess[(a, b)] = excess.get((a, b), 0.0) - 1.0 / (k - 1)


def balanced_offsets(tables: Sequence[Sequence[str]], k: int, seating: str = BALANCED,
                     lengths: Sequence[int] = (1,), passes: int = 3) -> list[int]:
    """Each table's block offset: chosen greedily in the order given, then
    each chosen again, given all the others, for up to ``passes`` passes
    (a pass that changes none ends it).  Deterministic: the same tables
    give the same offsets on every machine."""
    balance = NeighbourBalance(k, seating, lengths)
    offsets = [balance.choose(bots) for bots in tables]
    if len(balance.blocks) < 2:
        return offsets
    for _ in range(passes):
        changed = False
        for t, bots in enumerate(tables):
            balance.add(bots, offsets[t], -1.0)
            chosen = balance.choose(bots)
            changed |= chosen != offsets[t]
            offsets[t] = chosen
        if not changed:
            break
    return offsets
