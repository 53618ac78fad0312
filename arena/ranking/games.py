"""The input of the ranking: ranked free-for-all games, independent of where they came from."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["Game", "canonical", "players_of", "draw_rate", "forfeit_ranks"]


@dataclass(frozen=True, slots=True)       # slots: a big tournament holds 200,000 of them (issue 34)
class Game:
    """One ranked free-for-all: a match, or one hand of a match.

    ``players`` in seat order; ``ranks[i]`` is ``players[i]``'s rank, 0 best,
    equal ranks a tie.  ``group`` is the duplicate-deal group (the rotations
    of one deal share it): intervals resample whole groups, because games
    dealt the same cards are not independent.  ``key`` is unique and fixes
    the order in which games are summed, so that the order they were stored
    or finished in cannot change a single bit of the result.
    """

    players: tuple[str, ...]
    ranks: tuple[int, ...]
    group: str
    key: str

    def __post_init__(self) -> None:
        if len(self.players) != len(self.ranks):
            raise ValueError(f"game {self.key!r}: {len(self.players)} players but {len(self.ranks)} ranks")
        if len(set(self.players)) != len(self.players):
            raise ValueError(f"game {self.key!r}: a player appears twice: {self.players}")


# Equal rank tuples are one object: a tournament's games have few distinct
# ones (75 orders with ties of 4 seats), so 200,000 hands share them instead
# of holding 72 bytes each.  Bounded, as 8 seats have many more orders.
_SHARED_RANKS: dict[tuple[int, ...], tuple[int, ...]] = {}
SHARED_RANKS = 4096


def forfeit_ranks(scores: Sequence[float], forfeited: Sequence[bool]) -> tuple[int, ...]:
    """Ranks (0 best, dense) of a game's seats: the seats that did not forfeit
    by ``scores``, lower first, equal scores tied; every forfeited seat on the
    one rank after them, whatever its score.  A forfeited seat's score is the
    arena's stand-in play (or a place stored by an earlier version, which
    ordered forfeited seats by it), never its bot's: it orders nothing, so
    forfeited seats tie, and a game every seat forfeited is a draw."""
    if not any(forfeited):          # most hands: the same ranks, without a generator's cost per seat
        clean = sorted(set(scores))
        ranks = tuple(map({s: i for i, s in enumerate(clean)}.__getitem__, scores))
    else:
        clean = sorted({s for s, f in zip(scores, forfeited) if not f})
        ranks = tuple(len(clean) if f else clean.index(s) for s, f in zip(scores, forfeited))
    shared = _SHARED_RANKS.get(ranks)
    if shared is None and len(_SHARED_RANKS) < SHARED_RANKS:
        shared = _SHARED_RANKS[ranks] = ranks
    return ranks if shared is None else shared


def canonical(games: Iterable[Game]) -> list[Game]:
    """The games sorted by key; two games with one key are an error."""
    ordered = sorted(games, key=lambda g: g.key)
    for a, b in zip(ordered, ordered[1:]):
        if a.key == b.key:
            raise ValueError(f"two games share the key {a.key!r}")
    return ordered


def players_of(games: Iterable[Game], extra: Sequence[str] = ()) -> list[str]:
    """Every player named in ``games`` or ``extra``, sorted."""
    return sorted({p for g in games for p in g.players} | set(extra))


def draw_rate(games: Iterable[Game]) -> tuple[int, int]:
    """(tied pairs, pairs) over every pair of seats of every game."""
    ties = pairs = 0
    for g in games:
        k = len(g.ranks)
        pairs += k * (k - 1) // 2
        for i in range(k):
            for j in range(i + 1, k):
                ties += g.ranks[i] == g.ranks[j]
    return ties, pairs
