"""The contract finder against a slow, obviously-correct reference.

The reference enumerates every legal meld a hand can form (by sub-multiset,
checked by the engine's make_set / make_run) and then every combination of
one meld per contract slot.  It shares no logic with the finder.  Every
solution the finder returns is re-checked by an independent rule checker
written here from the rules brief.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from itertools import permutations, product

import pytest

from arena.shanghai.cards import JOKER, SUITS, Card, card, make_shoe, parse_cards
from arena.shanghai.errors import IllegalAction
from arena.shanghai.finder import could_go_down, find_best_contract, find_contract
from arena.shanghai.melds import Meld, make_run, make_set
from arena.shanghai.ruleset import RUN, SET, Contract, Ruleset


def rules_for(contract: str, wild_deuces: bool = True, distinct: bool = True) -> tuple[Contract, Ruleset]:
    rules = Ruleset.from_mapping({
        "contracts": [contract], "wild_deuces": wild_deuces, "distinct_set_ranks": distinct,
    })
    return rules.contracts[0], rules


# ---------------------------------------------------------------------------
# Independent checker, straight from the rules brief.
# ---------------------------------------------------------------------------

def is_wild_card(c: Card, wd: bool) -> bool:
    return c.rank == 0 or (wd and c.rank == 2)


def check_set(cards: tuple[Card, ...], wd: bool) -> int | None:
    """The set's rank if ``cards`` is a legal set, else None."""
    for rank in range(1, 14):
        naturals = wilds = 0
        for c in cards:
            if c.rank == rank:
                naturals += 1          # includes 2s in a set of 2s
            elif is_wild_card(c, wd):
                wilds += 1
            else:
                break
        else:
            if naturals >= 1 and wilds <= naturals:
                return rank
    return None


def check_run(cards: tuple[Card, ...], wd: bool) -> bool:
    """Whether ``cards``, in this order, is a legal run."""
    if len(cards) > 13:
        return False
    for suit in SUITS:
        for start in range(1, 15 - len(cards) + 1):
            naturals = wilds = 0
            for i, c in enumerate(cards):
                value = start + i
                rank = 1 if value == 14 else value
                if c.rank == rank and c.suit == suit:
                    naturals += 1      # includes a 2 at the 2-position of its suit
                elif is_wild_card(c, wd):
                    wilds += 1
                else:
                    break
            else:
                if naturals >= 1 and wilds <= naturals:
                    return True
    return False


def verify(hand: list[Card], contract: Contract, rules: Ruleset, melds: list[Meld]) -> None:
    wd = rules.wild_deuces
    assert len(melds) == len(contract.melds)
    ranks = []
    for spec, m in zip(contract.melds, melds):
        assert m.kind == spec.kind
        assert len(m.cards) >= spec.min_len
        if spec.kind == SET:
            rank = check_set(m.cards, wd)
            assert rank is not None, m.text
            ranks.append(rank)
        else:
            assert check_run(m.cards, wd), m.text
    used = Counter(c for m in melds for c in m.cards)
    have = Counter(hand)
    assert all(have[c] >= n for c, n in used.items()), "cards not in hand"
    if rules.distinct_set_ranks:
        assert len(ranks) == len(set(ranks)), "two sets of one rank"


# ---------------------------------------------------------------------------
# Brute-force reference.
# ---------------------------------------------------------------------------

def _sub_multisets(counter: Counter) -> list[tuple[Card, ...]]:
    items = sorted(counter.items(), key=lambda kv: kv[0].index)
    out = []
    for picks in product(*(range(n + 1) for _, n in items)):
        out.append(tuple(c for (c, _), k in zip(items, picks) for _ in range(k)))
    return out


