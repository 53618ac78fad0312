"""Red team 4: what a bot could read of the arena's own state.

The arena's ``--log-file`` with ``-vv`` holds every protocol line, so every
seat's hand as it is dealt and every earlier match's deals; it was readable
by every sandboxed bot that could name its path (``/proc/self/mountinfo``
does not list it, but a log beside the tournament file is an easy guess).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena import logsetup
from arena.process.confine import sandbox
from arena.tournament.config.load import load_config
from arena.tournament.preflight import hide_machine_state

ROOT = Path(__file__).resolve().parent.parent

needs_bwrap = pytest.mark.skipif(sandbox.resolve(sandbox.AUTO).mode != sandbox.BWRAP,
                                 reason="bubblewrap does not work here")


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A folder the sandbox would show: /tmp is private in it, the home not."""
    home = Path.home()
    base = home if home.is_dir() and os.access(home, os.W_OK) and not str(home).startswith("/tmp") else ROOT
    folder = Path(tempfile.mkdtemp(prefix=".arena-redteam4-", dir=base))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_tournament_hides_the_arena_log_file_from_its_bots(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text("name: t\nbots:\n  - {name: a, command: python3 a.py}\n"
                                     "  - {name: b, builtin: greedy}\nplayers: 2\nseed: 3\n")
    config = load_config(tmp_path / "t.yaml")
    log = tmp_path / "elsewhere" / "arena.log"
    log.parent.mkdir()
    try:
        logsetup.configure(logsetup.Verbosity(verbose=2, log_file=log))
        # found by the run's set-up: the config is a value of its file alone
        assert str(log.absolute()) not in config.sandbox_policy("a").hide
        assert str(log.absolute()) in hide_machine_state(config).sandbox_policy("a").hide
        assert hide_machine_state(hide_machine_state(config)) == hide_machine_state(config)
    finally:
        logsetup.reset()
    assert str(log.absolute()) not in hide_machine_state(config).sandbox_policy("a").hide


def test_a_tournament_hides_the_list_of_runs_from_its_bots(tmp_path: Path) -> None:
    """The list of runs (``earlier.runs_file``) names the results directory
    and file of every run on the machine."""
    from arena.tournament.earlier import runs_file

    (tmp_path / "t.yaml").write_text("name: t\nbots:\n  - {name: a, command: python3 a.py}\n"
                                     "  - {name: b, builtin: greedy}\nplayers: 2\nseed: 3\n")
    listed = runs_file()
    assert listed is not None
    assert str(listed) in hide_machine_state(load_config(tmp_path / "t.yaml")).sandbox_policy("a").hide


SPY = """
import os, runpy, sys
try:
    with open({log!r}, "rb") as f:
        sys.stderr.write("SPY read %d bytes\\n" % len(f.read()))
except OSError as exc:
    sys.stderr.write("SPY denied: %s\\n" % exc.strerror)
sys.stderr.flush()
sys.argv = [{bot!r}]
runpy.run_path({bot!r}, run_name="__main__")
"""


@needs_bwrap
def test_a_bot_cannot_read_the_arena_log_of_its_own_match(tmp_path: Path, outside_tmp: Path) -> None:
    log = outside_tmp / "arena.log"
    spy = tmp_path / "spy.py"
    # The spy then plays as a minimal bot, copied beside it: a checkout under
    # /tmp (CI's clean clone) is out of the bot's sight in the sandbox.
    for name in ("minimal.py", "common.py"):
        (tmp_path / name).write_text((ROOT / "tests" / "gamebots" / name).read_text())
    spy.write_text(SPY.format(log=str(log), bot=str(tmp_path / "minimal.py")))
    logs = tmp_path / "logs"
    done = subprocess.run([sys.executable, "-m", "arena", "play", f"{sys.executable} {spy}", "greedy",
                           "--seed", "2", "--sandbox", "bwrap", "--log-dir", str(logs),
                           "-vv", "--log-file", str(log)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert log.stat().st_size > 0                       # the log was there to read
    said = "".join(p.read_text() for p in logs.glob("*.log"))
    assert "SPY denied" in said, said[-2000:]
    assert "SPY read" not in said
