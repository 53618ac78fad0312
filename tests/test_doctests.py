"""The rules engine's examples (its docstrings' ``>>>`` lines) run as written.

Run here rather than by ``--doctest-modules``, which would have pytest
import every module under the test paths: only ``arena.shanghai`` is meant.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import arena.shanghai

MODULES = sorted(m.name for m in pkgutil.walk_packages(arena.shanghai.__path__, "arena.shanghai."))


@pytest.mark.parametrize("name", MODULES)
def test_the_engines_examples_run(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


def test_the_public_entry_points_have_examples() -> None:
    finder = doctest.DocTestFinder()
    from arena.shanghai import actions, events, game, view, vocab
    for obj, name in ((game.Game, "Game"), (view.places_of, "places_of"), (actions.action_from_json, "action_from_json"),
                      (events, "events"), (vocab, "vocab")):
        assert any(t.examples for t in finder.find(obj, name)), name