def legal_melds(hand: list[Card], wd: bool, set_min: int = 3, run_min: int = 3
                ) -> tuple[dict[tuple, int], list[tuple]]:
    """All legal sets (multiset -> rank) and runs (multisets) formable from hand,
    of at least set_min / run_min cards.

    Candidates are grouped by obvious necessary conditions (a set's naturals
    share a rank; a run's naturals share a suit and differ in rank) only to
    keep the count down; make_set / make_run decide, with every order of the
    wild-capable cards tried for runs.
    """
    wild_part = Counter(c for c in hand if is_wild_card(c, wd))
    nat_part = Counter(c for c in hand if not is_wild_card(c, wd))
    wild_subs = _sub_multisets(wild_part)
    sets: dict[tuple, int] = {}
    runs: set[tuple] = set()
    by_rank: dict[int, Counter] = {}
    by_suit: dict[str, set[Card]] = {}
    for c, n in nat_part.items():
        by_rank.setdefault(c.rank, Counter())[c] = n
        by_suit.setdefault(c.suit, set()).add(c)
    # sets
    nat_groups = [_sub_multisets(cnt) for cnt in by_rank.values()] + [[()]]
    for group in nat_groups:
        for nat in group:
            for w in wild_subs:
                cards = nat + w
                if len(cards) < set_min:
                    continue
                try:
                    m = make_set(cards, wd)
                except IllegalAction:
                    continue
                sets[tuple(sorted(cards, key=lambda c: c.index))] = m.rank
    # runs
    for suit_cards in by_suit.values():
        distinct = sorted(suit_cards, key=lambda c: c.rank)
        for mask in range(1, 1 << len(distinct)):
            nat = tuple(c for i, c in enumerate(distinct) if mask >> i & 1)
            for w in wild_subs:
                size = len(nat) + len(w)
                if size < run_min or size > 13:
                    continue
                key = tuple(sorted(nat + w, key=lambda c: c.index))
                if key in runs:
                    continue
                if _can_order_as_run(nat, w, wd):
                    runs.add(key)
    return sets, sorted(runs, key=lambda cards: [c.index for c in cards])


def _can_order_as_run(nat: tuple[Card, ...], wilds: tuple[Card, ...], wd: bool) -> bool:
    size = len(nat) + len(wilds)
    if len(wilds) - 1 > len(nat) + 1:  # at most one wild-capable card (a 2) can be natural
        return False
    for start in range(1, 15 - size + 1):
        slots: list[Card | None] = [None] * size
        ok = True
        for c in nat:
            places = [v for v in ((1, 14) if c.rank == 1 else (c.rank,)) if start <= v < start + size]
            if len(places) != 1 or slots[places[0] - start] is not None:
                ok = False
                break
            slots[places[0] - start] = c
        if not ok:
            continue
        # necessary: only a 2 of the run's suit on the 2-position is a natural wild-capable card
        own_two = wd and start <= 2 < start + size and slots[2 - start] is None and any(
            c.rank == 2 and c.suit == nat[0].suit for c in wilds)
        best_naturals = len(nat) + (1 if own_two else 0)
        if size - best_naturals > best_naturals:
            continue
        free = [i for i, c in enumerate(slots) if c is None]
        for perm in set(permutations(wilds)):
            for i, c in zip(free, perm):
                slots[i] = c
            try:
                make_run(slots, wd)
                return True
            except IllegalAction:
                pass
    return False


def brute_force(hand: list[Card], contract: Contract, rules: Ruleset) -> bool:
    """Is there one legal meld per contract slot, disjoint within the hand?"""
    wd = rules.wild_deuces

    def need(cards: tuple[Card, ...]) -> tuple[tuple[int, int], ...]:
        return tuple(Counter(c.index for c in cards).items())

    set_min = min((m.min_len for m in contract.melds if m.kind == SET), default=99)
    run_min = min((m.min_len for m in contract.melds if m.kind == RUN), default=99)
    sets, runs = legal_melds(hand, wd, set_min, run_min)
    set_list = [(len(cards), need(cards), rank) for cards, rank in sets.items()]
    run_list = [(len(cards), need(cards), 0) for cards in runs]
    specs = contract.melds
    memo: dict = {}
    start = [0] * 53
    for c in hand:
        start[c.index] += 1

    def rec(i: int, left: tuple[int, ...], ranks: frozenset) -> bool:
        if i == len(specs):
            return True
        key = (i, left, ranks)
        if key in memo:
            return memo[key]
        spec = specs[i]
        result = False
        for size, needs, rank in (set_list if spec.kind == SET else run_list):
            if size < spec.min_len or (spec.kind == SET and rules.distinct_set_ranks and rank in ranks):
                continue
            if all(left[idx] >= n for idx, n in needs):
                rest = list(left)
                for idx, n in needs:
                    rest[idx] -= n
                if rec(i + 1, tuple(rest), ranks | {rank} if spec.kind == SET else ranks):
                    result = True
                    break
        memo[key] = result
        return result

    return rec(0, tuple(start), frozenset())


# ---------------------------------------------------------------------------
# Random hands, biased towards near-solutions.
# ---------------------------------------------------------------------------

