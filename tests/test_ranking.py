"""Tests of the TrueSkill ratings (arena.tournament.standings.ratings) and the leaderboard
tables and formats (arena.tournament.standings.leaderboard)."""

from __future__ import annotations

import csv
import io
import json
import random
from pathlib import Path

import pytest
import trueskill

from arena.tournament.results.database import ResultStore, StoredMatch
from arena.tournament.standings.leaderboard import (
    FORMATS,
    format_head_to_head,
    format_leaderboard,
    format_seat_effect,
    head_to_head,
    leaderboard,
    report,
    seat_effect,
)
from arena.tournament.standings.ratings import conservative, make_env, match_ranks, rate


def mk(i: int, bots: list[str], totals: list[int], places: list[int], forfeited: list[bool] | None = None,
       hands: list[list[int]] | None = None, winners: list[int | None] | None = None,
       faults: list[dict] | None = None) -> StoredMatch:
    n = len(bots)
    hands = hands if hands is not None else [list(totals)]
    return StoredMatch(match_id=f"m{i}", schedule_index=i, table=0, rotation=i, deal=0, seed=i, bots=bots,
                       totals=totals, places=places, forfeited=forfeited or [False] * n, hand_scores=hands,
                       hand_winners=winners if winners is not None else [None] * len(hands),
                       faults=faults or [])


def random_matches(count: int, seed: int = 3) -> list[StoredMatch]:
    rng = random.Random(seed)
    names = ["ann", "bob", "cat", "dan", "eve", "fay"]
    out = []
    for i in range(count):
        bots = rng.sample(names, rng.choice([2, 3, 4]))
        totals = [rng.randrange(0, 40) for _ in bots]  # small range: some equal totals
        forfeited = [rng.random() < 0.1 for _ in bots]
        key = list(zip(forfeited, totals))
        places = [1 + sum(1 for k in key if k < mine) for mine in key]
        out.append(mk(i, bots, totals, places, forfeited))
    return out


def as_tuples(ratings: dict[str, trueskill.Rating]) -> dict[str, tuple[float, float]]:
    return {b: (r.mu, r.sigma) for b, r in ratings.items()}


# -- ranking --------------------------------------------------------------------------


def test_ratings_do_not_depend_on_completion_order(tmp_path: Path) -> None:
    ms = random_matches(60)
    shuffled = ms[:]
    random.Random(9).shuffle(shuffled)
    assert shuffled != ms
    expected = as_tuples(rate(ms))
    assert as_tuples(rate(shuffled)) == expected
    stores = []
    for name, order in (("a", ms), ("b", shuffled)):
        store = ResultStore(tmp_path / f"{name}.sqlite")
        for m in order:
            store.add_match(m)
        stores.append(store)
    assert as_tuples(rate(stores[1].matches())) == expected
    assert format_leaderboard(leaderboard(stores[0]), "json") == format_leaderboard(leaderboard(stores[1]), "json")
    for s in stores:
        s.close()
    # the order does matter to TrueSkill, so the sort is what makes this hold
    env = make_env()
    naive: dict[str, trueskill.Rating] = {}
    for m in shuffled:
        new = env.rate([(naive.get(b, env.create_rating()),) for b in m.bots], ranks=match_ranks(m))
        naive.update({b: r for b, (r,) in zip(m.bots, new)})
    assert as_tuples(naive) != expected


def test_ties_share_rank() -> None:
    m = mk(0, ["a", "b", "c"], [10, 10, 30], [1, 1, 3])
    assert match_ranks(m) == [0, 0, 1]
    r = rate([m])
    # TrueSkill's free-for-all is a chain of neighbouring ranks, so tied seats
    # come out nearly (not bit-for-bit) equal; a loss would separate them widely.
    assert (r["a"].mu, r["a"].sigma) == pytest.approx((r["b"].mu, r["b"].sigma), rel=1e-3)
    assert r["a"].mu > 25 > r["c"].mu
    ordered = rate([mk(0, ["a", "b", "c"], [10, 11, 30], [1, 2, 3])])
    assert ordered["a"].mu - ordered["b"].mu > 100 * abs(r["a"].mu - r["b"].mu)


