"""Stored matches as ranked games for :mod:`arena.ranking`, and (kept as the
benchmark's baseline) the old sequential TrueSkill.

``rated_games`` and ``assess_matches`` are what the leaderboard uses: each
hand is one ranked game (``hand_games``, the default), or each match is
(``match_games``); the duplicate group is the match's table and deal, and
the TrueSkill posterior is fitted to all the games at once.  A forfeited
seat ranks last in every hand of its match: a forfeit loses the match, so
it loses all of it.  Forfeited seats of one match tie with each other in
every game (``forfeit_ranks``): after a forfeit the arena plays the seat on
with stand-in moves, which must not order one forfeiter above another.  ``rate`` below is the
sequential update arena used before; its result depends on the order.

Each match is a free-for-all of its seats: one team of one player per seat,
ranked by place. The rank is read from the places of the seats that did not
forfeit and from ``forfeited`` alone, never from a forfeited seat's place:
places stored by earlier versions ordered forfeited seats by their stand-in
totals, and they must rank as new ones do.

Matches are processed in schedule order (``schedule_index``), never in the
order they completed, so ``--jobs 1`` and ``--jobs 8`` and a resumed run all
give the same ratings.

The ``trueskill`` package is used through an explicit :class:`trueskill.TrueSkill`
environment; its global environment is never set up or consulted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ...ranking.games import Game, forfeit_ranks
from ..config.model import RATE_HANDS, RATE_MATCHES
from ..results.database import StoredMatch

if TYPE_CHECKING:  # numpy and trueskill load when a rating is computed, not with the tournament runner
    import trueskill

    from ...ranking import Assessment

__all__ = ["DRAW_PROBABILITY", "assess_matches", "conservative", "duplicate_group", "hand_games", "make_env",
           "games_of", "hand_games_of", "match_games", "match_ranks", "rate", "rated_games"]

#: Probability that two seats finish on equal totals. Totals are sums of card
#: penalties over several hands, so exact ties are uncommon; 5% leaves room
#: for them without treating near-misses as draws.
DRAW_PROBABILITY = 0.05


def make_env(mu: float = 25.0, sigma: float | None = None, beta: float | None = None,
             tau: float | None = None, draw_probability: float = DRAW_PROBABILITY) -> trueskill.TrueSkill:
    """The TrueSkill environment used for arena ratings (the package's usual
    defaults scaled to ``mu``: sigma = mu/3, beta = sigma/2, tau = sigma/100)."""
    sigma = mu / 3 if sigma is None else sigma
    beta = sigma / 2 if beta is None else beta
    tau = sigma / 100 if tau is None else tau
    # lazy: loaded when a rating is computed, not by arena.cli (tests/test_lean_imports.py REPORTING)
    import trueskill

    return trueskill.TrueSkill(mu=mu, sigma=sigma, beta=beta, tau=tau,
                               draw_probability=draw_probability, backend=None)


def conservative(rating: trueskill.Rating) -> float:
    """The leaderboard's sort key: mu - 3 sigma."""
    return rating.mu - 3 * rating.sigma


def match_ranks(m: StoredMatch) -> list[int]:
    """TrueSkill ranks (0 best) of the seats: dense ranks of the places of the
    seats that finished, every forfeited seat tied on the rank after them."""
    return list(forfeit_ranks(m.places, m.forfeited))


def duplicate_group(match_id: str, deal: int) -> str:
    """The table and deal of a match (``t003-d0``): the rotations of one
    duplicate deal share it (as ``ScheduleEntry.group``)."""
    return match_id.rsplit("-r", 1)[0] + f"-d{deal}"


def match_game(match_id: str, deal: int, bots: Sequence[str], places: Sequence[int],
               forfeited: Sequence[bool]) -> Game:
    return Game(tuple(bots), forfeit_ranks(places, forfeited), duplicate_group(match_id, deal), match_id)


def match_games(matches: Iterable[StoredMatch]) -> list[Game]:
    """One ranked game per match with two seats or more."""
    return [match_game(m.match_id, m.deal, m.bots, m.places, m.forfeited)
            for m in matches if len(m.bots) >= 2]


