"""The layering the code is written to: each layer imports only what is below it.

- ``arena.shanghai`` (the rules) imports nothing else from arena;
- ``arena.protocol`` (bytes <-> typed messages) nothing of processes, matches or tournaments;
- ``arena.process`` (bot processes) nothing of the game or the protocol, and its
  ``confine`` (what a bot may use, what the kernel enforces and the watchdog watches)
  nothing of the rest of ``arena.process``, which talks to a bot and builds on it;
- ``arena.ranking`` (ratings and matchmaking) nothing of games, protocol or processes;
- ``arena.league`` (the league) only the command line imports, and of it only
  ``arena.cli.league``'s ``serve`` the web page (``arena.league.web``: Starlette), which
  nothing else of the league imports;
- the executors (``arena.tournament.executors``) nothing of the game, the protocol, the players
  or bot processes: the Ray executor moves specs and outcomes as they are, and what must read
  them on a node (moving their paths to the node's copy of the files, sending the logs back,
  checking the sandbox) is the tournament layer's (``arena.tournament.executors.node``).  Of
  ``arena.process`` they use ``confine.affinity`` alone: which CPU a worker plays on, nothing of bots.

Read from the source (every import statement, relative ones resolved), so an
import hidden inside a function counts too.
"""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator
from pathlib import Path

import pytest

ARENA = Path(__file__).resolve().parent.parent / "arena"

# arena/tournament's packages, lowest first: config < pairing < results <
# standings < the run (the modules of arena/tournament itself) < cli.
_RUN = tuple(f"arena.tournament.{m}" for m in ("runner", "preflight", "progress", "estimate", "sharing", "changed",
                                               "earlier", "runlock", "newfolders"))
_ABOVE_STANDINGS = ("arena.tournament.executors", *_RUN, "arena.cli", "arena.report")
_ABOVE_RESULTS = ("arena.tournament.standings", *_ABOVE_STANDINGS)
_ABOVE_PAIRING = ("arena.tournament.results", *_ABOVE_RESULTS)