def planted_hand(rng: random.Random, contract: Contract, wd: bool, size: int, decks: int = 2) -> list[Card]:
    shoe = Counter(make_shoe(decks))
    hand: list[Card] = []

    def take(c: Card) -> bool:
        if shoe[c] > 0 and len(hand) < size:
            shoe[c] -= 1
            hand.append(c)
            return True
        return False

    def wild() -> Card:
        if wd and rng.random() < 0.5:
            return card(2, rng.choice(SUITS))
        return JOKER

    for spec in contract.melds:
        if rng.random() < 0.15:
            continue
        if spec.kind == SET:
            rank = rng.randint(1, 13)
            n = rng.randint(2, 3)
            for _ in range(n):
                take(card(rank, rng.choice(SUITS)))
            for _ in range(rng.randint(0, 1)):
                take(wild())
        else:
            suit = rng.choice(SUITS)
            length = spec.min_len + rng.randint(-1, 1)
            start = rng.randint(1, max(1, 15 - length))
            for v in range(start, min(15, start + length)):
                if rng.random() < 0.8:
                    take(card(1 if v == 14 else v, suit))
                elif rng.random() < 0.5:
                    take(wild())
    while len(hand) < size:
        r = rng.random()
        if r < 0.08:
            take(JOKER)
        elif r < 0.16:
            take(card(2, rng.choice(SUITS)))
        else:
            take(card(rng.randint(1, 13), rng.choice(SUITS)))
    rng.shuffle(hand)
    return hand


SHANGHAI = list(Ruleset.preset("shanghai").contracts)
PAGAT = list(Ruleset.preset("pagat").contracts)
CUSTOM = ["R3", "R7", "S3+R5", "2R3", "S4+R4", "S3+S4", "2S3+R3", "R5+R3"]


def _contract_pool() -> list[str]:
    return sorted({c.text for c in SHANGHAI + PAGAT} | set(CUSTOM))


@pytest.mark.parametrize("wd,distinct", [(True, True), (True, False), (False, True), (False, False)])
def test_agrees_with_brute_force(wd: bool, distinct: bool) -> None:
    rng = random.Random(f"finder-{wd}-{distinct}")
    contracts = _contract_pool()
    seen = Counter()
    for trial in range(800):        # 24 CPU-s at 1,500 (issue 31); each of the 23 contracts 34 or 35 times
        text = contracts[trial % len(contracts)]
        contract, rules = rules_for(text, wd, distinct)
        size = min(15, max(6, contract.size + rng.randint(-1, 3)))
        hand = planted_hand(rng, contract, wd, size)
        expected = brute_force(hand, contract, rules)
        melds = find_contract(hand, contract, rules)
        assert (melds is not None) == expected, (text, " ".join(c.text for c in hand), expected)
        assert could_go_down(hand, contract, rules) == expected
        best = find_best_contract(hand, contract, rules)
        assert (best is not None) == expected
        if melds is not None:
            verify(hand, contract, rules, melds)
            verify(hand, contract, rules, best)
        seen[expected] += 1
    # the generator must exercise both answers often
    assert seen[True] > 200 and seen[False] > 200, seen


@pytest.mark.parametrize("text", ["R3", "R5", "R7", "2R4", "S3+R5", "2S3+R3"])
def test_runs_with_many_wilds_agree(text: str) -> None:
    """Gappy runs: odd minimums where only a longer run is legal."""
    rng = random.Random(f"gappy-{text}")
    contract, rules = rules_for(text, True, True)
    for _ in range(150):
        suit = rng.choice(SUITS)
        values = rng.sample(range(1, 14), rng.randint(2, 6))
        hand = [card(v, suit) for v in values]
        hand += [JOKER] * rng.randint(0, 2) + [card(2, rng.choice(SUITS)) for _ in range(rng.randint(0, 2))]
        hand += [card(rng.randint(1, 13), rng.choice(SUITS)) for _ in range(rng.randint(0, 3))]
        expected = brute_force(hand, contract, rules)
        melds = find_contract(hand, contract, rules)
        assert (melds is not None) == expected, (text, " ".join(c.text for c in hand))
        if melds is not None:
            verify(hand, contract, rules, melds)


