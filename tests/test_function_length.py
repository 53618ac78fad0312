"""No function in arena/ grows past a screen (the project's rule).

A function's length counts its nested functions and classes, as a reader
scrolls through them all.  The allow-list names the ones not split yet, each
with its length now: it may only shrink, so none of them grows unnoticed."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 60

# "path::Class.function": its length (lines) when this list was written.
ALLOWED: dict[str, int] = {}


def function_lengths(root: Path) -> dict[str, int]:
    """Every function and method under ``root``/arena: qualified name -> lines."""
    out: dict[str, int] = {}

    def walk(node: ast.AST, where: str, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = prefix + child.name
                out[f"{where}::{name}"] = (child.end_lineno or child.lineno) - child.lineno + 1
                walk(child, where, name + ".")
            elif isinstance(child, ast.ClassDef):
                walk(child, where, prefix + child.name + ".")

    for path in sorted((root / "arena").rglob("*.py")):
        walk(ast.parse(path.read_text(encoding="utf-8")), path.relative_to(root).as_posix(), "")
    return out


def test_functions_fit_on_a_screen() -> None:
    lengths = function_lengths(ROOT)
    too_long = {name: n for name, n in lengths.items() if n > max(LIMIT, ALLOWED.get(name, 0))}
    assert not too_long, (f"functions over {LIMIT} lines (split them into named steps; "
                          f"the allow-list only shrinks): {too_long}")


def test_the_allow_list_names_only_long_functions() -> None:
    # a function split (or renamed) leaves the list, so the list stays true
    lengths = function_lengths(ROOT)
    stale = {name: lengths.get(name) for name in ALLOWED if lengths.get(name, 0) <= LIMIT}
    assert not stale, f"no longer over {LIMIT} lines (or gone): take them off ALLOWED: {stale}"


def test_the_measure_sees_nested_and_methods(tmp_path: Path) -> None:
    (tmp_path / "arena").mkdir()
    body = "\n".join(f"        x{i} = {i}" for i in range(70))
    (tmp_path / "arena" / "m.py").write_text(f"class C:\n    def f(self):\n        def g():\n            pass\n{body}\n")
    lengths = function_lengths(tmp_path)
    assert lengths["arena/m.py::C.f"] == 73
    assert lengths["arena/m.py::C.f.g"] == 2
