"""ruff and mypy, as configured in pyproject.toml, find nothing.

They run here, inside the README's test command, so CI enforces them with no
second command to forget."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.long(20)
@pytest.mark.parametrize("tool", [["ruff", "check", "."], ["mypy"]], ids=["ruff", "mypy"])
def test_the_code_is_clean(tool: list[str]) -> None:
    done = subprocess.run([sys.executable, "-m", *tool], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{' '.join(tool)} found problems:\n{done.stdout}{done.stderr}"
