"""The leaderboard, the head-to-head table and the seat effect, and their formats.

Each table is computed by a function taking a :class:`ResultStore` (or any
iterable of :class:`StoredMatch`) and formatted by a ``format_*`` function for
one of :data:`FORMATS`:

- ``plain``: tabulate's ``simple`` table, for terminals;
- ``markdown``: tabulate's ``github`` table;
- ``csv``: a header row of the JSON keys, then one row per entry; a text
  cell a spreadsheet would run as a formula is guarded (``csv_cell``);
- ``json``: a list of objects with stable keys (in a fixed order), numbers
  rounded (ratings to 3 decimals, means to 3 or 2).

Names come from a results database, which is a file and may have been
edited by hand or come from elsewhere: every text cell is shown with its
control characters escaped (``\\x1b``, ``\\n``, ``\\u202e``; ``cell_text``),
so no cell can move the cursor, reorder a line or start a new row, and the
JSON encodes them as ``\\uXXXX`` (``terminal_json``): the same text to a
parser, inert on a terminal.

In this game the lower score is better: places rank seats by lowest total,
and "mean score per hand" is the penalty a bot was left holding on average.

The rating is TrueSkill's mu fitted to all matches at once (order-free, see
:mod:`arena.ranking`), each hand a ranked game unless the tournament says
``rating: matches``, with a 95 % bootstrap interval over duplicate deals;
each bot's rank is shown as the range of ranks it could hold ("2-4": from 1 +
the bots clearly better than it to N - the bots clearly worse, each pair
compared on its own).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..config.model import RATE_HANDS, RATE_MATCHES, RATINGS
from ..pairing.schedule import derive_seed
from ..results.database import ResultStore, StoredMatch
from .formats import FORMATS, Column, cell_text, csv_cell, format_table, name_cell, tabulate, terminal_json
from .neighbours import NEIGHBOUR_TITLE, format_neighbours, neighbour_note, neighbour_summary
from .ratings import assess_matches, duplicate_group, match_ranks, rated_games

if TYPE_CHECKING:  # numpy and tabulate load when a table is computed, not with the tournament runner
    from ...ranking import Assessment

__all__ = [
    "FORMATS", "HeadToHead", "LeaderboardRow", "SeatStat", "cell_text", "csv_cell", "format_head_to_head",
    "format_leaderboard", "format_seat_effect", "format_table", "head_to_head", "leaderboard",
    "league_bootstrap_seed", "report", "RowTally", "seat_effect", "terminal_json",
]

Source = ResultStore | Iterable[StoredMatch]


CONFIDENCE = 0.95
SIGNIFICANCE = 0.05         # head-to-head cells


def _confidence(source: Source) -> float:
    """The tournament's ``settle.confidence`` if it has one (its run stopped on
    it, so its table must tell apart what that run did), else 95 %."""
    if isinstance(source, ResultStore):
        config = (source.tournament() or {}).get("config")
        settle = config.get("settle") if isinstance(config, dict) else None
        if isinstance(settle, dict) and isinstance(settle.get("confidence"), float):
            return settle["confidence"]
    return CONFIDENCE


def _rating(source: Source) -> str:
    """What one TrueSkill game is: the tournament's ``rating:`` (``hands`` when
    the stored configuration does not say, as for results of older versions)."""
    if isinstance(source, ResultStore):
        config = (source.tournament() or {}).get("config")
        rating = config.get("rating") if isinstance(config, dict) else None
        if rating in RATINGS:
            return rating
    return getattr(source, "rating", RATE_HANDS)


def league_bootstrap_seed(league_seed: int | str) -> int:
    """A league's bootstrap seed: one-way from its secret seed, so that its export
    can carry it (``bootstrap_seed``) and show the intervals its page shows."""
    return derive_seed(league_seed, "league", "standings")


def _seed(source: Source) -> int:
    """The bootstrap's seed: the tournament's, so a table is the same each time it is shown."""
    if isinstance(source, ResultStore):
        t = source.tournament() or {}
        config, seed = t.get("config"), t.get("seed")
        if isinstance(config, dict) and config.get("format") == "league":
            if isinstance(config.get("bootstrap_seed"), int):
                return int(config["bootstrap_seed"])     # a league's export, which holds no league seed
            if isinstance(seed, int):
                return league_bootstrap_seed(seed)
        if isinstance(seed, int):
            return seed
    return getattr(source, "seed", 0)


def _matches_and_bots(source: Source) -> tuple[list[StoredMatch], list[str]]:
    if isinstance(source, ResultStore):
        return source.matches(), source.bots()
    if isinstance(source, _Fixed):
        return list(source), source.bots
    matches = list(source)
    return matches, sorted({b for m in matches for b in m.bots})


# -- rows ----------------------------------------------------------------------


@dataclass(frozen=True)
class LeaderboardRow:
    rank: int                   # position, 1 best
    ranks: str                  # the ranks it could hold: "2-4" (1 + bots clearly above, N - bots clearly below), or "2"
    bot: str
    rating: float               # TrueSkill mu, fitted to all matches at once
    low: float | None           # its 95 % bootstrap interval (None: too few deals to tell)
    high: float | None
    sigma: float
    matches: int
    wins: int                   # matches finished in place 1 without forfeiting (a shared first place counts)
    mean_place: float | None
    mean_hand_score: float | None   # over the hands it played itself (``StoredMatch.own_hands``)
    hands_won: int              # hands it went out in by its own play (``StoredMatch.own_hands``)
    faults: int
    # Whether the pair test (the one the rank ranges count) tells it apart
    # from the bot rated next below it; None for the last.  Ranges alone say
    # how many bots a bot is told apart from, not which: "2-3" beside "3-4"
    # may or may not be a separated pair.
    apart_from_next: bool | None = None

    @property
    def interval(self) -> str | None:
        if self.low is None or self.high is None:
            return None
        return f"{self.low:.1f} to {self.high:.1f}"


@dataclass(frozen=True)
class HeadToHead:
    """How ``bot`` fared against ``opponent`` in the matches both played."""
    bot: str
    opponent: str
    played: int
    ahead: int
    behind: int
    tied: int
    p_value: float = 1.0        # sign test over duplicate deals: is one of the two better?

    @property
    def significant(self) -> bool:
        return self.p_value < SIGNIFICANCE

    @property
    def share(self) -> float | None:
        """Fraction of the common matches in which ``bot`` finished ahead."""
        return self.ahead / self.played if self.played else None


@dataclass(frozen=True)
class SeatStat:
    """Results by seat index (the seat order of the match, as the engine seats it)."""
    seat: int
    matches: int
    mean_total: float
    mean_place: float
    wins: int


def leaderboard(source: Source, confidence: float | None = None) -> list[LeaderboardRow]:
    """Rows sorted by rating (then name), with intervals and groups of ranks
    at ``confidence`` (default: the tournament's, see ``_confidence``)."""
    level = _confidence(source) if confidence is None else confidence
    if isinstance(source, ResultStore):
        return streamed_leaderboard(source, level, _rating(source))
    matches, bots = _matches_and_bots(source)
    return leaderboard_rows(matches, assess_matches(matches, bots, level, seed=_seed(source),
                                                    rating=_rating(source)))


def streamed_leaderboard(store: ResultStore, level: float, rating: str) -> list[LeaderboardRow]:
    """``leaderboard`` of a store, read a batch of matches at a time
    (``iter_matches``): each match gives its ranked games and its counts, and
    is let go (issue 34: the matches as well were 10 KB each at their peak),
    and its games are kept as the fit reads them (``ranking.counted``: a
    match's distinct outcomes as rows of small integers, not a ``Game`` a
    hand), which fits to the same numbers, bit for bit."""
    # lazy: arena.ranking.confidence loads numpy (tests/test_lean_imports.py REPORTING)
    from ...ranking.confidence import assess_counted
    from ...ranking.counted import Counted  # lazy: as the line above (with it, for the fit alone)

    tally = RowTally()
    counted = Counted()
    for m in store.iter_matches():
        tally.add(m)
        counted.add(rated_games([m], rating))
    return tally.rows(assess_counted(counted, store.bots(), confidence=level, seed=_seed(store)))


def leaderboard_rows(matches: Sequence[StoredMatch], assessment: Assessment) -> list[LeaderboardRow]:
    tally = RowTally()
    for m in matches:
        tally.add(m)
    return tally.rows(assessment)


class RowTally:
    """Each bot's counts over the matches added, for its leaderboard row (a
    few integers a bot: the matches need not be kept)."""

    def __init__(self) -> None:
        self.acc: dict[str, dict[str, int]] = {}

    def add(self, m: StoredMatch) -> None:
        for s, b in enumerate(m.bots):
            a = self._of(b)
            a["matches"] += 1
            a["places"] += m.places[s]
            a["wins"] += _won(m, s)
            own = m.own_hands(s)
            a["hands"] += own
            a["hand_score"] += sum(row[s] for row in m.hand_scores[:own])
            a["hands_won"] += sum(1 for w in m.hand_winners[:own] if w == s)
        for f in m.faults:
            self._of(m.bots[f["seat"]])["faults"] += 1

    def _of(self, bot: str) -> dict[str, int]:
        a = self.acc.get(bot)
        if a is None:
            a = self.acc[bot] = {"matches": 0, "wins": 0, "places": 0, "hands": 0, "hand_score": 0, "hands_won": 0,
                                 "faults": 0}
        return a

    def rows(self, assessment: Assessment) -> list[LeaderboardRow]:
        rows = []
        ranges = assessment.rank_ranges()
        apart = assessment.pair_separated()
        for i, b in enumerate(assessment.order):
            r, a = assessment.rows[b], self._of(b)
            first, last = ranges[i]
            known = r.low > float("-inf") and a["matches"] > 0
            rows.append(LeaderboardRow(
                rank=i + 1, ranks=str(first) if first == last else f"{first}-{last}", bot=b, rating=r.mu,
                low=r.low if known else None, high=r.high if known else None, sigma=r.sigma,
                matches=a["matches"], wins=a["wins"],
                mean_place=a["places"] / a["matches"] if a["matches"] else None,
                mean_hand_score=a["hand_score"] / a["hands"] if a["hands"] else None,
                hands_won=a["hands_won"], faults=a["faults"],
                apart_from_next=apart[i][i + 1] if i + 1 < len(assessment.order) else None))
        return rows


def _won(m: StoredMatch, seat: int) -> bool:
    """Whether ``seat`` won ``m``: first place, not forfeited."""
    return m.places[seat] == 1 and not m.forfeited[seat]


def head_to_head(source: Source) -> list[HeadToHead]:
    """Every ordered pair of bots that met at least once, sorted by (bot, opponent).

    "Ahead" compares placings (forfeited seats behind all others and tied
    with each other, equal totals tie), the same order the ratings use.  ``p_value`` is an exact sign test
    over duplicate deals: each deal the two shared counts once, for whichever
    finished ahead more often in its rotations (deals they split evenly are
    left out).
    """
    # lazy: arena.ranking.confidence loads numpy (tests/test_lean_imports.py REPORTING)
    from ...ranking import sign_test

    matches, _ = _matches_and_bots(source)
    counts: dict[tuple[str, str], list[int]] = {}
    nets: dict[tuple[str, str], dict[str, int]] = {}     # per duplicate group: ahead - behind
    for m in matches:
        ranks = match_ranks(m)
        group = duplicate_group(m.match_id, m.deal)
        for i, a in enumerate(m.bots):
            for j, b in enumerate(m.bots):
                if i == j:
                    continue
                c = counts.setdefault((a, b), [0, 0, 0, 0])  # played, ahead, behind, tied
                c[0] += 1
                c[1 if ranks[i] < ranks[j] else 2 if ranks[i] > ranks[j] else 3] += 1
                net = nets.setdefault((a, b), {})
                net[group] = net.get(group, 0) + (ranks[i] < ranks[j]) - (ranks[i] > ranks[j])
    out = []
    for (a, b), c in sorted(counts.items()):
        # The rotations of one deal share their cards: one vote per deal, not per match.
        won = sum(1 for v in nets[(a, b)].values() if v > 0)
        lost = sum(1 for v in nets[(a, b)].values() if v < 0)
        played, ahead, behind, tied = c
        out.append(HeadToHead(a, b, played, ahead, behind, tied, p_value=sign_test(won, lost)))
    return out


def seat_effect(source: Source) -> list[SeatStat]:
    """Mean total, mean place and wins by seat index: a fair rotation keeps them close."""
    matches, _ = _matches_and_bots(source)
    acc: dict[int, list[int]] = {}
    for m in matches:
        for s in range(len(m.bots)):
            a = acc.setdefault(s, [0, 0, 0, 0])  # matches, total, places, wins
            a[0] += 1
            a[1] += m.totals[s]
            a[2] += m.places[s]
            a[3] += _won(m, s)
    return [SeatStat(seat=s, matches=a[0], mean_total=a[1] / a[0], mean_place=a[2] / a[0], wins=a[3])
            for s, a in sorted(acc.items())]


# -- formatting ------------------------------------------------------------------


LEADERBOARD_COLUMNS = (
    Column("rank", "Rank"),
    Column("ranks", "Ranks"),
    Column("bot", "Bot"),
    Column("rating", "Rating", 3, 2),
    Column("low", "Low", 3, 2),
    Column("high", "High", 3, 2),
    Column("sigma", "Sigma", 3, 2),
    Column("matches", "Matches"),
    Column("wins", "Wins"),
    Column("mean_place", "Mean place", 3, 2),
    Column("mean_hand_score", "Score/hand", 2, 1),
    Column("hands_won", "Hands won"),
    Column("faults", "Faults"),
    Column("apart_from_next", "Apart from next"),
)

# On a terminal: the rank as its group, the interval as one column, no sigma.
LEADERBOARD_TEXT_COLUMNS = (
    Column("ranks", "Rank"),
    Column("bot", "Bot"),
    Column("rating", "Rating", 3, 2),
    Column("interval", "{level} interval"),
    *LEADERBOARD_COLUMNS[7:],
)

LEADERBOARD_NOTE = ("Rating: TrueSkill of {unit}, fitted to all matches at once; the interval, where the "
                    "bot's own rating lies, resamples whole duplicate deals. Two bots are told apart by a test "
                    "of their difference on the same resamples (at {level}), not by whether their intervals "
                    "overlap. Rank: the ranks a bot could hold, from 1 + the bots told apart from it above "
                    "to N - those below (2-4: one clearly better); Apart from next: whether it is told apart "
                    "from the bot below it. Wins, mean place and score per hand count every table alike; "
                    "the rating weighs each result by whom it was against.")
RATING_UNITS = {RATE_HANDS: "every hand, ranked by its scores", RATE_MATCHES: "every match, ranked by its places"}


def _level(confidence: float) -> str:
    return f"{confidence * 100:g}%"

HEAD_TO_HEAD_COLUMNS = (
    Column("bot", "Bot"),
    Column("opponent", "Opponent"),
    Column("played", "Played"),
    Column("ahead", "Ahead"),
    Column("behind", "Behind"),
    Column("tied", "Tied"),
    Column("share", "Share ahead", 3, 2),
    Column("p_value", "p", 4, 3),
    Column("significant", "Significant"),
)

SEAT_COLUMNS = (
    Column("seat", "Seat"),
    Column("matches", "Matches"),
    Column("mean_total", "Mean total", 2, 1),
    Column("mean_place", "Mean place", 3, 2),
    Column("wins", "Wins"),
)


def format_leaderboard(rows: Sequence[LeaderboardRow], fmt: str = "plain", confidence: float = CONFIDENCE) -> str:
    if fmt not in ("plain", "markdown"):
        return format_table(LEADERBOARD_COLUMNS, rows, fmt)
    columns = [dataclasses.replace(c, header=c.header.format(level=_level(confidence)))
               for c in LEADERBOARD_TEXT_COLUMNS]
    return format_table(columns, rows, fmt)


def format_seat_effect(rows: Sequence[SeatStat], fmt: str = "plain") -> str:
    return format_table(SEAT_COLUMNS, rows, fmt)


def format_head_to_head(entries: Sequence[HeadToHead], fmt: str = "plain",
                        order: Sequence[str] | None = None) -> str:
    """csv/json: one entry per ordered pair. plain/markdown: a matrix whose cell
    (row A, column B) reads "share (ahead/played)" for A against B; ``order``
    gives the bots' order (e.g. leaderboard order), default alphabetical."""
    if fmt in ("csv", "json"):
        return format_table(HEAD_TO_HEAD_COLUMNS, entries, fmt)
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    by_pair = {(e.bot, e.opponent): e for e in entries}
    names = list(order) if order is not None else sorted({e.bot for e in entries} | {e.opponent for e in entries})
    table = []
    for a in names:
        row = [name_cell(a, fmt)]
        for b in names:
            e = by_pair.get((a, b))
            if e is None or a == b:
                row.append("-")
            else:
                row.append(f"{e.share:.2f} ({e.ahead}/{e.played})" + ("" if e.significant else " ns"))
        table.append(row)
    return tabulate(table, headers=["vs", *(name_cell(n, fmt) for n in names)],
                    tablefmt="simple" if fmt == "plain" else "github",
                    disable_numparse=True, colalign=["left"] + ["right"] * len(names))


def report(source: Source, fmt: str = "plain", confidence: float | None = None,
           sections: Sequence[str] = ("leaderboard", "head_to_head", "seats"), rating: str | None = None) -> str:
    """The leaderboard, head-to-head, seat and neighbour tables together; ``rating``
    (``hands`` or ``matches``) overrides the tournament's.

    plain/markdown: titled sections; json: one object keyed by section; csv
    holds one table only, so it needs exactly one section.
    """
    unknown = set(sections) - {"leaderboard", "head_to_head", "seats", "neighbours"}
    if unknown:
        raise ValueError(f"unknown report sections: {', '.join(sorted(unknown))}")
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    if fmt == "csv" and len(sections) != 1:
        raise ValueError("csv output holds one table: choose one section")
    level = _confidence(source) if confidence is None else confidence
    unit = rating or _rating(source)
    if unit not in RATINGS:
        raise ValueError(f"unknown rating {unit!r}; expected one of {', '.join(RATINGS)}")
    matches: list[StoredMatch] = []
    if isinstance(source, ResultStore) and set(sections) == {"leaderboard"}:
        rows = streamed_leaderboard(source, level, unit)     # no other table: no match held
    else:
        matches, bots = _matches_and_bots(source)
        rows = leaderboard(_Fixed(matches, bots, _seed(source), unit), level)
    parts: dict[str, str] = {}
    if "leaderboard" in sections:
        parts["leaderboard"] = format_leaderboard(rows, fmt, level)
    if "head_to_head" in sections:
        parts["head_to_head"] = format_head_to_head(head_to_head(matches), fmt,
                                                    order=[r.bot for r in rows])
    if "seats" in sections:
        parts["seats"] = format_seat_effect(seat_effect(matches), fmt)
    if "neighbours" in sections:
        parts["neighbours"] = format_neighbours(matches, fmt, order=[r.bot for r in rows])
    if fmt == "json":
        return terminal_json({k: json.loads(v) for k, v in parts.items()})
    if fmt == "csv":
        return next(iter(parts.values()))
    if "leaderboard" in parts:
        parts["leaderboard"] += "\n\n" + LEADERBOARD_NOTE.format(level=_level(level),
                                                                 unit=RATING_UNITS[unit])
    if "head_to_head" in parts:
        parts["head_to_head"] += ("\n\nns: this table's own test, a sign test with one vote per duplicate "
                                  "deal (for whichever finished ahead in more of its seatings), is not "
                                  "significant at 5%; the leaderboard, which rates every hand, may still "
                                  "tell the two apart")
    if "seats" in parts and "neighbours" not in parts:
        # Beside the seat effect, the other thing a seat decides: whom a bot sits after.
        parts["seats"] += "\n\n" + neighbour_note(neighbour_summary(matches)) + " (--section neighbours: each pair)"
    titles = {"leaderboard": "Leaderboard", "head_to_head": "Head to head (row finished ahead of column)",
              "seats": "Seat effect (lower totals are better)", "neighbours": NEIGHBOUR_TITLE}
    heading = (lambda t: f"## {t}") if fmt == "markdown" else (lambda t: f"{t}\n{'=' * len(t)}")
    return "\n\n".join(f"{heading(titles[k])}\n\n{v}" for k, v in parts.items())


class _Fixed(list):
    """Matches plus the full bot list, so a report reads the store only once."""

    def __init__(self, matches: list[StoredMatch], bots: list[str], seed: int = 0,
                 rating: str = RATE_HANDS) -> None:
        super().__init__(matches)
        self.bots = sorted(set(bots) | {b for m in matches for b in m.bots})
        self.seed = seed
        self.rating = rating
