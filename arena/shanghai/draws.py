"""``random.Random``'s shuffle and choice, drawing the same numbers for less.

The random player shuffles and picks on every play, and the engine shuffles
each hand's shoe: in CPython each draw goes through ``Random._randbelow``, a
Python method call per card.  These functions inline that method: for the
same generator state they make exactly the same ``getrandbits`` calls as
``Random.shuffle`` / ``Random.choice`` and give the same result, so seeded
matches play out as before.  That is CPython's algorithm from 3.2 on
(unchanged up to 3.13 at least); where it could differ (a subclass of
``random.Random``, or a Python whose ``Random`` no longer draws through
``_randbelow_with_getrandbits``) they call the generator's own method.
tests/test_engine_fast_paths.py checks them against it.
"""

from __future__ import annotations

import random
from collections.abc import MutableSequence, Sequence

TYPE_CHECKING = False  # typing's flag without loading typing, which bots never need (tests/test_botstart.py)
if TYPE_CHECKING:
    from typing import TypeVar
    T = TypeVar("T")

_Random = random.Random
# Whether random.Random draws integers below n the way this module copies.
_INLINE = getattr(_Random, "_randbelow", None) is getattr(_Random, "_randbelow_with_getrandbits", 0)
# n -> n.bit_length() for the sizes players shuffle (hands, tables, shoes)
_BITS = tuple(n.bit_length() for n in range(512))


def shuffle(rng: random.Random, x: MutableSequence[T]) -> None:
    """``rng.shuffle(x)``: the same permutation from the same draws."""
    n = len(x)
    if type(rng) is not _Random or not _INLINE or n >= len(_BITS):
        rng.shuffle(x)
        return
    getrandbits = rng.getrandbits
    bits = _BITS
    for i in range(n - 1, 0, -1):
        m = i + 1
        k = bits[m]
        j = getrandbits(k)
        while j >= m:
            j = getrandbits(k)
        x[i], x[j] = x[j], x[i]


def choice(rng: random.Random, seq: Sequence[T]) -> T:
    """``rng.choice(seq)``: the same element from the same draws."""
    n = len(seq)
    if type(rng) is not _Random or not _INLINE or not n or n >= len(_BITS):
        return rng.choice(seq)
    k = _BITS[n]
    getrandbits = rng.getrandbits
    j = getrandbits(k)
    while j >= n:
        j = getrandbits(k)
    return seq[j]
