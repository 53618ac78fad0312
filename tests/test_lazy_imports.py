"""An import inside a function says why it is not at the top (tracker issue 31).

Imports belong at module level.  One stays in a function only where loading
it late is measured to matter (``tests/test_lean_imports.py``: what the
command line and the read-only commands load), where it is an optional
dependency, or where it is platform-bound; and then a comment, on the line
directly above it or on its own line, says which.
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def comment_lines(source: str) -> set[int]:
    """The lines of ``source`` that hold a comment."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return {token.start[0] for token in tokens if token.type == tokenize.COMMENT}


def unexplained_imports(path: Path) -> list[int]:
    """The lines of the imports inside a function of ``path`` with no comment
    on the line directly above them, nor on the statement's own lines."""
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    comments = comment_lines(source)
    found: list[int] = []

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                own = range(child.lineno, (child.end_lineno or child.lineno) + 1)
                above = lines[child.lineno - 2].strip() if child.lineno > 1 else ""
                if not above.startswith("#") and not comments.intersection(own):
                    found.append(child.lineno)
            walk(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

    walk(ast.parse(source, str(path)), False)
    return found


def test_every_import_in_a_function_says_why() -> None:
    wrong = [f"{path.relative_to(ROOT).as_posix()}:{line}"
             for path in sorted((ROOT / "arena").rglob("*.py")) for line in unexplained_imports(path)]
    assert not wrong, ("imports inside a function with no comment saying why (move them to the top, or say "
                       "what loading them late saves, e.g. '# lazy: ... (tests/test_lean_imports.py)'):\n"
                       + "\n".join(wrong))


def test_the_check_sees_imports_in_functions_only(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("""import os


def f():
    import json
    # lazy: optional
    import yaml
    from x import (a,  # lazy: measured
                   b)
    import zlib  # lazy: same line

    def g():
        import gzip
    return json, yaml, a, b, zlib, g


class C:
    import struct

    async def h(self):
        # a comment

        import fcntl
""")
    assert unexplained_imports(module) == [5, 13, 23]
