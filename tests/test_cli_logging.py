"""Issue 10 point 2: logging set up once, -q/-v/--log-file on every command,
a bot's ignored lines in the match record and the log (never in the progress
line), and the fault summary that ends `arena run`."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.cli.common import ArenaGroup

ROOT = Path(__file__).resolve().parent.parent
TWICE = ROOT / "tests" / "gamebots" / "twice.py"


def tournament(tmp: Path) -> Path:
    """A bot that sends every reply twice, and two built-in players: 3 matches."""
    path = tmp / "t.yaml"
    path.write_text(f"""
name: dup
bots:
  - {{name: twice, command: [{json.dumps(sys.executable)}, {json.dumps(str(TWICE))}]}}
  - {{name: g, builtin: greedy}}
  - {{name: r, builtin: random}}
players: 3
rules: {{contracts: [2S3, S3+R4]}}
seed: 4
output: {json.dumps(str(tmp / "out"))}
""")
    return path


def arena(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "arena", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)


def test_every_command_takes_quiet_verbose_and_log_file() -> None:
    for name, command in main.commands.items():
        flags = {opt for p in command.params for opt in getattr(p, "opts", [])}
        assert {"-q", "--quiet", "-v", "--verbose", "--log-file"} <= flags, name


def test_a_command_added_later_gets_them_and_logging_is_set_up_before_it_runs(tmp_path: Path) -> None:
    import logging

    group = ArenaGroup()

    @group.command()
    def hello() -> None:
        logging.getLogger("arena.test").info("information")
        logging.getLogger("arena.test").warning("careful")

    log = tmp_path / "arena.log"
    quiet = CliRunner().invoke(group, ["hello", "-q", "--log-file", str(log)])
    assert quiet.exit_code == 0 and quiet.stderr == ""
    text = log.read_text()
    assert "INFO arena.test: information" in text and "WARNING arena.test: careful" in text
    loud = CliRunner().invoke(group, ["hello", "-v"])
    assert loud.stderr.splitlines() == ["information", "warning: careful"]
    plain = CliRunner().invoke(group, ["hello"])
    assert plain.stderr.splitlines() == ["warning: careful"]
    bad = CliRunner().invoke(group, ["hello", "--log-file", str(tmp_path / "no" / "such" / "dir.log")])
    assert bad.exit_code == 1 and len(bad.output.splitlines()) == 1 and "cannot write" in bad.output


def test_ignored_lines_go_to_the_record_the_log_and_the_summary_not_the_screen(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    proc = arena("run", str(tournament(tmp_path)), "--jobs", "2", "--log-file", str(log))
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert "ignoring" not in err and "ignored" not in out
    summary = err[err.index("Faults this run"):].splitlines()
    assert re.fullmatch(r"  twice: \d+ ignored lines", summary[1]), err
    assert len(summary) == 2        # the well-behaved players have nothing to report
    ignored = [line for line in log.read_text().splitlines()
               if re.search(r"INFO arena\.process\.exchange: seat 0 \(twice\): ignoring ", line)]
    assert ignored, log.read_text()[:2000]
    # logged by the worker processes, which found --log-file in their environment (the
    # arena's own are of the probe that timed the bot before the run)
    assert any(int(line.split()[2]) != proc.pid for line in ignored)
    shown = CliRunner().invoke(main, ["show", str(tmp_path / "out"), "t000-r0-d0", "--json"])
    warnings = json.loads(shown.stdout)["warnings"]
    assert len(warnings) == 1 and warnings[0]["seat"] == 0 and warnings[0]["count"] > 10
    assert warnings[0]["examples"] and all("id" in e for e in warnings[0]["examples"])
    text = CliRunner().invoke(main, ["show", str(tmp_path / "out"), "t000-r0-d0"]).stdout
    assert "Ignored lines" in text and f"seat 0 (twice): {warnings[0]['count']} ignored lines" in text


def test_quiet_run_prints_nothing_but_the_tables(tmp_path: Path) -> None:
    proc = arena("run", str(tournament(tmp_path)), "--jobs", "1", "-q", "--format", "json")
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0 and err == ""
    assert {r["bot"] for r in json.loads(out)["leaderboard"]} == {"twice", "g", "r"}


def read_terminal(argv: list[str], timeout: float = 300) -> tuple[int, str]:
    """Run ``argv`` with stderr on a pseudo-terminal (so the progress line is
    live); its return code and everything it wrote there."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=slave, cwd=ROOT)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], timeout)
        if not ready:
            proc.kill()
            raise AssertionError("no output from arena for too long")
        try:
            data = os.read(master, 65536)
        except OSError:     # the terminal's other end is closed: arena exited
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=60), b"".join(chunks).decode("utf-8", "replace")


def test_on_a_terminal_ignored_lines_never_land_in_the_progress_line(tmp_path: Path) -> None:
    path = str(tournament(tmp_path))
    code, screen = read_terminal([sys.executable, "-m", "arena", "run", path, "--jobs", "2"])
    assert code == 0, screen
    assert "[3/3]" in screen and "ignoring" not in screen
    # -v shows them, each on a line of its own: the progress line is cleared first
    code, screen = read_terminal([sys.executable, "-m", "arena", "run", path, "--jobs", "2", "-v",
                                  "--out", str(tmp_path / "again")])
    assert code == 0, screen
    shown = [m.start() for m in re.finditer(r"seat \d \(twice\): ignoring", screen)]
    assert shown and all(screen[i - 4:i] == "\r\x1b[K" for i in shown), screen[:3000]
    assert "[1/3]" in screen


def test_play_reports_ignored_lines_in_its_summary() -> None:
    done = CliRunner().invoke(main, ["play", f"{sys.executable} {TWICE}", "greedy", "--seed", "2",
                                     "--per-decision", "5"])
    assert done.exit_code == 0, done.output
    assert re.search(r"seat 0 \(\S+\): \d+ ignored lines, the first at hand 1", done.stdout), done.stdout
    assert "ignoring" not in done.stderr


def test_rays_own_output_goes_to_the_log_file_never_to_the_console(tmp_path: Path,
                                                                    capfd: pytest.CaptureFixture[str]) -> None:
    """Issue 33: Ray's warnings (its loggers', and its C++ core's written
    straight to file descriptor 2) reached the user's terminal.  Without Ray:
    a logger diverted as Ray's is, and a write to descriptor 2 while Ray's
    output is set aside."""
    import logging

    from arena import logsetup
    from arena.tournament.executors.rayjoin import rays_output_aside

    log = tmp_path / "arena.log"
    logsetup.configure(logsetup.Verbosity(log_file=log))
    try:
        library = logging.getLogger("arena-test-library")
        library.addHandler(logging.StreamHandler(sys.stderr))   # as Ray's own, at its import
        logsetup.divert("arena-test-library")
        library.warning("a working_dir holds .git")
        with rays_output_aside():
            os.write(2, b"[core] Failed to determine local IP\n")
        print("arena's own line", file=sys.stderr)
    finally:
        logsetup.reset()
    assert capfd.readouterr().err == "arena's own line\n"
    text = log.read_text()
    assert "a working_dir holds .git" in text and "[core] Failed to determine local IP" in text
    assert logging.getLogger("arena-test-library").handlers[0].__class__ is logging.StreamHandler  # reset put it back