@pytest.mark.parametrize("text", ["2R4", "2R3", "3R3", "S3+2R3", "2S3+R4", "S3+R5", "R5+R3", "2S3+R3"])
def test_crowded_suits_agree(text: str) -> None:
    """Runs sharing a suit and sets wanting the same cards as the runs."""
    rng = random.Random(f"crowded-{text}")
    for trial in range(120):
        wd = trial % 2 == 0
        distinct = trial % 3 != 0
        contract, rules = rules_for(text, wd, distinct)
        suits = rng.sample(SUITS, rng.randint(1, 2))
        hand: list[Card] = []
        for _ in range(rng.randint(6, 10)):
            hand.append(card(rng.randint(1, 13), rng.choice(suits)))
        ranks = [c.rank for c in hand]
        for _ in range(rng.randint(0, 3)):  # cards of ranks the runs hold, for sets
            hand.append(card(rng.choice(ranks), rng.choice(SUITS)))
        hand += [JOKER] * rng.randint(0, 2)
        if wd:
            hand += [card(2, rng.choice(SUITS)) for _ in range(rng.randint(0, 1))]
        hand = hand[:12]
        expected = brute_force(hand, contract, rules)
        melds = find_contract(hand, contract, rules)
        assert (melds is not None) == expected, (text, wd, distinct, " ".join(c.text for c in hand))
        best = find_best_contract(hand, contract, rules)
        assert (best is not None) == expected
        if melds is not None:
            verify(hand, contract, rules, melds)
            verify(hand, contract, rules, best)


# ---------------------------------------------------------------------------
# Worked examples.
# ---------------------------------------------------------------------------

def go(text: str, contract: str, wd: bool = True, distinct: bool = True) -> list[Meld] | None:
    c, rules = rules_for(contract, wd, distinct)
    hand = parse_cards(text)
    melds = find_contract(hand, c, rules)
    assert could_go_down(hand, c, rules) == (melds is not None)
    best = find_best_contract(hand, c, rules)
    assert (best is None) == (melds is None)
    if melds is not None:
        verify(hand, c, rules, melds)
        verify(hand, c, rules, best)
    return melds


def test_hand_one_example() -> None:
    melds = go("8C 8D 8S KH KS JK", "2S3")
    assert melds is not None
    assert sorted(m.rank for m in melds) == [8, 13]


def test_two_sets_of_one_rank() -> None:
    assert go("8C 8D 8S 8H 8C JK", "2S3") is None
    melds = go("8C 8D 8S 8H 8C JK", "2S3", distinct=False)
    assert melds is not None and [m.rank for m in melds] == [8, 8]


def test_r7_needs_an_eight_card_run() -> None:
    # 3 4 _ _ _ _ 9 10: every 7-window has 3 naturals and 4 wilds
    melds = go("3H 4H 9H 10H JK JK 2C 2D", "R7")
    assert melds is not None and len(melds[0].cards) == 8
    assert go("3H 4H 9H 10H JK JK 2C", "R7") is None


def test_r3_and_r5_need_longer_runs() -> None:
    # naturals 5 and 8 need 6-7 (two wilds): a 4-card run for R3
    melds = go("5C 8C JK JK", "R3")
    assert melds is not None and len(melds[0].cards) == 4
    assert go("5C 8C JK", "R3") is None
    # naturals 3 4 8: no 5-window holds 3 of them; 3..8 is 3 naturals + 3 wilds
    melds = go("3D 4D 8D JK JK 2H", "R5")
    assert melds is not None and len(melds[0].cards) == 6
    assert go("3D 4D 8D JK JK", "R5") is None


def test_two_natural_in_its_own_run() -> None:
    melds = go("AS 2S 3S 4S", "R4")
    assert melds is not None and melds[0].wilds == 0
    assert go("AS 2S 3S 4S", "R4", wd=False) is not None
    # a 2 of another suit is wild: 1 natural short
    assert go("AS 2H 3S 4S", "R4") is not None
    assert go("AS 2H 2D 4S", "R4") is not None  # A W W 4: 2 naturals, 2 wilds
    assert go("AS 2H 2D 5S", "R4") is None


def test_two_as_wild_away_from_its_place() -> None:
    melds = go("JK 2D 5D 6D", "R4")
    assert melds is not None
    assert melds[0].naturals == 2 and melds[0].wilds == 2


def test_set_of_twos() -> None:
    assert go("2C 2D 2H 7S 7H 7D", "2S3") is not None
    assert go("2C 2D JK 7S 7H 7D", "2S3") is not None
    assert go("2C JK JK 7S 7H 7D", "2S3") is None


