"""The ruleset: every setting of the rules brief, with presets.

A ruleset is loaded from a plain mapping (the YAML layer lives elsewhere):
``Ruleset.from_mapping({"preset": "pagat", "buy_penalty": 1})``.  Unknown
keys and out-of-range values raise ``RulesetError`` naming the setting.

Contracts are written compactly: ``S3`` is a set of at least 3, ``R4`` a run
of at least 4, a leading count repeats a term and ``+`` joins terms, so hand
10 of the default list is ``2S3+2R4``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .errors import RulesetError
from .record import field, record
from .vocab import MeldKind

TYPE_CHECKING = False  # typing's flag without loading typing, which bots never need (tests/test_botstart.py)
if TYPE_CHECKING:
    from typing import Any

# The names the engine and its callers have always used.
SET = MeldKind.SET
RUN = MeldKind.RUN

MIN_PLAYERS = 2
MAX_PLAYERS = 8


@record
class MeldSpec:
    """One required meld of a contract: a set or a run of at least ``min_len``."""

    kind: MeldKind
    min_len: int

    @property
    def text(self) -> str:
        return ("S" if self.kind == SET else "R") + str(self.min_len)


@record
class Contract:
    """What a player must lay down to go down in one hand.

    ``sets``, ``runs``, ``size`` and ``text`` are computed once: players and
    the finder ask for them on every decision.
    """

    melds: tuple[MeldSpec, ...]
    sets: tuple[MeldSpec, ...] = field(init=False, repr=False, compare=False)
    runs: tuple[MeldSpec, ...] = field(init=False, repr=False, compare=False)
    size: int = field(init=False, repr=False, compare=False)
    text: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        parts: list[str] = []
        for spec in sorted(set(self.melds), key=lambda s: (s.kind != SET, s.min_len)):
            n = self.melds.count(spec)
            parts.append((str(n) if n > 1 else "") + spec.text)
        object.__setattr__(self, "sets", tuple(m for m in self.melds if m.kind == SET))
        object.__setattr__(self, "runs", tuple(m for m in self.melds if m.kind == RUN))
        object.__setattr__(self, "size", sum(m.min_len for m in self.melds))
        object.__setattr__(self, "text", "+".join(parts))

    def describe(self) -> str:
        words: list[str] = []
        for spec in sorted(set(self.melds), key=lambda s: (s.kind != SET, s.min_len)):
            n = self.melds.count(spec)
            noun = spec.kind + ("s" if n > 1 else "")
            words.append(f"{n} {noun} of {spec.min_len}")
        return " + ".join(words)


_TERM = re.compile(r"^\s*(\d*)\s*([SR])\s*(\d+)\s*$", re.IGNORECASE)


def parse_contract(text: object, setting: str = "contracts") -> Contract:
    if not isinstance(text, str) or not text.strip():
        raise RulesetError(setting, f"a contract must be a string like '2S3+R4', got {text!r}")
    melds: list[MeldSpec] = []
    for term in text.split("+"):
        m = _TERM.match(term)
        if not m:
            raise RulesetError(
                setting, f"cannot read contract term {term.strip()!r} in {text!r}: "
                "write e.g. S3 (set of 3), R4 (run of 4), 2S3 (two sets of 3)"
            )
        count = int(m.group(1) or 1)
        kind = SET if m.group(2).upper() == "S" else RUN
        min_len = int(m.group(3))
        if count < 1 or count > 6:
            raise RulesetError(setting, f"{text!r}: {count} melds of one kind is out of range 1..6")
        if kind == SET and not 3 <= min_len <= 8:
            raise RulesetError(setting, f"{text!r}: a set must be of 3 to 8 cards")
        if kind == RUN and not 3 <= min_len <= 13:
            raise RulesetError(setting, f"{text!r}: a run must be of 3 to 13 cards")
        melds.extend([MeldSpec(kind, min_len)] * count)
    melds.sort(key=lambda s: (s.kind != SET, s.min_len))
    return Contract(tuple(melds))


SHANGHAI_CONTRACTS = (
    "2S3", "S3+R4", "2R4", "3S3", "2S3+R4", "S3+2R4", "3R4", "4S3", "3S3+R4", "2S3+2R4",
)
PAGAT_CONTRACTS = (
    "2S3", "S3+R4", "2R4", "3S3", "S3+R7", "2S3+R5", "3R4", "S3+R10", "3S3+R5", "3R5",
)
DEFAULT_DECKS = {2: 2, 3: 2, 4: 2, 5: 3, 6: 3, 7: 4, 8: 4}


@record(slots=False)
class Ruleset:
    """Every setting of the rules brief. Build it with ``from_mapping`` or a preset."""

    name: str = "shanghai"
    contracts: tuple[Contract, ...] = field(
        default_factory=lambda: tuple(parse_contract(c) for c in SHANGHAI_CONTRACTS)
    )
    deal_sizes: tuple[int, ...] = (11,) * 10
    decks: tuple[tuple[int, int], ...] = tuple(sorted(DEFAULT_DECKS.items()))
    wild_deuces: bool = True
    distinct_set_ranks: bool = True
    buy_penalty: int = 2
    buy_priority: str = "dealer_left"
    buy_limits: tuple[int, ...] = (3,) * 8 + (4,) * 2
    turn_cap_per_player: int = 60
    max_reshuffles: int = 1

    # -- derived -------------------------------------------------------------
    @property
    def hands(self) -> int:
        return len(self.contracts)

    def decks_for(self, players: int) -> int:
        return dict(self.decks)[players]

    def contract(self, hand: int) -> Contract:
        """Contract of ``hand`` (0-based)."""
        return self.contracts[hand]

    def deal_size(self, hand: int) -> int:
        return self.deal_sizes[hand]

    def buy_limit(self, hand: int) -> int:
        return self.buy_limits[hand]

    # -- mapping form ----------------------------------------------------------
    def to_mapping(self) -> dict[str, Any]:
        """A plain, JSON-friendly mapping that ``from_mapping`` reads back exactly."""
        return {
            "preset": self.name,
            "contracts": [c.text for c in self.contracts],
            "deal_size": list(self.deal_sizes),
            "decks": {str(p): d for p, d in self.decks},
            "wild_deuces": self.wild_deuces,
            "distinct_set_ranks": self.distinct_set_ranks,
            "buy_penalty": self.buy_penalty,
            "buy_priority": self.buy_priority,
            "buy_limits": list(self.buy_limits),
            "turn_cap_per_player": self.turn_cap_per_player,
            "max_reshuffles": self.max_reshuffles,
        }

    @classmethod
    def preset(cls, name: str) -> Ruleset:
        return cls.from_mapping({"preset": name})

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any] | None = None) -> Ruleset:
        data = dict(mapping or {})
        preset = data.pop("preset", "shanghai")
        if not isinstance(preset, str) or preset not in PRESETS:
            raise RulesetError("preset", f"unknown preset {preset!r}; choose one of {sorted(PRESETS)}")
        values: dict[str, Any] = dict(PRESETS[preset])
        for key in data:
            if key not in _SETTINGS:
                raise RulesetError(key, f"unknown setting; known settings are {', '.join(sorted(_SETTINGS))}")
        values.update(data)
        return _build(preset, values)


PRESETS: dict[str, dict[str, Any]] = {
    "shanghai": {"contracts": list(SHANGHAI_CONTRACTS)},
    "pagat": {"contracts": list(PAGAT_CONTRACTS)},
}

_SETTINGS = {
    "contracts", "deal_size", "decks", "wild_deuces", "distinct_set_ranks", "buy_penalty",
    "buy_priority", "buy_limits", "turn_cap_per_player", "max_reshuffles",
}


def _int(name: str, value: Any, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise RulesetError(name, f"expected a whole number, got {value!r}")
    if not lo <= value <= hi:
        raise RulesetError(name, f"{value} is out of range {lo}..{hi}")
    return value


def _bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise RulesetError(name, f"expected true or false, got {value!r}")
    return value


def _per_hand(name: str, value: Any, hands: int, lo: int, hi: int, default: tuple[int, ...] | None) -> tuple[int, ...]:
    """An int for every hand, or a list with one entry per hand."""
    if value is None and default is not None:
        value = default
    if isinstance(value, (list, tuple)):
        if len(value) != hands:
            raise RulesetError(name, f"has {len(value)} entries but the contract list has {hands} hands")
        return tuple(_int(f"{name}[{i}]", v, lo, hi) for i, v in enumerate(value))
    return (_int(name, value, lo, hi),) * hands


def _build(preset: str, v: dict[str, Any]) -> Ruleset:
    raw_contracts = v.get("contracts")
    if not isinstance(raw_contracts, (list, tuple)) or not raw_contracts:
        raise RulesetError("contracts", "expected a non-empty list such as ['2S3', 'S3+R4']")
    if len(raw_contracts) > 20:
        raise RulesetError("contracts", f"{len(raw_contracts)} hands is out of range 1..20")
    contracts = tuple(parse_contract(c, f"contracts[{i}]") for i, c in enumerate(raw_contracts))
    hands = len(contracts)

    deal_sizes = _per_hand("deal_size", v.get("deal_size", 11), hands, 1, 30, None)
    default_limits = tuple(3 if i < hands - 2 else 4 for i in range(hands))
    buy_limits = _per_hand("buy_limits", v.get("buy_limits"), hands, 0, 20, default_limits)

    raw_decks = v.get("decks", DEFAULT_DECKS)
    if isinstance(raw_decks, int) and not isinstance(raw_decks, bool):
        decks = {p: _int("decks", raw_decks, 1, 8) for p in range(MIN_PLAYERS, MAX_PLAYERS + 1)}
    elif isinstance(raw_decks, Mapping):
        decks = dict(DEFAULT_DECKS)
        for key, val in raw_decks.items():
            try:
                players = int(key)
            except (TypeError, ValueError):
                raise RulesetError("decks", f"key {key!r} is not a number of players") from None
            if not MIN_PLAYERS <= players <= MAX_PLAYERS:
                raise RulesetError("decks", f"{players} players is out of range {MIN_PLAYERS}..{MAX_PLAYERS}")
            decks[players] = _int(f"decks.{players}", val, 1, 8)
    else:
        raise RulesetError("decks", f"expected a number or a mapping players -> decks, got {raw_decks!r}")

    priority = v.get("buy_priority", "dealer_left")
    if priority not in ("dealer_left", "turn_order"):
        raise RulesetError("buy_priority", f"expected 'dealer_left' or 'turn_order', got {priority!r}")

    rules = Ruleset(
        name=preset,
        contracts=contracts,
        deal_sizes=deal_sizes,
        decks=tuple(sorted(decks.items())),
        wild_deuces=_bool("wild_deuces", v.get("wild_deuces", True)),
        distinct_set_ranks=_bool("distinct_set_ranks", v.get("distinct_set_ranks", True)),
        buy_penalty=_int("buy_penalty", v.get("buy_penalty", 2), 0, 5),
        buy_priority=priority,
        buy_limits=buy_limits,
        turn_cap_per_player=_int("turn_cap_per_player", v.get("turn_cap_per_player", 60), 1, 10_000),
        max_reshuffles=_int("max_reshuffles", v.get("max_reshuffles", 1), 0, 100),
    )
    return rules