def hand_games_of(match_id: str, deal: int, bots: Sequence[str], forfeited: Sequence[bool],
                  hand_scores: Sequence[Sequence[int]]) -> list[Game]:
    """One ranked game per hand of a match: lower hand score first, equal
    scores tie, forfeited seats last, tied with each other."""
    group = duplicate_group(match_id, deal)
    players = tuple(bots)           # one tuple for the match's hands: a big tournament holds them all
    games = []
    for h, scores in enumerate(hand_scores, start=1):
        games.append(Game(players, forfeit_ranks(scores, forfeited), group, f"{match_id}-h{h:02d}"))
    return games


def hand_games(matches: Iterable[StoredMatch]) -> list[Game]:
    """Every hand of every match with two seats or more (``hand_games_of``)."""
    return [g for m in matches if len(m.bots) >= 2
            for g in hand_games_of(m.match_id, m.deal, m.bots, m.forfeited, m.hand_scores)]


def games_of(match_id: str, deal: int, bots: Sequence[str], places: Sequence[int], forfeited: Sequence[bool],
             hand_scores: Sequence[Sequence[int]], rating: str = RATE_HANDS) -> list[Game]:
    """The games one match gives under ``rating`` (the tournament's ``rating:``)."""
    if len(bots) < 2:
        return []
    if rating == RATE_HANDS:
        return hand_games_of(match_id, deal, bots, forfeited, hand_scores)
    if rating == RATE_MATCHES:
        return [match_game(match_id, deal, bots, places, forfeited)]
    raise ValueError(f"unknown rating {rating!r}")


def rated_games(matches: Iterable[StoredMatch], rating: str = RATE_HANDS) -> list[Game]:
    """The games TrueSkill is fitted to, ``rating`` being ``hands`` or ``matches``."""
    return [g for m in matches
            for g in games_of(m.match_id, m.deal, m.bots, m.places, m.forfeited, m.hand_scores, rating)]


def assess_matches(matches: Iterable[StoredMatch], bots: Sequence[str] = (), confidence: float = 0.95,
                   seed: int = 0, rating: str = RATE_HANDS) -> Assessment:
    """Batch TrueSkill of the matches, with bootstrap intervals (``arena.ranking.assess``)."""
    # lazy: arena.ranking.confidence loads numpy (tests/test_lean_imports.py REPORTING)
    from ...ranking import assess

    return assess(rated_games(matches, rating), bots, confidence=confidence, seed=seed)


def _schedule_order(matches: Iterable[StoredMatch]) -> list[StoredMatch]:
    ordered = sorted(matches, key=lambda m: (m.schedule_index, m.match_id))
    for a, b in zip(ordered, ordered[1:]):
        if a.schedule_index == b.schedule_index:
            raise ValueError(f"matches {a.match_id!r} and {b.match_id!r} share schedule index {a.schedule_index}")
    return ordered


def rate(matches: Iterable[StoredMatch], env: trueskill.TrueSkill | None = None,
         bots: Sequence[str] = ()) -> dict[str, trueskill.Rating]:
    """Ratings after every match, processed in schedule order.

    ``bots`` adds bots that should have a (prior) rating even without a match.
    """
    env = env or make_env()
    ratings: dict[str, trueskill.Rating] = {b: env.create_rating() for b in bots}
    for m in _schedule_order(matches):
        if len(set(m.bots)) != len(m.bots):
            # Schedules never seat a bot twice; a free-for-all with one player
            # on two seats would rate it against itself.
            raise ValueError(f"match {m.match_id!r}: a bot appears twice: {m.bots}")
        if len(m.bots) != len(m.places) or len(m.bots) != len(m.forfeited):
            raise ValueError(f"match {m.match_id!r}: bots, places and forfeited differ in length")
        if len(m.bots) < 2:
            continue
        groups = [(ratings.get(b) or env.create_rating(),) for b in m.bots]
        rated = env.rate(groups, ranks=match_ranks(m))
        for b, (r,) in zip(m.bots, rated):
            ratings[b] = r
    return ratings