def test_forfeited_seats_rank_last() -> None:
    # places as given (forfeit-adjusted) ...
    adjusted = mk(0, ["a", "b", "c"], [0, 20, 30], [3, 1, 2], [True, False, False])
    # ... and places that forgot the forfeit: the ranking still puts it last
    naive = mk(0, ["a", "b", "c"], [0, 20, 30], [1, 2, 3], [True, False, False])
    assert match_ranks(adjusted) == match_ranks(naive) == [2, 0, 1]
    r = rate([naive])
    assert r["b"].mu > r["c"].mu > r["a"].mu
    assert as_tuples(r) == as_tuples(rate([adjusted]))


def test_forfeited_seats_tie_whatever_their_stand_in_play() -> None:
    from arena.ranking.games import forfeit_ranks
    from arena.tournament.standings.ratings import hand_games, match_games

    assert forfeit_ranks([5, 40, 20, 10], [True, False, True, False]) == (2, 1, 2, 0)
    assert forfeit_ranks([300, 5, 120], [True, True, True]) == (0, 0, 0)       # all forfeited: a draw
    # Places as this version stores them, and as earlier ones did (forfeited
    # seats ordered by their stand-in totals): the same ranks, the same games.
    hands = [[0, 30, 5, 10], [25, 0, 40, 15]]
    new = mk(0, ["a", "b", "c", "d"], [25, 30, 45, 25], [1, 4, 4, 1], [False, True, True, False], hands=hands)
    old = mk(0, ["a", "b", "c", "d"], [25, 30, 45, 25], [1, 3, 4, 1], [False, True, True, False], hands=hands)
    assert old.places == new.places == [1, 4, 4, 1]
    assert match_ranks(old) == match_ranks(new) == [0, 1, 1, 0]
    assert match_games([old]) == match_games([new])
    # in hand 2 seat b went out on stand-in moves (0): still last, tied with c
    assert [g.ranks for g in hand_games([old])] == [(0, 2, 2, 1), (1, 2, 2, 0)]
    everyone = mk(1, ["a", "b", "c"], [300, 5, 120], [3, 1, 2], [True, True, True], hands=[[300, 5, 120]])
    assert everyone.places == [3, 3, 3] and match_ranks(everyone) == [0, 0, 0]
    assert [g.ranks for g in hand_games([everyone])] == [(0, 0, 0)]
    r = rate([everyone])
    assert r["a"].mu == pytest.approx(r["b"].mu) == pytest.approx(r["c"].mu)


def test_a_forfeited_seat_wins_no_match_and_no_hand_the_arena_played_for_it() -> None:
    crash = {"seat": 1, "kind": "crash", "hand": 2, "decision": 9, "decision_kind": "draw", "detail": "exit 1"}
    start = {"seat": 0, "kind": "crash", "hand": 1, "decision": None, "decision_kind": "start", "detail": "exit 1"}
    matches = [
        # b won hand 1 itself, crashed in hand 2; its stand-in went out in hand 3
        mk(0, ["a", "b"], [30, 20], [1, 2], [False, True], hands=[[10, 0], [20, 20], [0, 0]],
           winners=[1, None, 1], faults=[crash]),
        # nobody started: a draw in the last place that nobody won, though c's stand-in went out
        mk(1, ["c", "d"], [0, 50], [1, 2], [True, True], hands=[[0, 50]], winners=[0],
           faults=[start, {**start, "seat": 1}]),
    ]
    by = {r.bot: r for r in leaderboard(matches)}
    assert {b: (r.wins, r.hands_won, r.mean_place) for b, r in by.items()} == {
        "a": (1, 0, 1.0), "b": (0, 1, 2.0), "c": (0, 0, 2.0), "d": (0, 0, 2.0)}
    # score per hand: b's own hand 1 only (its stand-in's 20 and 0 are not b's); none for c and d
    assert {b: r.mean_hand_score for b, r in by.items()} == {"a": 10.0, "b": 0.0, "c": None, "d": None}
    assert [s.wins for s in seat_effect(matches)] == [1, 0]


