"""``arena.shanghai.record`` behaves as the frozen dataclasses it replaced.

Each class below is declared twice, once with ``@record`` and once with
``@dataclass(frozen=True, ...)``, and both are put through the same checks:
construction, defaults, equality, hashing, repr, frozenness, replace,
pickling and copying.  The engine's own classes are then checked for what
the engine relies on: interned cards stay interned through pickle and copy,
derived fields are computed, a view rebuilds from its fields.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import pytest

from arena.botkit import MatchInfo
from arena.shanghai.actions import GoDown, LayOff, MeldCards, Play, Swap, action_from_json
from arena.shanghai.cards import JOKER, Card, parse_card
from arena.shanghai.game import Game
from arena.shanghai.melds import make_set
from arena.shanghai.record import FrozenInstanceError, field, fields, record, replace
from arena.shanghai.ruleset import Contract, Ruleset, parse_contract
from arena.shanghai.view import View

RULES = Ruleset.from_mapping({"contracts": ["2S3", "S3+R4"]})


def _factory() -> list[int]:
    return [1]


@record
class FastR:
    a: int
    b: str = "x"
    c: dict[int, int] = field(default_factory=dict)


@dataclasses.dataclass(frozen=True, slots=True)
class FastD:
    a: int
    b: str = "x"
    c: dict[int, int] = dataclasses.field(default_factory=dict)


@record
class DerivedR:
    a: int
    hidden: int = field(init=False, repr=False, compare=False)
    note: str = field(default="n", compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "hidden", self.a * 2)


@dataclasses.dataclass(frozen=True, slots=True)
class DerivedD:
    a: int
    hidden: int = dataclasses.field(init=False, repr=False, compare=False)
    note: str = dataclasses.field(default="n", compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "hidden", self.a * 2)


@record(slots=False)
class PlainR:
    a: int
    items: list[int] = field(default_factory=_factory)
    raw: str = field(default="r", repr=False)


@dataclasses.dataclass(frozen=True)
class PlainD:
    a: int
    items: list[int] = dataclasses.field(default_factory=_factory)
    raw: str = dataclasses.field(default="r", repr=False)


PAIRS: list[tuple[Any, Any, tuple[Any, ...]]] = [
    (FastR, FastD, (1, "y")),
    (DerivedR, DerivedD, (3,)),
    (PlainR, PlainD, (4, [5])),
]


def _shown(obj: object) -> str:
    return repr(obj).split("(", 1)[1]     # the class names differ, nothing else may


@pytest.mark.parametrize(("rec", "dc", "args"), PAIRS, ids=["fast", "derived", "plain"])
def test_a_record_behaves_as_the_frozen_dataclass(rec: Any, dc: Any, args: tuple[Any, ...]) -> None:
    r, d = rec(*args), dc(*args)
    names = [f.name for f in dataclasses.fields(dc)]
    assert [f.name for f in fields(rec)] == names == [f.name for f in fields(r)]
    assert [getattr(r, n) for n in names] == [getattr(d, n) for n in names]
    assert _shown(r) == _shown(d)
    assert r == rec(*args) and r != rec(*((9,) + args[1:])) and (r == d) is False
    assert rec.__match_args__ == dc.__match_args__
    assert hasattr(r, "__dict__") == hasattr(d, "__dict__")
    with pytest.raises(FrozenInstanceError):
        r.a = 2
    with pytest.raises(AttributeError):       # dataclasses' FrozenInstanceError is one too
        del r.a
    with pytest.raises(TypeError):
        rec()
    with pytest.raises(TypeError):
        rec(*args, 1, 2, 3, 4)
    changed = replace(r, a=7)
    assert changed.a == 7 and [getattr(changed, n) for n in names[1:]] == [getattr(dataclasses.replace(d, a=7), n)
                                                                          for n in names[1:]]
    for twin in (pickle.loads(pickle.dumps(r)), copy.copy(r), copy.deepcopy(r)):
        assert type(twin) is rec and twin == r and [getattr(twin, n) for n in names] == [getattr(r, n) for n in names]


def test_hashing_and_equality_use_the_compared_fields_only() -> None:
    assert DerivedR(3, note="a") == DerivedR(3, note="b") != DerivedR(4)
    assert hash(DerivedR(3, note="a")) == hash(DerivedR(3, note="b")) == hash(DerivedD(3)) == hash((3,))
    for unhashable in (FastR(1), FastD(1), PlainR(1, [2]), PlainD(1, [2])):   # a dict or list field
        with pytest.raises(TypeError):
            hash(unhashable)


def test_defaults_and_factories_are_per_object() -> None:
    a, b = FastR(1), FastR(1)
    assert a.c == {} and a.c is not b.c and a.b == "x"
    assert PlainR(1).items == [1] and PlainR(1).items is not PlainR(1).items
    assert FastR(a=2, c={3: 4}, b="z") == FastR(2, "z", {3: 4})


def test_replace_refuses_a_field_not_set_at_construction() -> None:
    with pytest.raises(ValueError, match="hidden"):
        replace(DerivedR(1), hidden=5)
    assert replace(DerivedR(1), a=4).hidden == 8


def test_a_fast_record_is_a_true_instance_and_cannot_be_subclassed() -> None:
    s = FastR(2, "y")
    assert type(s) is FastR and isinstance(s, FastR)
    with pytest.raises(TypeError, match="cannot be subclassed"):
        type("Sub", (FastR,), {"__slots__": ()})
    with pytest.raises(TypeError):
        fields(3)


@record
class _Bag:
    items: dict[str, Any] = field(default_factory=dict)


def test_the_engine_values_keep_what_the_engine_relies_on() -> None:
    for c in (parse_card("7H"), JOKER):
        assert pickle.loads(pickle.dumps(c)) is c and copy.deepcopy(c) is c and Card(c.rank, c.suit) is c
        assert repr(c) == f"Card({c.text})"
    contract = parse_contract("2S3+R4")
    assert (contract.text, contract.size, len(contract.sets), len(contract.runs)) == ("2S3+R4", 10, 2, 1)
    assert pickle.loads(pickle.dumps(contract)) == contract and hash(contract) == hash(parse_contract("2S3+R4"))
    assert pickle.loads(pickle.dumps(RULES)) == RULES and hash(RULES) == hash(Ruleset.from_mapping(RULES.to_mapping()))
    assert isinstance(Contract(contract.melds), Contract)
    bag = _Bag()
    assert bag.items == {} and _Bag().items is not bag.items
    view = Game.seeded(RULES, 3, 1).view(0)
    assert View(**{f.name: getattr(view, f.name) for f in fields(View)}) == view
    assert replace(view, history=()).history == () and replace(view, history=()).hand == view.hand
    meld = make_set([parse_card(t) for t in ("7H", "7S", "7C")])
    assert pickle.loads(pickle.dumps(meld)) == meld and hash(copy.copy(meld)) == hash(meld)
    play = Play((GoDown((MeldCards(meld.cards),)), LayOff(0, JOKER), Swap(0, JOKER)), None)
    assert action_from_json(play.to_json()) == play
    info = MatchInfo.from_message({"match": "m", "seat": 1, "players": 3, "names": ["a", "b", "c"]})
    assert "raw=" not in repr(info) and info.seat == 1
    with pytest.raises(FrozenInstanceError):
        info.seat = 2  # type: ignore[misc]
