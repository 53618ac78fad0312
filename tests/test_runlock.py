"""The results directory's run lock goes with the arena that held it, even
while processes it forked (match workers) live on."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from arena.tournament.results.rows import StoreError
from arena.tournament.runlock import results_lock

HOLDER = textwrap.dedent("""
    import os, sys, time
    from pathlib import Path
    from arena.tournament.runlock import results_lock
    with results_lock(Path(sys.argv[1])):
        child = os.fork()
        if child == 0:          # a worker forked while the lock is held: outlives its parent
            os.close(1)
            time.sleep(60)
            os._exit(0)
        print(child, flush=True)
        time.sleep(60)
""")


def test_a_second_holder_is_refused_naming_the_first(tmp_path: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    child = int(holder.stdout.readline())
    try:
        with pytest.raises(StoreError, match=rf"another arena run \(pid {holder.pid}\) is playing"):
            with results_lock(tmp_path):
                pass
    finally:
        holder.kill()
        holder.wait()
        os.kill(child, signal.SIGKILL)


def test_a_killed_holders_forked_worker_does_not_keep_the_lock(tmp_path: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None
    child = int(holder.stdout.readline())
    try:
        holder.kill()
        holder.wait()
        os.kill(child, 0)           # the forked worker is still alive
        with results_lock(tmp_path):
            assert (tmp_path / ".arena-run.lock").read_text() == f"{os.getpid()}\n"
    finally:
        os.kill(child, signal.SIGKILL)


def test_a_lock_file_that_cannot_be_made_is_one_line(tmp_path: Path) -> None:
    """A read-only results directory (or anything else in the lock's way) gave
    `arena run` a traceback of os.open; a directory stands in for it here, as
    the tests may run as root, whom no permission stops."""
    (tmp_path / ".arena-run.lock").mkdir()
    with pytest.raises(StoreError, match=r"\.arena-run\.lock: cannot create the run lock: Is a directory; arena run "
                                         r"needs a results directory it can write"):
        with results_lock(tmp_path):
            pass
