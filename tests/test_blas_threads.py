"""arena keeps numpy's BLAS to one thread (arena/__init__.py): its idle
threads spin on the CPUs the bots need, for matrices too small to gain."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
THREADS_AFTER_A_PRODUCT = """
import arena, numpy, os
a = numpy.ones((400, 400))
a @ a
print(len(os.listdir("/proc/self/task")), os.environ["OPENBLAS_NUM_THREADS"])
"""


def _run(env: dict[str, str]) -> list[str]:
    done = subprocess.run([sys.executable, "-c", THREADS_AFTER_A_PRODUCT], capture_output=True, text=True,
                          env={**env, "PYTHONPATH": str(ROOT)}, timeout=120, check=True)
    return done.stdout.split()


def test_importing_arena_leaves_numpy_one_blas_thread() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    assert _run(env) == ["1", "1"]


def test_a_users_own_setting_is_kept() -> None:
    env = {k: v for k, v in os.environ.items() if k != "MKL_NUM_THREADS"}
    assert _run({**env, "OPENBLAS_NUM_THREADS": "2"})[1] == "2"