def test_bot_twice_in_a_match_is_rejected() -> None:
    with pytest.raises(ValueError, match="twice"):
        rate([mk(0, ["a", "a", "b"], [1, 2, 3], [1, 2, 3])])
    with pytest.raises(ValueError, match="schedule index"):
        rate([mk(0, ["a", "b"], [1, 2], [1, 2]), mk(0, ["a", "b"], [1, 2], [1, 2])])


def test_explicit_environment_only(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_global(*a: object, **k: object) -> None:
        raise AssertionError("the global TrueSkill environment was used")

    monkeypatch.delattr(trueskill.global_env, "__trueskill__", raising=False)
    monkeypatch.setattr(trueskill, "setup", no_global)
    ms = random_matches(10)
    r = rate(ms, bots=["zed"])
    assert r["zed"].mu == 25 and set(r) >= {b for m in ms for b in m.bots}
    big = rate(ms, env=make_env(mu=1000.0))
    assert all(abs(x.mu - 1000) < 500 for x in big.values())
    assert as_tuples(big) != as_tuples(rate(ms))
    assert conservative(r["zed"]) == pytest.approx(0.0)


# -- leaderboard, head to head, seats --------------------------------------------------------

# A hand-made tournament of four bots (lower totals are better):
#   m0: A B C   totals 10 20 10                places 1 3 1
#   m1: B C D   totals  5 50 30                places 1 3 2
#   m2: C A B   totals  0 40 60, B forfeits    places 1 2 3
#   m3: D A C   totals 10  0  5, A forfeits    places 2 3 1
SMALL = [
    mk(0, ["A", "B", "C"], [10, 20, 10], [1, 3, 1], hands=[[0, 15, 10], [10, 5, 0]], winners=[0, 2]),
    mk(1, ["B", "C", "D"], [5, 50, 30], [1, 3, 2], hands=[[0, 25, 15], [5, 25, 15]], winners=[0, None]),
    mk(2, ["C", "A", "B"], [0, 40, 60], [1, 2, 3], [False, False, True],
       hands=[[0, 20, 30], [0, 20, 30]], winners=[0, 0]),
    mk(3, ["D", "A", "C"], [10, 0, 5], [2, 3, 1], [False, True, False],
       hands=[[5, 0, 5], [5, 0, 0]], winners=[1, 2],
       faults=[{"seat": 1, "kind": "crash", "hand": 2, "decision": 7, "decision_kind": "draw",
                "detail": "exit 1"}]),
]


def test_head_to_head_counts() -> None:
    got = {(e.bot, e.opponent): (e.played, e.ahead, e.behind, e.tied) for e in head_to_head(SMALL)}
    assert got == {
        ("A", "B"): (2, 2, 0, 0), ("B", "A"): (2, 0, 2, 0),
        ("A", "C"): (3, 0, 2, 1), ("C", "A"): (3, 2, 0, 1),
        ("A", "D"): (1, 0, 1, 0), ("D", "A"): (1, 1, 0, 0),
        ("B", "C"): (3, 1, 2, 0), ("C", "B"): (3, 2, 1, 0),
        ("B", "D"): (1, 1, 0, 0), ("D", "B"): (1, 0, 1, 0),
        ("C", "D"): (2, 1, 1, 0), ("D", "C"): (2, 1, 1, 0),
    }
    share = {(e.bot, e.opponent): e.share for e in head_to_head(SMALL)}
    assert share[("C", "A")] == pytest.approx(2 / 3)

    matrix = format_head_to_head(head_to_head(SMALL), "plain", order=["C", "A", "B", "D", "E"])
    lines = matrix.splitlines()
    assert lines[0].split() == ["vs", "C", "A", "B", "D", "E"]
    row_c = next(line for line in lines if line.startswith("C "))
    assert "0.67 (2/3) ns" in row_c and "0.50 (1/2) ns" in row_c
    md = format_head_to_head(head_to_head(SMALL), "markdown")
    assert md.count("|") > 20 and "1.00 (2/2)" in md
    rows = list(csv.DictReader(io.StringIO(format_head_to_head(head_to_head(SMALL), "csv"))))
    assert len(rows) == 12 and rows[0] == {"bot": "A", "opponent": "B", "played": "2", "ahead": "2",
                                           "behind": "0", "tied": "0", "share": "1.0", "p_value": "0.5",
                                           "significant": "False"}
    js = json.loads(format_head_to_head(head_to_head(SMALL), "json"))
    assert js[1] == {"bot": "A", "opponent": "C", "played": 3, "ahead": 0, "behind": 2, "tied": 1, "share": 0.0,
                     "p_value": 0.5, "significant": False}


def test_seat_effect() -> None:
    seats = seat_effect(SMALL)
    assert [(s.seat, s.matches, s.wins) for s in seats] == [(0, 4, 3), (1, 4, 0), (2, 4, 2)]
    assert [s.mean_total for s in seats] == pytest.approx([6.25, 27.5, 26.25])
    assert [s.mean_place for s in seats] == pytest.approx([1.25, 2.75, 1.75])
    js = json.loads(format_seat_effect(seats, "json"))
    assert js[0] == {"seat": 0, "matches": 4, "mean_total": 6.25, "mean_place": 1.25, "wins": 3}
    assert "Mean total" in format_seat_effect(seats, "plain")


def test_leaderboard_rows(tmp_path: Path) -> None:
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.init_tournament("small", {"bots": ["A", "B", "C", "D", "E"]}, bots=["A", "B", "C", "D", "E"])
        for m in reversed(SMALL):
            store.add_match(m)
        rows = leaderboard(store)
    by = {r.bot: r for r in rows}
    assert rows[0].bot == "C" and rows[0].rank == 1
    assert [r.rank for r in rows] == sorted(r.rank for r in rows)
    assert [r.rating for r in rows[:-1]] == sorted((r.rating for r in rows[:-1]), reverse=True)
    for r in rows[:-1]:
        assert r.low is not None and r.high is not None and r.low <= r.rating <= r.high
    assert rows[-1].bot == "E"     # no match: last, without an interval
    a, b, c, d, e = (by[x] for x in "ABCDE")
    assert (a.matches, a.wins, a.hands_won, a.faults) == (3, 1, 2, 1)
    assert a.mean_place == pytest.approx(2.0) and a.mean_hand_score == pytest.approx(50 / 5)   # not hand 2 of match 3: forfeited
    assert (b.matches, b.wins, b.hands_won, b.faults) == (3, 1, 1, 0)
    assert b.mean_place == pytest.approx(7 / 3) and b.mean_hand_score == pytest.approx(25 / 4)  # m2: forfeited, hand unknown
    assert (c.matches, c.wins, c.hands_won) == (4, 3, 4)  # m0's shared first place counts as a win
    assert c.mean_place == pytest.approx(1.5) and c.mean_hand_score == pytest.approx(65 / 8)
    assert (d.matches, d.wins, d.hands_won, d.mean_place) == (2, 0, 0, 2.0)
    # a registered bot without a match keeps its prior rating and empty means
    assert (e.matches, e.mean_place, e.mean_hand_score) == (0, None, None)
    assert (e.rating, e.sigma, e.low, e.high) == (25.0, pytest.approx(25 / 3), None, None)


def test_leaderboard_formats() -> None:
    rows = leaderboard(SMALL)
    keys = ["rank", "ranks", "bot", "rating", "low", "high", "sigma", "matches", "wins", "mean_place",
            "mean_hand_score", "hands_won", "faults", "apart_from_next"]

    parsed = list(csv.DictReader(io.StringIO(format_leaderboard(rows, "csv"))))
    assert [list(p) for p in parsed] == [keys] * len(rows)
    assert [p["bot"] for p in parsed] == [r.bot for r in rows]
    assert float(parsed[0]["rating"]) == pytest.approx(rows[0].rating, abs=1e-3)

    js = json.loads(format_leaderboard(rows, "json"))
    assert [list(o) for o in js] == [keys] * len(rows)
    assert js[0]["rating"] == round(rows[0].rating, 3) and isinstance(js[0]["matches"], int)

    md = format_leaderboard(rows, "markdown").splitlines()
    assert md[0].startswith("|") and "Rating" in md[0] and "95% interval" in md[0] and set(md[1]) <= set("|-: ")
    assert len(md) == 2 + len(rows) and all(line.count("|") == 12 for line in md)

    plain = format_leaderboard(rows, "plain").splitlines()
    assert plain[0].split()[:3] == ["Rank", "Bot", "Rating"] and len(plain) == 2 + len(rows)
    assert f"{rows[0].low:.1f} to {rows[0].high:.1f}" in plain[2]

    with pytest.raises(ValueError, match="unknown format"):
        format_leaderboard(rows, "html")


def test_leaderboard_empty_values_and_report(tmp_path: Path) -> None:
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.init_tournament("t", {}, bots=["solo", "other"])
        rows = leaderboard(store)
        assert json.loads(format_leaderboard(rows, "json"))[0]["mean_place"] is None
        assert list(csv.DictReader(io.StringIO(format_leaderboard(rows, "csv"))))[0]["mean_place"] == ""
        assert " - " in format_leaderboard(rows, "plain")
        assert [r.ranks for r in rows] == ["1-2", "1-2"]  # nothing tells them apart
        assert rows[0].low is None and " - " in format_leaderboard(rows, "plain")
        for m in SMALL:
            store.add_match(m)
        for fmt in FORMATS:
            sections = ["leaderboard"] if fmt == "csv" else ["leaderboard", "head_to_head", "seats"]
            text = report(store, fmt, sections=sections)
            assert "C" in text
        whole = json.loads(report(store, "json"))
        assert list(whole) == ["leaderboard", "head_to_head", "seats"]
        assert whole["leaderboard"][0]["bot"] == "C"
        with pytest.raises(ValueError):
            report(store, "csv")


# -- what one rated game is: a hand (default) or a match ----------------------------------------


def test_each_hand_is_a_game_and_a_forfeit_loses_every_hand() -> None:
    from arena.tournament.standings.ratings import hand_games, match_games, rated_games
    m = mk(0, ["A", "B", "C"], [30, 30, 5], [2, 2, 3], forfeited=[False, False, True],
           hands=[[0, 20, 5], [30, 10, 0]])
    games = hand_games([m])
    assert [g.key for g in games] == ["m0-h01", "m0-h02"]
    assert {g.group for g in games} == {"m0-d0"}           # the match's duplicate group
    # hand 1: A best, B second, C forfeited: last although it scored less than B
    assert games[0].ranks == (0, 1, 2)
    assert games[1].ranks == (1, 0, 2)                      # hand 2: B before A, C still last
    assert rated_games([m]) == games and rated_games([m], "matches") == match_games([m])
    tied = hand_games([mk(1, ["A", "B", "C"], [5, 5, 0], [2, 2, 1], hands=[[5, 5, 0]])])
    assert tied[0].ranks == (1, 1, 0)
    with pytest.raises(ValueError, match="unknown rating"):
        rated_games([m], "games")


def test_the_tournaments_rating_setting_chooses_the_games(tmp_path: Path) -> None:
    # A wins every match on totals (one big hand of B's), B wins most hands:
    # by hands B leads, by matches A does.
    hands_a_loses = [[5, 0], [5, 0], [5, 0], [0, 100]]
    matches = [mk(i, ["A", "B"], [15, 100], [1, 2], hands=hands_a_loses) for i in range(6)]
    for rating, leader in (("hands", "B"), ("matches", "A"), (None, "B")):
        with ResultStore(tmp_path / f"{rating}.sqlite") as store:
            config = {"bots": ["A", "B"]} if rating is None else {"bots": ["A", "B"], "rating": rating}
            store.init_tournament("t", config, bots=["A", "B"])
            for m in matches:
                store.add_match(m)
            assert leaderboard(store)[0].bot == leader, rating
