"""What the command line loads: only what the command at hand uses.

``arena.match``, ``arena.process`` and ``arena.players`` give their names on
first use (PEP 562), the executor knows outcomes without the runner, and the
CLI imports the runner only to play.  So the commands that read results load
neither the engine's players, nor the protocol codec (msgspec), nor the
bot-process layer; and ``arena run`` loads them only to play in-process or
to fork workers that share them.  Each check runs in a fresh interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Loaded to play a match, never to parse a command line or read results.
PLAYING = ("msgspec", "arena.match.runner", "arena.match.pool", "arena.match.seats", "arena.process.bot",
           "arena.process.spawn", "arena.process.exchange", "arena.protocol.wire", "arena.protocol.messages",
           "arena.protocol.encoder", "arena.players.greedy", "arena.players.random_player", "arena.players.base",
           "arena.shanghai.finder", "arena.tournament.executors.worker")
# Loaded for a report or a fit, never by a command that does not show one.
REPORTING = ("numpy", "trueskill", "jinja2", "altair", "arena.report.build", "arena.ranking.trueskill_batch")
# Loaded by `arena league serve` alone: the league's page and its web stack.
SERVING = ("starlette", "uvicorn", "sse_starlette", "anyio", "arena.league.web.app", "arena.league.standings")


def modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code``."""
    done = subprocess.run([sys.executable, "-c", code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_the_command_line_loads_nothing_of_playing_or_reporting() -> None:
    loaded = modules_after("import arena.cli")
    assert {"click", "arena.cli.tournament", "arena.match.spec", "arena.cli.league"} <= loaded
    assert not loaded & set(PLAYING + REPORTING + SERVING), sorted(loaded & set(PLAYING + REPORTING + SERVING))


def test_the_lazy_packages_still_give_every_name() -> None:
    code = """
import arena.match, arena.players, arena.process
from arena.match import BotPool, MatchSpec, run_match, fallback_action, FAULT_KINDS
from arena.process import BotProcess, BotSpec, DEFAULT_LIMITS, SandboxUnavailable
from arena.process.confine import sandbox
from arena.players import Player, play_match
for package in (arena.match, arena.players, arena.process):
    for name in package.__all__:
        getattr(package, name)
for package in (arena.match, arena.players, arena.process):
    try:
        package.no_such_name
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError(package)
assert run_match.__module__ == "arena.match.runner" and BotProcess.__module__ == "arena.process.bot"
"""
    assert "arena.match.runner" in modules_after(code)


def builtin_tournament(tmp_path: Path, name: str, deals: int) -> Path:
    """Three built-in players at one table of 3, one short contract."""
    tournament = tmp_path / "t.yaml"
    tournament.write_text(f"""
name: {name}
bots:
  - {{name: rnd, builtin: random}}
  - {{name: grd, builtin: greedy}}
  - {{name: pas, builtin: passive}}
players: 3
rules: {{contracts: [2S3]}}
deals: {deals}
seed: 5
""")
    return tournament


def test_reading_results_loads_nothing_of_playing(tmp_path: Path) -> None:
    tournament = builtin_tournament(tmp_path, "lean", deals=1)
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "arena", "run", str(tournament), "--out", str(out), "--jobs", "2"],
                         capture_output=True, text=True, cwd=ROOT, timeout=180)
    assert run.returncode == 0, run.stderr[-3000:]
    for command in (["leaderboard", str(out), "--format", "json"], ["matches", str(out)]):
        loaded = modules_after(f"""
import contextlib, io
from arena.cli import main
with contextlib.redirect_stdout(io.StringIO()) as shown:
    main({command!r}, standalone_mode=False)
assert "grd" in shown.getvalue(), shown.getvalue()
""")
        assert not loaded & set(PLAYING), (command[0], sorted(loaded & set(PLAYING)))


def test_the_live_progress_line_loads_no_numpy(tmp_path: Path) -> None:
    """On a terminal, ``arena run`` shows the leader while the workers play:
    its fit must not load numpy into the arena (14 MB the workers do not
    share).  The final tables, after the workers are gone, still do."""
    tournament = builtin_tournament(tmp_path, "live", deals=2)
    code = f"""
import sys
from arena.cli import main
from arena.tournament import runner

class Terminal:
    def __init__(self):
        self.lines = []
    def isatty(self):
        return True
    def write(self, text):
        if "leader" in text:
            self.lines.append((text.strip(), "numpy" in sys.modules))
        return len(text)
    def flush(self):
        pass

terminal = sys.stderr = Terminal()
main(["run", {str(tournament)!r}, "--out", {str(tmp_path / "out")!r}, "--jobs", "2"], standalone_mode=False)
sys.stderr = sys.__stderr__
import json
print(json.dumps(terminal.lines))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    lines = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(lines) == 6 and all("(rating " in line for line, _numpy in lines), lines
    assert not any(numpy for _line, numpy in lines), lines
