"""The head-to-head table's sign test over more than 1,023 duplicate deals
(issue 34): two bots of a 20,000-match round robin of five share 3,000, and
``2.0 ** n`` overflowed a float there, so ``arena report`` of such a
tournament ended in a traceback."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from arena.ranking import sign_test


def exact(ahead: int, behind: int) -> float:
    n, k = ahead + behind, min(ahead, behind)
    return float(min(Fraction(1), 2 * Fraction(sum(math.comb(n, i) for i in range(k + 1)), 2 ** n)))


@pytest.mark.parametrize("ahead,behind", [(1100, 1000), (1000, 1100), (1500, 1500), (3000, 0), (1700, 1300),
                                          (512, 512), (600, 423), (5, 0), (7, 3)])
def test_sign_test_is_the_exact_tail_beyond_a_floats_range(ahead: int, behind: int) -> None:
    assert sign_test(ahead, behind) == pytest.approx(exact(ahead, behind), rel=1e-12, abs=0)


def test_a_clear_difference_over_many_deals_is_significant_and_an_even_one_is_not() -> None:
    assert 0 < sign_test(1200, 1000) < 0.05 < sign_test(1030, 1000) <= 1.0
    assert sign_test(1500, 1500) == 1.0