FORBIDDEN: dict[str, tuple[str, ...]] = {
    "arena.shanghai": ("arena.",),                 # anything outside arena.shanghai
    "arena.protocol": ("arena.process", "arena.match", "arena.tournament", "arena.cli", "arena.players"),
    "arena.process": ("arena.shanghai", "arena.protocol", "arena.match", "arena.tournament", "arena.players"),
    "arena.process.confine": ("arena.shanghai", "arena.protocol", "arena.match", "arena.tournament", "arena.players",
                              "arena.process"),
    "arena.ranking": ("arena.shanghai", "arena.protocol", "arena.process", "arena.match", "arena.tournament"),
    "arena.tournament.executors": ("arena.shanghai", "arena.protocol", "arena.process", "arena.players",
                                   "arena.check"),
    "arena.tournament.config": ("arena.tournament.pairing", *_ABOVE_PAIRING),
    # load_config reads the file and checks its schedule fits (pairing): above pairing, below the rest
    "arena.tournament.config.load": _ABOVE_PAIRING,
    "arena.tournament.pairing": _ABOVE_PAIRING,
    "arena.tournament.results": _ABOVE_RESULTS,
    "arena.tournament.standings": _ABOVE_STANDINGS,
    # The league stands on the tournament, the checker, the ranking and the report: none of them knows it.
    "arena.tournament": ("arena.league",),
    "arena.check": ("arena.league", "arena.cli"),
    "arena.report": ("arena.league", "arena.cli"),
    "arena.match": ("arena.league", "arena.cli"),
    "arena.players": ("arena.league", "arena.cli"),
    "arena.league": ("arena.cli", "arena.league.web"),
}
# Exceptions to FORBIDDEN: a module a layer may import although its package is above it.
ALLOWED: dict[str, tuple[str, ...]] = {
    "arena.tournament.executors": ("arena.process.confine.affinity",),
    "arena.process.confine": ("arena.process.confine",),
}
# Modules of a layer that its rule does not cover.  The executors' package holds the
# match's side of a worker too: what a worker runs (``worker``: plays the match), what
# comes back (``outcome``: a result, or a failure told in one line) and what a Ray node
# does to a spec (``node``).  The executors import ``worker`` only in the worker.
EXEMPT: dict[str, tuple[str, ...]] = {
    "arena.tournament.executors": ("arena.tournament.executors.worker", "arena.tournament.executors.node",
                                   "arena.tournament.executors.outcome"),
    "arena.tournament.config": ("arena.tournament.config.load",),     # its own rule above
    "arena.league": ("arena.league.web", "arena.league.web.app", "arena.league.web.serve"),   # the page itself
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ARENA.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _statements(path: Path) -> Iterator[tuple[str, list[str]]]:
    """Each import statement of ``path`` (in a function too): the module it names, absolute,
    and the names it takes from it (none for ``import x``)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield target, [alias.name for alias in node.names]


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports, absolute."""
    found: set[str] = set()
    for target, names in _statements(path):
        found.add(target)
        found.update(f"{target}.{n}" for n in names)
    return found


def arena_modules() -> dict[str, Path]:
    # A compiled module is known by its stub (arena/process/_fastpipe.pyi).
    return {module_name(path): path for path in [*ARENA.rglob("*.py"), *ARENA.rglob("*.pyi")]}


def module_edges(path: Path, modules: Collection[str]) -> set[str]:
    """The arena modules ``path`` imports: ``from pkg import mod`` is an arrow to ``mod``
    alone (a package's ``__init__`` runs first, but it is not what the line reads);
    ``from pkg import Name`` to ``pkg``; ``import a.b.c`` to its longest arena module."""
    found: set[str] = set()
    for target, names in _statements(path):
        submodules = {f"{target}.{n}" for n in names} & set(modules)
        if names and len(submodules) == len(names):
            found.update(submodules)
            continue
        found.update(submodules)
        while target and target not in modules:
            target = target.rpartition(".")[0]
        if target.startswith("arena"):
            found.add(target)
    found.discard(module_name(path))
    return found


def import_circles() -> list[list[str]]:
    modules = arena_modules()
    return circles_of({name: sorted(module_edges(path, modules)) for name, path in modules.items()})


def circles_of(graph: dict[str, list[str]]) -> list[list[str]]:
    """The strongly connected sets of more than one module (Tarjan): each a circle or circles that touch."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = stack[stack.index(v):]
            del stack[stack.index(v):]
            if len(part) > 1:
                circles.append(sorted(part))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return circles


def test_relative_imports_are_resolved() -> None:
    assert "arena.jsonline" in imports_of(ARENA / "protocol" / "messages.py")
    assert "arena.shanghai.events" in imports_of(ARENA / "shanghai" / "game.py")


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_a_layer_imports_nothing_above_it(layer: str) -> None:
    root = ARENA.joinpath(*layer.split(".")[1:])
    files = sorted(root.rglob("*.py")) if root.is_dir() else [root.with_suffix(".py")]
    files = [path for path in files if module_name(path) not in EXEMPT.get(layer, ())]
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




def test_no_import_circles() -> None:
    """No module imports, through others, itself: at module level or inside a function."""
    found = import_circles()
    assert not found, "\n".join(" <-> ".join(circle) for circle in found)


def test_the_circle_finder_finds_circles() -> None:
    graph = {"a": ["b"], "b": ["c"], "c": ["a", "d"], "d": [], "e": ["d", "f"], "f": ["e"]}
    assert sorted(circles_of(graph)) == [["a", "b", "c"], ["e", "f"]]
    edges = module_edges(ARENA / "shanghai" / "game.py", arena_modules())     # from . import events as ev
    assert "arena.shanghai.events" in edges and "arena.shanghai" not in edges


def test_nothing_below_the_command_line_imports_it() -> None:
    """``arena.cli`` (click) is the top layer: no arrow points up to it."""
    wrong = [f"{path.relative_to(ARENA.parent)} imports {target}"
             for name, path in sorted(arena_modules().items()) if not name.startswith(("arena.cli", "arena.__main__"))
             for target in sorted(imports_of(path)) if target == "arena.cli" or target.startswith("arena.cli.")]
    assert not wrong, "\n".join(wrong)
