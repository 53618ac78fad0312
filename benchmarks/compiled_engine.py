"""Would a compiled engine bring the arena's CPU per decision under issue 9's
40 us?  The engine compiled to C by mypyc, against this tree's Python, on the
same matches.  Not a test, and nothing of it ships: a measurement for the
question "is the rest of the arena's CPU the engine's?".

Run: python benchmarks/compiled_engine.py [--pairs 5]

Needs mypy's ``mypyc`` (in the test extras) and a C compiler.  It copies this
tree's ``arena/`` into a temporary directory and compiles every module of
``arena/shanghai`` that mypyc accepts there (``SKIPPED`` says which it refuses
and why; they stay Python, imported by the compiled ones).  Then, in pairs,
the order alternating, each in a child process with one tree or the other
first on ``sys.path``:

- ``benchmarks/decision_floor.py --reps 5``: the arena's CPU per decision,
  layer by layer (echo loop, engine alone, echo + engine, process layer,
  whole match), on one CPU as a tournament plays;
- ``benchmarks/engine.py``'s in-process rate, random players at 4 seats.

Printed: for each figure, the Python tree's median [min .. max] over the
pairs, the compiled tree's, and the median of compiled / Python.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# Modules mypyc refuses, with its reason; they stay Python.
SKIPPED = {
    "record.py": "the record base class inherits from a builtin type",
    "cards.py": "Card.__new__ interns cards through object.__new__",
    "view.py": "overloads declared under TYPE_CHECKING in a class body",
    "__init__.py": "package markers",
}
PYTHON = [sys.executable, "-S"]
FLOOR_LINE = re.compile(r"^\s{2}(\S.*?)\s+([\d.]+) \[")


def build(tmp: Path) -> Path:
    """A copy of this tree's arena/ with its engine compiled; the copy's root."""
    tree = tmp / "compiled"
    shutil.copytree(ROOT / "arena", tree / "arena", ignore=shutil.ignore_patterns("__pycache__"))
    engine = tree / "arena" / "shanghai"
    modules = sorted(str(p.relative_to(tree)) for p in engine.rglob("*.py") if p.name not in SKIPPED)
    done = subprocess.run([sys.executable, "-m", "mypyc", *modules], cwd=tree,
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"mypyc failed: {(done.stdout + done.stderr).strip().splitlines()[-1]}")
    built = sorted(engine.rglob("*.so"))
    print(f"compiled {len(built)} of {len(modules) + len(SKIPPED) - 1} engine modules with mypyc "
          f"(kept in Python: {', '.join(k for k in SKIPPED if k != '__init__.py')})")
    return tree


def child_env(tree: Path) -> dict[str, str]:
    """``tree`` first on the path, then the installed packages; with ``python -S``
    (``PYTHON``) no .pth file runs, so an editable install cannot put this
    tree's arena/ ahead of ``tree``."""
    path = os.pathsep.join([str(tree), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    return {**os.environ, "PYTHONPATH": path, "PYTHONHASHSEED": "0"}


def floor_figures(tree: Path) -> dict[str, float]:
    """decision_floor.py's medians (us per decision), run with ``tree`` first on the path."""
    out = subprocess.run([*PYTHON, str(HERE / "decision_floor.py"), "--reps", "5"],
                         env=child_env(tree), cwd=tree, capture_output=True, text=True, check=True).stdout
    return {m[1]: float(m[2]) for m in map(FLOOR_LINE.match, out.splitlines()) if m}


def engine_rate(tree: Path, pair: int) -> float:
    """Random players at 4 seats, decisions per CPU-second (engine.py's child)."""
    sys.path.insert(0, str(HERE))
    import engine
    return engine.rate_child(tree, "random", 4, 10, "shanghai", pair * 10)


def check_loaded(tree: Path) -> None:
    """The compiled tree must really import its compiled game module."""
    where = subprocess.run([*PYTHON, "-c", "import arena.shanghai.game as g; print(g.__file__)"],
                           env=child_env(tree), cwd=tree, capture_output=True, text=True, check=True).stdout
    if not where.strip().endswith(".so"):
        sys.exit(f"the compiled tree imports {where.strip()}, not its compiled module")


def spread(xs: list[float], fmt: str) -> str:
    return f"{format(statistics.median(xs), fmt)} [{format(min(xs), fmt)} .. {format(max(xs), fmt)}]"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pairs", type=int, default=5, help="Python/compiled pairs, at least 5")
    args = ap.parse_args()
    if args.pairs < 5:
        ap.error("--pairs: at least 5")
    with tempfile.TemporaryDirectory(prefix="bench-compiled-") as tmp:
        compiled = build(Path(tmp))
        check_loaded(compiled)
        trees = {"python": ROOT, "compiled": compiled}
        samples: dict[str, dict[str, list[float]]] = {name: {} for name in trees}
        for pair in range(args.pairs):
            order = list(trees) if pair % 2 == 0 else list(reversed(trees))
            for name in order:
                figures = floor_figures(trees[name])
                figures["random x4, decisions per CPU-second"] = engine_rate(trees[name], pair)
                for figure, value in figures.items():
                    samples[name].setdefault(figure, []).append(value)
            print(f"  pair {pair + 1}: match {samples['python']['match'][-1]:.1f} us (Python), "
                  f"{samples['compiled']['match'][-1]:.1f} us (compiled)", flush=True)
    print(f"{args.pairs} pairs; arena CPU per decision (us) unless named, median [min .. max]:")
    print(f"  {'figure':36} {'Python':>22} {'compiled':>22}  compiled/Python")
    for figure, py in samples["python"].items():
        comp = samples["compiled"][figure]
        fmt = ",.0f" if "second" in figure else ".1f"
        ratios = [c / p for c, p in zip(comp, py)]
        print(f"  {figure:36} {spread(py, fmt):>22} {spread(comp, fmt):>22}  {spread(ratios, '.2f')}")


if __name__ == "__main__":
    main()
