"""Count vectors of a hand, the card tables behind them, and run windows.

Cards are indexed suit * 13 + rank - 1; run positions are values 1..14.  A
suit's presence mask has bit v set when a natural of value v is in hand.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..cards import Card

_BIG = 1 << 30
_SUIT_BASE = {"C": 0, "D": 13, "H": 26, "S": 39}

# Run positions are values 1..14 (1 = low ace, 14 = high ace).
_VRANK = [0] + list(range(1, 14)) + [1]          # value -> rank
_VOFF = [0] + list(range(0, 13)) + [0]           # value -> index within suit
# rank -> bits of the presence mask it sets (the ace is both 1 and 14)
_RBITS = [0, (1 << 1) | (1 << 14)] + [1 << r for r in range(2, 14)]
# rank -> penalty when left in hand (same as Card.penalty, by rank)
_PEN = [25, 15, 20, 5, 5, 5, 5, 5, 5, 5, 10, 10, 10, 10]

_BITS_CACHE: dict[int, tuple[int, ...]] = {}


def _bits(mask: int) -> tuple[int, ...]:
    """Set positions of a presence mask, ascending (cached: masks repeat a lot)."""
    b = _BITS_CACHE.get(mask)
    if b is None:
        b = tuple(v for v in range(1, 15) if mask >> v & 1)
        _BITS_CACHE[mask] = b
    return b


_WINDOWS: dict[tuple[int, int], tuple[tuple[int, int, int, int, tuple[int, ...]], ...]] = {}


def _windows(mask: int, L: int) -> tuple[tuple[int, int, int, int, tuple[int, ...]], ...]:
    """Every run of minimum length L a suit with presence ``mask`` can hold
    on its own: (length, wilds, lo, hi, natural values), lo and hi natural.
    The search also asks it for a mask with borrowable cards added, and then
    recounts the wilds from the naturals the suit really owns.
    Cached: a suit's mask only changes when a run of that suit is placed."""
    key = (mask, L)
    out = _WINDOWS.get(key)
    if out is not None:
        return out
    bits = _bits(mask)
    nb = len(bits)
    found = []
    for i in range(nb - 1):
        lo = bits[i]
        for j in range(i + 1, nb):
            hi = bits[j]
            span = hi - lo + 1
            if span > 13 or span > 2 * (nb - i):
                break
            k = j - i + 1
            ln = span if span > L else L
            if ln <= 2 * k:
                found.append((ln, ln - k, lo, hi, bits[i:j + 1]))
    out = tuple(found)
    if len(_WINDOWS) > 100_000:
        _WINDOWS.clear()
    _WINDOWS[key] = out
    return out


# A run candidate as the search tries it: (length, wilds, suit, lo, hi, natural
# values, naturals owned, cells, inner values, -len(natural values), wild
# units).  cells are (card index, rank, mask without the rank's bits) per
# natural value, what placing the run changes in the count vectors (None:
# worked out when tried); inner values are the naturals strictly between lo
# and hi; wild units are the wilds plus, with wild deuces, the suit's own 2
# when the run holds it (a 2 used as a natural is a wild unit the pool loses).
_Cand = tuple[int, int, int, int, int, tuple[int, ...], int,
              "tuple[tuple[int, int, int], ...] | None", tuple[int, ...], int, int]

_CELLS: dict[tuple[int, tuple[int, ...]], tuple[tuple[int, int, int], ...]] = {}


def _cells(s: int, seg: tuple[int, ...]) -> tuple[tuple[int, int, int], ...]:
    """(card index, rank, ~bits) of each value of ``seg`` in suit ``s`` (cached)."""
    key = (s, seg)
    out = _CELLS.get(key)
    if out is None:
        base = s * 13
        out = tuple((base + _VOFF[v], _VRANK[v], ~_RBITS[_VRANK[v]]) for v in seg)
        if len(_CELLS) > 100_000:
            _CELLS.clear()
        _CELLS[key] = out
    return out


_CANDS: dict[tuple[int, int, int, int, bool], tuple[tuple[int, ...], tuple[_Cand, ...]]] = {}


def _suit_cands(mask: int, L: int, s: int, pool: int, wd: bool) -> tuple[tuple[int, ...], tuple[_Cand, ...]]:
    """The runs of ``_windows(mask, L)`` in suit ``s`` needing at most ``pool``
    wild units, as candidates, with their (lo << 4 | hi) keys: both ascending,
    so the candidates from a key on are a slice.  Cached: a node asks this for
    every suit, and suits change one card at a time."""
    key = (mask, L, s, pool, wd)
    out = _CANDS.get(key)
    if out is None:
        keys: list[int] = []
        cands: list[_Cand] = []
        for ln, w, lo, hi, seg in _windows(mask, L):
            units = w + 1 if wd and lo <= 2 <= hi and mask & 4 else w
            if units <= pool:
                keys.append(lo << 4 | hi)
                cands.append((ln, w, s, lo, hi, seg, len(seg), _cells(s, seg), seg[1:-1], -len(seg), units))
        out = (tuple(keys), tuple(cands))
        if len(_CANDS) > 100_000:
            _CANDS.clear()
        _CANDS[key] = out
    return out


class _State:
    """Count vectors of a hand: cards by index, naturals by rank, suit masks."""

    __slots__ = ("cnt", "nat", "masks", "jokers", "n")

    def __init__(self, hand: Sequence[Card]) -> None:
        cnt = [0] * 52
        nat = [0] * 14
        masks = [0, 0, 0, 0]
        jokers = 0
        rbits = _RBITS
        for c in hand:
            r = c.rank
            if r:
                i = c.index  # suit * 13 + rank - 1, as cnt is indexed
                cnt[i] += 1
                nat[r] += 1
                masks[i // 13] |= rbits[r]
            else:
                jokers += 1
        self.cnt = cnt
        self.nat = nat
        self.masks = masks
        self.jokers = jokers
        self.n = len(hand)
