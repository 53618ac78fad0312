"""The layering the code is written to: each layer imports only what is below it.

- ``arena.shanghai`` (the rules) imports nothing else from arena;
- ``arena.protocol`` (bytes <-> typed messages) nothing of processes, matches or tournaments;
- ``arena.process`` (bot processes) nothing of the game or the protocol;
- ``arena.ranking`` (ratings and matchmaking) nothing of games, protocol or processes;
- the executors (``arena.tournament.executors``) nothing of the game, the protocol, the players
  or bot processes: the Ray executor moves specs and outcomes as they are, and what must read
  them on a node (moving their paths to the node's copy of the files, sending the logs back,
  checking the sandbox) is the tournament layer's (``arena.tournament.node``).  Of
  ``arena.process`` they use ``affinity`` alone: which CPU a worker plays on, nothing of bots.

Read from the source (every import statement, relative ones resolved), so an
import hidden inside a function counts too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ARENA = Path(__file__).resolve().parent.parent / "arena"

FORBIDDEN: dict[str, tuple[str, ...]] = {
    "arena.shanghai": ("arena.",),                 # anything outside arena.shanghai
    "arena.protocol": ("arena.process", "arena.match", "arena.tournament", "arena.cli", "arena.players"),
    "arena.process": ("arena.shanghai", "arena.protocol", "arena.match", "arena.tournament", "arena.players"),
    "arena.ranking": ("arena.shanghai", "arena.protocol", "arena.process", "arena.match", "arena.tournament"),
    "arena.tournament.executors": ("arena.shanghai", "arena.protocol", "arena.process", "arena.players",
                                   "arena.check"),
}
# Exceptions to FORBIDDEN: a module a layer may import although its package is above it.
ALLOWED: dict[str, tuple[str, ...]] = {
    "arena.tournament.executors": ("arena.process.affinity",),
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ARENA.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports, absolute."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return found


def test_relative_imports_are_resolved() -> None:
    assert "arena.jsonline" in imports_of(ARENA / "protocol" / "messages.py")
    assert "arena.shanghai.events" in imports_of(ARENA / "shanghai" / "game.py")


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_a_layer_imports_nothing_above_it(layer: str) -> None:
    root = ARENA.joinpath(*layer.split(".")[1:])
    files = sorted(root.rglob("*.py")) if root.is_dir() else [root.with_suffix(".py")]
    assert files, layer
    wrong = []
    for path in files:
        for target in sorted(imports_of(path)):
            if not target.startswith("arena"):
                continue
            if layer == "arena.shanghai" and (target == "arena.shanghai" or target.startswith("arena.shanghai.")):
                continue
            if any(target == ok or target.startswith(ok + ".") for ok in ALLOWED.get(layer, ())):
                continue
            if any(target == bad.rstrip(".") or target.startswith(bad.rstrip(".") + ".") or
                   (bad.endswith(".") and target.startswith(bad)) for bad in FORBIDDEN[layer]):
                wrong.append(f"{path.relative_to(ARENA.parent)} imports {target}")
    assert not wrong, "\n".join(wrong)
