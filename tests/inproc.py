"""``arena`` run in the test's own process, answering as ``python -m arena``
would: exit status, stdout, stderr.

A new interpreter importing arena costs about 0.3 CPU-s, and the suite's
command-line tests start hundreds (issue 31 halves the suite's time).  Tests
of what only a process shows (signals, a hung run, the interpreter's own
start) keep ``subprocess``.  An exception that escapes the command is put in
stderr as the traceback a process would print, so "no traceback" checks hold.
"""

from __future__ import annotations

import os
import subprocess
import traceback
from collections.abc import Mapping
from pathlib import Path

from click.testing import CliRunner

from arena.cli import main


def arena_here(*args: str, cwd: Path | str | None = None,
               env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m arena ARGS`` in ``cwd`` with the environment ``env``, in this process."""
    changes: dict[str, str | None] | None = None
    if env is not None:
        changes = {name: None for name in os.environ if name not in env}
        changes.update(env)
    before = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, list(args), env=changes, prog_name="arena")
    finally:
        os.chdir(before)
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        stderr += "".join(traceback.format_exception(*result.exc_info))
    return subprocess.CompletedProcess(["arena", *args], result.exit_code, result.stdout, stderr)
