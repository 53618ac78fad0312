"""The contract finder's shortcuts: exact, and they do cut the search.

find_best_contract scores each option from its drafts and builds melds only
for the best one; the search drops run candidates by lower bounds on the
wild units the remaining runs need.  Neither may change an answer (the
brute-force agreement tests in test_finder.py and the pinned matches in
test_engine_pinned.py hold them to that); these tests hold the score to the
built melds' and the bounds to a small search on hands that used to be slow.
"""

from __future__ import annotations

import copy
import random

import pytest

import arena.shanghai.finder.best as best
import arena.shanghai.finder.search as search
from arena.shanghai.cards import make_shoe, parse_cards
from arena.shanghai.finder import find_best_contract, find_contract
from arena.shanghai.finder.counts import _PEN
from arena.shanghai.ruleset import Ruleset


def _melds_score(hand_cnt: list[int], melds: list, wd: bool) -> tuple[int, int, int]:
    """(natural points left, wilds used, all points left), from built melds."""
    left = list(hand_cnt)
    for m in melds:
        for c in m.cards:
            if c.rank:
                left[c.index] -= 1
    wilds = sum(sum(m.wild) for m in melds)
    total = sum(n * _PEN[i % 13 + 1] for i, n in enumerate(left))
    natural = sum(n * _PEN[i % 13 + 1] for i, n in enumerate(left) if not (wd and i % 13 == 1))
    return natural, wilds, total


@pytest.mark.parametrize("wd", [True, False])
def test_draft_score_is_the_built_melds_score(monkeypatch: pytest.MonkeyPatch, wd: bool) -> None:
    hand_cnt: list[list[int]] = []
    real_state = best._State

    def state(hand):  # type: ignore[no-untyped-def]
        st = real_state(hand)
        hand_cnt[:] = [list(st.cnt)]
        return st

    real_score = best._draft_score
    checked = 0

    def score(drafts, cnt, jokers, wd_):  # type: ignore[no-untyped-def]
        nonlocal checked
        got = real_score(drafts, cnt, jokers, wd_)
        melds = best._finish(copy.deepcopy(drafts), list(cnt), jokers, wd_)
        assert got == _melds_score(hand_cnt[0], melds, wd_)
        checked += 1
        return got

    monkeypatch.setattr(best, "_State", state)
    monkeypatch.setattr(best, "_draft_score", score)
    rng = random.Random(9)
    for text in ("2S3", "S3+R4", "2R4", "3S3+R4", "S3+2R4", "2S3+2R4", "S3+R7", "S3+S4+R4"):
        rules = Ruleset.from_mapping({"contracts": [text], "wild_deuces": wd})
        shoe = make_shoe(2)
        for size in (12, 16, 20):
            for _ in range(15):
                rng.shuffle(shoe)
                best.find_best_contract(shoe[:size], rules.contracts[0], rules)
    assert checked > 200


def _placements(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the runs the search places (one per node below the root)."""
    count = [0]
    real = search._Run

    class Counted(real):  # type: ignore[misc,valid-type]
        __slots__ = ()

        def __init__(self, *args: object) -> None:
            count[0] += 1
            super().__init__(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(search, "_Run", Counted)
    return count


@pytest.mark.parametrize("hand,most", [
    # random players' 21-card hands on 3R4 (two jokers' worth of wild units
    # and several cheap windows): 105 and 89 placements before the bounds
    ("2C 7C 8C JC KC AD 2D 5D 8D AH 6H 6H KH 2S 3S 3S 6S 9S 10S JS JK", 30),
    ("2C 7C 8C JC KC AD 2D 5D 8D AH 6H 6H KH 2S 3S 3S 5S 9S 10S JS JK", 30),
])
def test_crowded_hand_without_a_contract_is_decided_quickly(monkeypatch: pytest.MonkeyPatch,
                                                            hand: str, most: int) -> None:
    rules = Ruleset.from_mapping({"contracts": ["3R4"]})
    count = _placements(monkeypatch)
    assert find_contract(parse_cards(hand), rules.contracts[0], rules) is None
    assert count[0] <= most


def test_best_contract_unchanged_on_a_crowded_hand() -> None:
    """A hand where the bounds prune: the answer is still the one shedding most."""
    rules = Ruleset.from_mapping({"contracts": ["2S3+R4"]})
    hand = parse_cards("AC 2C 3C 4C 6C 8C 9C QC QC 4D 9D 9H 10H QH 2S 4S QS JK")
    melds = find_best_contract(hand, rules.contracts[0], rules)
    assert melds is not None
    assert [m.text for m in melds] == ["9C 9D 9H", "QC QC QH QS", "AC 2C 3C 4C JK 6C 2S 8C"]