def test_natural_must_go_to_the_run() -> None:
    # 7H is needed in the heart run; the set of 7s takes the joker instead
    melds = go("7H 7S 7D 5H 6H 8H JK", "S3+R4")
    assert melds is not None
    assert Card(7, "H") in melds[1].cards


def test_natural_must_go_to_the_set() -> None:
    # 7H must go to the set (7H 7S JK); the run 4H 5H 6H + wild... would leave the set 7S alone
    hand = "7H 7S 4H 5H 6H JK"
    melds = go(hand, "S3+R4")
    assert melds is None  # 6 cards cannot make 3 + 4
    melds = go("7H 7S 4H 5H 6H JK 2C", "S3+R4")
    assert melds is not None
    assert Card(7, "H") in melds[0].cards and Card(7, "H") not in melds[1].cards


def test_interior_card_withheld_for_a_set() -> None:
    # run 4C..8C must leave 6C to the set of 6s and bridge it with a wild
    melds = go("4C 5C 6C 7C 8C 6D JK", "S3+R5", distinct=True)
    assert melds is None  # set 6C 6D JK leaves 4 5 _ 7 8 with no wild
    melds = go("4C 5C 6C 7C 8C 6D JK JK", "S3+R5")
    assert melds is not None
    assert Card(6, "C") in melds[0].cards


def test_two_runs_share_a_suit() -> None:
    melds = go("3H 4H 5H 6H 7H 8H 9H 10H", "2R4")
    assert melds is not None
    assert go("3H 4H 5H 6H 7H 8H 9H", "2R4") is None
    assert go("3H 4H 5H 6H 7H 8H 9H JK", "2R4") is not None


def test_run_gives_an_inner_card_to_another_run() -> None:
    # R5 10C..AC must leave JC (or QC) to the R3, taking a joker in its place
    melds = go("JC KC QC AC 10C 10C AH JK JK", "R5+R3")
    assert melds is not None
    assert go("9D 2H 2H QD 10D 2H QD 6H", "2R3") is not None


def test_run_gives_an_inner_card_to_a_set() -> None:
    # the run 9D..QD must give a 10D to the set of 10s and bridge with a joker
    melds = go("JD QD 2D 9D 10D 10D JK JK", "S3+R4", wd=False)
    assert melds is not None and melds[0].rank == 10 and melds[0].naturals == 2
    melds = go("JH KH 7H 10H QH 4H 9H 5H JD JK JK", "S3+R5", wd=False)
    assert melds is not None and melds[0].rank == 11


def test_aces_high_or_low_not_both() -> None:
    assert go("QS KS AS JK", "R4") is not None
    assert go("AS 2S 3S JK", "R4") is not None
    assert go("KS AS 2S 3S", "R4", wd=False) is None
    assert go("2C 3C 4C 5C 6C 7C 8C 9C 10C JC QC KC AC", "R13", wd=False) is not None


def test_too_few_cards() -> None:
    assert go("JK JK JK", "S3") is None
    assert go("7C 7D", "S3") is None


def test_best_prefers_shedding_points() -> None:
    c, rules = rules_for("2S3")
    hand = parse_cards("5C 5D 5S KC KD KS AC AD AH 9C")
    best = find_best_contract(hand, c, rules)
    assert best is not None
    assert sorted(m.rank for m in best) == [1, 13]
    c, rules = rules_for("R4")
    hand = parse_cards("3H 4H 5H 6H 7H 8H JK 2C")
    best = find_best_contract(hand, c, rules)
    assert best is not None and len(best[0].cards) == 6 and best[0].wilds == 0


def test_large_hands_are_fast() -> None:
    rng = random.Random("large")
    shoe = make_shoe(4)
    worst = 0.0
    for trial in range(120):
        text = _contract_pool()[trial % len(_contract_pool())]
        c, rules = rules_for(text, trial % 2 == 0, trial % 3 != 0)
        rng.shuffle(shoe)
        hand = shoe[:rng.randint(15, 25)]
        t = time.perf_counter()
        melds = find_contract(hand, c, rules)
        worst = max(worst, time.perf_counter() - t)
        if melds is not None:
            verify(hand, c, rules, melds)
        best = find_best_contract(hand, c, rules)
        assert (best is None) == (melds is None)
        if best is not None:
            verify(hand, c, rules, best)
    assert worst < 0.5, worst
