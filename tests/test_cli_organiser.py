"""What an organiser's and a teacher's run of arena found: `play`'s exit
status when a seat is forfeited, seats labelled by the names bots give,
`check` leaving nothing behind in /tmp.

The commands run as real subprocesses with real bot programs: the exit
status and the two streams are what a grading script sees.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from inproc import arena_here

ROOT = Path(__file__).resolve().parent.parent
GAMEBOTS = ROOT / "tests" / "gamebots"
PY = sys.executable


def arena(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None,
          own_process: bool = False) -> subprocess.CompletedProcess[str]:
    if own_process:
        return subprocess.run([PY, "-m", "arena", *args], capture_output=True, text=True, timeout=300,
                              cwd=cwd, env=env)
    return arena_here(*args, cwd=cwd, env=env)


def bot(script: str, *args: str) -> str:
    return " ".join([PY, str(GAMEBOTS / script), *args])


def errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


@pytest.mark.parametrize("program, why", [
    (bot("exit_midway.py", "20"), "crash"),        # exits with code 3 at its 20th request
    (bot("illegal.py"), "illegal"),                # every play illegal: three strikes
])
def test_play_exits_3_when_a_seat_is_forfeited_during_the_match(tmp_path: Path, program: str, why: str) -> None:
    done = arena("play", program, "greedy", "--seed", "1", "--log-dir", str(tmp_path))
    assert done.returncode == 3, done.stderr
    lost = errors(done.stderr)
    assert len(lost) == 1, done.stderr
    # which decision lost it: the request id the bot was sent, to find in its own log
    assert re.match(r"error: seat 0 \(minimal\) was forfeited in hand \d+, request id \d+ \((draw|buy|play)\)"
                    r"( after 3 faults)?: ", lost[0]) and f": {why}" in lost[0], lost[0]
    assert "(forfeited)" in done.stdout         # the match was still played to the end and shown


def test_play_exits_0_when_every_seat_is_kept(tmp_path: Path) -> None:
    done = arena("play", bot("minimal.py"), "greedy", "--seed", "1", "--log-dir", str(tmp_path))
    assert done.returncode == 0 and errors(done.stderr) == [], done.stderr


def test_play_documents_its_exit_statuses() -> None:
    helped = arena("play", "--help")
    text = " ".join(helped.stdout.split())
    assert "Exit status: 0 if every bot program kept its seat; 3 if a seat was forfeited" in text
    assert "1 if the match could not be played; 2 on a usage mistake" in text
    cli_doc = " ".join((ROOT / "docs" / "CLI.md").read_text().split())
    assert "exits with status 3" in cli_doc


def test_play_labels_seats_by_the_names_the_bots_gave(tmp_path: Path) -> None:
    done = arena("play", bot("named.py", "Alice"), bot("named.py", "Bob"), "greedy", "--seed", "1",
                 "--log-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    table = done.stdout.split("place")[1]
    assert "Alice" in table and "Bob" in table and "named.py" not in table
    assert "seat 0 (Alice)" in done.stdout and "seat 1 (Bob): " in done.stdout


def test_equal_names_get_the_command_and_a_name_that_hides_text_is_refused(tmp_path: Path) -> None:
    rlo = "\\u202e"          # a right-to-left override: reverses what follows on a terminal
    refused = arena("play", bot("named.py", f"'twin{rlo}'"), bot("minimal.py"), "--seed", "1",
                    "--log-dir", str(tmp_path))
    assert refused.returncode == 3, refused.stderr        # not printable: refused at the handshake
    assert "\u202e" not in refused.stdout + refused.stderr and "twin\\u202e" in refused.stderr
    done = arena("play", bot("minimal.py"), bot("named.py", "greedy"), "greedy",
                 "--seed", "1", "--log-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    # a bot calling itself 'greedy' is told apart from the built-in player by its command
    assert "seat 1 (greedy (named.py))" in done.stdout and "seat 2 (greedy (built-in))" in done.stdout
    twins = arena("play", bot("minimal.py"), f"{PY} -u {GAMEBOTS / 'minimal.py'}", "--seed", "1",
                  "--log-dir", str(tmp_path))
    # one name, two commands that look alike when shortened: the whole command tells them apart
    assert f"seat 1 (minimal ({PY} -u {GAMEBOTS / 'minimal.py'}))" in twins.stdout, twins.stdout
    same = arena("play", bot("minimal.py"), bot("minimal.py"), "--seed", "1", "--log-dir", str(tmp_path))
    # one program twice: the seat number tells them apart, the command would not
    assert "seat 0 (minimal)" in same.stdout and "seat 1 (minimal)" in same.stdout


def left_behind(tmp: Path) -> list[str]:
    return sorted(p.name for p in tmp.iterdir() if p.name.startswith("arena-check-"))


def test_check_leaves_no_temporary_directory_and_quotes_the_bots_stderr(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = arena("check", bot("exit_midway.py", "3"), env=env)    # writes on stderr, then exits: FAIL
    assert done.returncode == 1, done.stderr
    assert left_behind(tmp_path) == []
    assert "  | exit_midway: giving up now" in done.stdout           # the failed step quotes its log's end
    assert "bot stderr logs: not kept (--log-dir DIR keeps them, one per step)" in done.stdout
    assert str(tmp_path) not in done.stdout                         # no path to a file that is gone
    quiet = arena("check", bot("minimal.py"), env=env)
    assert quiet.returncode == 0 and left_behind(tmp_path) == [] and "stderr logs" not in quiet.stdout


def test_check_keeps_the_logs_in_the_directory_asked_for(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = arena("check", bot("exit_midway.py", "3"), "--log-dir", str(logs), "--json", env=env)
    report = json.loads(done.stdout)
    assert report["stderr_logs"] and all(Path(p).parent == logs and Path(p).exists() for p in report["stderr_logs"])
    assert left_behind(tmp_path) == []


def wait_while_running(proc: subprocess.Popen[str], seen: Callable[[], object], seconds: float = 120) -> object:
    """Poll ``seen`` until it holds, ``proc`` ends or ``seconds`` pass; then what it gives."""
    deadline = time.monotonic() + seconds
    while not seen() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    return seen()


def test_check_interrupted_leaves_no_temporary_directory(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    # the bot waits before its 'ready', so the check is still at its first step
    proc = subprocess.Popen([PY, "-m", "arena", "check", bot("slow_start.py", "60"), "--startup", "120"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_while_running(proc, lambda: left_behind(tmp_path)), "the check never made its directory"
        time.sleep(1)       # into the wait for 'ready'
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err          # interrupted, not "failed" (1)
    assert err.splitlines() == ["Error: interrupted: the check was stopped, the bot with it"], err
    assert left_behind(tmp_path) == []


def with_tag(tag: str, besides: int | None = None) -> list[int]:
    """Live processes with ``tag`` in their command line (bwrap and the bot it
    runs), but for the arena process ``besides`` and its copies: a child it
    has forked and not yet exec'd (the sandbox's probe, a bot being spawned)
    has the arena's command line, tag and all, and is no bot yet."""
    own = _cmdline(besides) if besides is not None else None
    found = []
    for pid in os.listdir("/proc"):
        cmdline = _cmdline(int(pid)) if pid.isdigit() else None
        try:
            state = Path("/proc", pid, "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if cmdline and tag.encode() in cmdline and state != "Z" and cmdline != own and int(pid) != besides:
            found.append(int(pid))
    return found


def _cmdline(pid: int) -> bytes | None:
    try:
        return Path("/proc", str(pid), "cmdline").read_bytes()
    except OSError:
        return None


def caught(pid: int, signum: int) -> bool:
    """Whether process ``pid`` has a handler for ``signum`` (/proc's SigCgt)."""
    for line in Path("/proc", str(pid), "status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (signum - 1) & 1)
    return False


def test_a_sigterm_while_arena_starts_is_one_line_and_143(tmp_path: Path) -> None:
    """A SIGTERM as soon as arena's own code runs (before that, the interpreter
    is starting, and any Python program is killed by the signal): the handler
    is there before the command line is imported (click, the commands: a
    second on a busy machine), so the signal, coming while they import,
    ends arena with the promised line and status rather than killing it."""
    proc = subprocess.Popen([PY, "-X", "importtime", "-m", "arena", "play", "--seed", "1"], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        # -X importtime writes a line as each module is imported: click's come
        # only after arena's entry has run its first lines.
        for line in proc.stderr:
            if "click" in line:
                break
        assert caught(proc.pid, signal.SIGTERM), "no SIGTERM handler yet when click is imported"
        os.kill(proc.pid, signal.SIGTERM)
        err = proc.stderr.read()
        proc.wait(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 143, err[-2000:]
    # -X importtime's lines for the imports the signal cut short, and the one line
    assert [line for line in err.splitlines() if not line.startswith("import time:")] == [
        "Error: terminated (SIGTERM)"], err[-2000:]


@pytest.mark.parametrize("signum, status, word", [
    (signal.SIGINT, 130, "interrupted"),           # a terminal's Ctrl-C, to the whole group
    (signal.SIGTERM, 143, "terminated (SIGTERM)"),  # `kill PID`: the arena's process only
])
def test_play_interrupted_exits_130_and_leaves_no_bot(tmp_path: Path, signum: int, status: int, word: str) -> None:
    tag = f"tag-{tmp_path.name}"                  # an argument the bot ignores, to find its processes
    proc = subprocess.Popen([PY, "-m", "arena", "play", bot("slow_start.py", "60", tag), "greedy",
                             "--startup", "120", "--log-dir", str(tmp_path / "logs")],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        # Not the arena's own process: its arguments hold the tag too, and on a
        # busy machine a signal sent once it alone is seen lands before the
        # match starts (a plain "interrupted", as two full-suite runs found).
        assert wait_while_running(proc, lambda: with_tag(tag, besides=proc.pid)), "the bot never started"
        time.sleep(1)       # into the wait for 'ready'
        if signum == signal.SIGINT:
            os.killpg(proc.pid, signum)
        else:
            os.kill(proc.pid, signum)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == status, err
    assert err.splitlines() == [f"Error: {word}: the match was stopped, its bots with it"], err
    deadline = time.monotonic() + 15
    while with_tag(tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert with_tag(tag) == []


TOURNAMENT = f"""\
name: class
bots:
  - name: g
    builtin: greedy
  - name: r
    builtin: random
  - name: m
    command: python3 minimal.py
    dir: {GAMEBOTS}
players: 3
rules: {{contracts: [2S3]}}
time:
  per_move: 1
seed: 5
"""


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tournament file and its results: one table, three matches."""
    where = tmp_path_factory.mktemp("class")
    (where / "t.yaml").write_text(TOURNAMENT)
    done = arena("run", "t.yaml", "--jobs", "1", cwd=where)
    assert done.returncode == 0, done.stderr
    return where


@pytest.mark.parametrize("old, new, expected", [
    # a line indented one space too little, or too much
    ("  - name: m\n    command", "  - name: m\n   command",
     "t.yaml:8: not valid YAML: expected <block end>, but found '<block mapping start>' (while parsing a "
     "block collection, line 3); check the indentation of this line against the lines above it"),
    ("    builtin: random\n", "      builtin: random\n",
     "t.yaml:6: not valid YAML: mapping values are not allowed here; check the indentation of this line "
     "against the lines above it, or quote a value that holds ': '"),
    ("name: class", "name: class: 2026",
     "t.yaml:1: not valid YAML: mapping values are not allowed here; check the indentation of this line "
     "against the lines above it, or quote a value that holds ': '"),
    ("  - name: m\n    command", "  - name: m\n\tcommand",
     "t.yaml:8: not valid YAML: found character '\\t' that cannot start any token (while scanning for the "
     "next token); indent with spaces: YAML does not allow tabs there"),
    # a bot file misspelt after the first run: the stored results name what changed
    ("python3 minimal.py", "python3 minimall.py",
     "holds results of tournament 'class' with a different configuration (bots.m.command: "
     "was [\"python3\", \"minimal.py\"], now [\"python3\", \"minimall.py\"]); refusing to mix them"),
    ("name: m\n", "name: g\n", "t.yaml:7: bots[2].name: duplicate bot name 'g' (already used on line 3)"),
    ("per_move: 1", "per_move: -1", "t.yaml:13: time.per_move: expected a number of seconds, more than 0"),
    ("players: 3", "players: 3\nplayer: 3", "t.yaml:11: player: unknown key (did you mean 'players'?)"),
])
def test_a_broken_tournament_file_is_one_line_and_loses_nothing(stored: Path, tmp_path: Path, old: str, new: str,
                                                                expected: str) -> None:
    broken = tmp_path / "t.yaml"
    assert old in TOURNAMENT
    broken.write_text(TOURNAMENT.replace(old, new))
    results = stored / "arena-results" / "class" / "results.sqlite"
    before = results.read_bytes()
    done = arena("run", str(broken), "--jobs", "1", "--out", str(results.parent), cwd=tmp_path)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[-1].startswith("Error: ") and expected in lines[-1], done.stderr
    assert len([line for line in lines if not line.startswith("class: ")]) == 1, done.stderr
    assert results.read_bytes() == before


@pytest.mark.parametrize("command", ["leaderboard", "matches", "show", "report"])
def test_the_tournament_file_or_the_folder_above_given_as_results_says_where_they_are(stored: Path,
                                                                                       command: str) -> None:
    """A teacher's first guesses at RESULTS: the file they ran, or arena-results."""
    done = arena(command, "t.yaml", cwd=stored)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "Error: t.yaml: cannot open results database: file is not a database; t.yaml is a tournament file, "
        "not results: its results go to arena-results/class"]
    done = arena(command, "arena-results", cwd=stored)
    assert done.returncode == 1 and done.stderr.splitlines() == [
        "Error: arena-results/results.sqlite: no such results database; results are in arena-results/class"]


def test_a_yaml_file_that_is_no_tournament_given_as_results_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "deal.yaml").write_text("x: [\n")
    done = arena("leaderboard", "deal.yaml", cwd=tmp_path)
    assert done.returncode == 1 and done.stderr.splitlines() == [
        "Error: deal.yaml: cannot open results database: file is not a database; deal.yaml is a YAML file, "
        "not results: give the results directory `arena run` named"]


def test_config_differences_name_the_bot_and_the_key() -> None:
    from arena.tournament.config.diff import differences

    old = {"bots": [{"name": "a", "command": ["python3", "a.py"]}, {"name": "b", "env": {}}],
           "players": 3, "time": {"per_move": 1}}
    new = {"bots": [{"name": "a", "command": ["python3", "a2.py"]}, {"name": "b", "env": {"X": "1"}}],
           "players": 4, "time": {"per_move": 1, "bank": 30}}
    assert differences(old, new) == [
        'bots.a.command: was ["python3", "a.py"], now ["python3", "a2.py"]',
        'bots.b.env.X: now "1", not given before',
        "players: was 3, now 4",
        "time.bank: now 30, not given before"]
    renamed = {**old, "bots": [{"name": "a", "command": ["python3", "a.py"]}, {"name": "c", "env": {}}]}
    assert differences(old, renamed) == ['bots[1].name: was "b", now "c"']
    # a bot added or removed is named: the two lists, cut short, showed the same first characters
    fewer = {**old, "bots": old["bots"][:1]}
    assert differences(old, fewer) == ["bots: b removed"]
    more = {**new, "bots": [{"name": "z", "env": {}}, *new["bots"]]}
    assert differences(old, more) == ["bots: z added", 'bots.a.command: was ["python3", "a.py"], now ["python3", "a2.py"]',
                                      'bots.b.env.X: now "1", not given before',
                                      "players: was 3, now 4", "time.bank: now 30, not given before"]
    swapped = {**old, "bots": [old["bots"][1], {"name": "c"}, old["bots"][0]]}
    assert differences(old, swapped) == ["bots: c added", "bots: order changed"]
    assert differences(old, old) == []


def test_the_grade_book_shows_the_rank_range_of_the_leaderboard(stored: Path, tmp_path: Path) -> None:
    import csv

    results = stored / "arena-results" / "class"
    board = arena("leaderboard", str(results), "--format", "csv")
    made = arena("report", str(results), "--out", str(tmp_path), "--no-replays")
    assert board.returncode == 0 and made.returncode == 0, made.stderr
    ranks = {r["bot"]: r["ranks"] for r in csv.DictReader(board.stdout.splitlines())}
    graded = list(csv.DictReader((tmp_path / "gradebook.csv").open()))
    # two bots the matches do not tell apart must not get ranks 2 and 3 in a grade book
    assert {r["bot"]: r["ranks"] for r in graded} == ranks
    assert list(graded[0])[:3] == ["bot", "rank", "ranks"]


def test_a_second_run_into_the_same_results_is_refused_at_once(tmp_path: Path) -> None:
    # the first run's bot program waits before its 'ready': the run is under way meanwhile
    (tmp_path / "t.yaml").write_text(TOURNAMENT.replace("python3 minimal.py", "python3 slow_start.py 60")
                                     .replace("  per_move: 1\n", "  per_move: 1\n  startup: 120\n"))
    first = subprocess.Popen([PY, "-m", "arena", "run", "t.yaml", "--jobs", "1"], cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        results = tmp_path / "arena-results" / "class" / "results.sqlite"
        deadline = time.monotonic() + 120
        while not results.exists() and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert results.exists(), "the first run never started"
        second = arena("run", "t.yaml", "--jobs", "1", cwd=tmp_path)
        assert first.poll() is None                        # the first run goes on
        assert second.returncode == 1 and "Traceback" not in second.stderr, second.stderr
        assert second.stderr.strip().splitlines()[1:] == [      # after the announcement
            f"Error: {results.parent}: another arena run (pid {first.pid}) is playing into these results; "
            "wait for it to finish, or give this run another --out"]
    finally:
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=60)


def test_every_command_ends_a_ctrl_c_with_130_and_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Not only play, check and run: the group turns any command's
    KeyboardInterrupt into one line and 130 (click alone: "Aborted!", 1)."""
    from click.testing import CliRunner

    from arena.cli import main
    from arena.cli import tournament as commands

    def interrupted(results: str) -> None:
        raise KeyboardInterrupt
    monkeypatch.setattr(commands, "open_store", interrupted)
    done = CliRunner().invoke(main, ["leaderboard", str(tmp_path)])
    assert done.exit_code == 130 and done.output == "Error: interrupted\n", done.output


def test_resuming_after_a_bot_program_changed_warns_that_its_matches_are_old(tmp_path: Path) -> None:
    """A student hands in a fixed bot.py: the tournament file is unchanged, so
    the same command resumes and finds every match stored.  It says that the
    stored matches were played by the earlier program and how to rank the
    new one, instead of ranking the old program without a word."""
    student = tmp_path / "submissions" / "dave"
    student.mkdir(parents=True)
    for name in ("minimal.py", "common.py"):
        (student / name).write_text((GAMEBOTS / name).read_text())
    (tmp_path / "class.yaml").write_text(f"""
name: class
bots:
  - {{name: dave, command: [{json.dumps(PY)}, bot.py], dir: submissions/dave}}
  - {{name: ref, builtin: greedy}}
players: 2
rules: {{contracts: [2S3]}}
seed: 1
""")
    (student / "bot.py").write_text((GAMEBOTS / "minimal.py").read_text())
    first = arena("run", "class.yaml", "--jobs", "1", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    again = arena("run", "class.yaml", "--jobs", "1", cwd=tmp_path)
    assert again.returncode == 0 and "warning" not in again.stderr, again.stderr
    later = time.time() + 120          # the resubmission, written after the matches
    os.utime(student / "bot.py", (later, later))
    resumed = arena("run", "class.yaml", "--jobs", "1", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    (warning,) = [line for line in resumed.stderr.splitlines() if line.startswith("warning:")]
    assert warning.startswith(f"warning: bots.dave: {student / 'bot.py'} changed (")
    assert "its 2 stored matches were played by the earlier program" in warning
    assert "re-play its matches with --rerun dave" in warning
    # the other files of its folder are not the program: no warning for them
    (student / "notes.txt").write_text("changed")
    os.utime(student / "bot.py", (time.time() - 3600, time.time() - 3600))
    quiet = arena("run", "class.yaml", "--jobs", "1", cwd=tmp_path)
    assert "warning" not in quiet.stderr, quiet.stderr


def test_the_tables_of_a_run_still_playing_say_they_are_partial(tmp_path: Path) -> None:
    """A teacher looks at the leaderboard while the class's run plays: the
    table ranks the matches stored so far, and says so."""
    from arena.tournament.runlock import results_lock

    (tmp_path / "t.yaml").write_text("name: t\nbots: [{name: a, builtin: greedy}, {name: b, builtin: random}]\n"
                                     "players: 2\nrules: {contracts: [2S3]}\nseed: 1\n")
    assert arena("run", "t.yaml", "--out", "res", cwd=tmp_path).returncode == 0
    done = arena("leaderboard", "res", cwd=tmp_path)
    assert done.returncode == 0 and "partial" not in done.stdout + done.stderr
    with results_lock(tmp_path / "res"):       # as a run playing into it holds it (a POSIX lock: another process's)
        board = arena("leaderboard", "res", cwd=tmp_path, own_process=True)
        as_csv = arena("leaderboard", "res", "--format", "csv", cwd=tmp_path, own_process=True)
        report = arena("report", "res", "--no-replays", cwd=tmp_path, own_process=True)
    note = f"note: an arena run (pid {os.getpid()}) is still playing into res: these results are partial"
    assert board.returncode == 0 and note in board.stdout, board.stdout
    assert as_csv.returncode == 0 and note in as_csv.stderr and "partial" not in as_csv.stdout
    assert report.returncode == 0 and note in report.stderr, report.stderr


def test_the_leaderboard_of_an_unfinished_tournament_says_so(stored: Path, tmp_path: Path) -> None:
    """A run stopped part-way (Ctrl-C, a kill, a crash of the machine) left a
    leaderboard that read like the final one: an organiser could publish a
    table of half the matches without a word saying so."""
    import shutil
    import sqlite3

    results = stored / "arena-results" / "class"
    assert "scheduled" not in arena("leaderboard", str(results)).stdout
    cut = tmp_path / "cut"
    shutil.copytree(results, cut)
    with sqlite3.connect(cut / "results.sqlite") as db:
        db.execute("PRAGMA foreign_keys = ON")
        db.execute("DELETE FROM matches WHERE schedule_index = 1")
    plain = arena("leaderboard", str(cut))
    assert plain.returncode == 0, plain.stderr
    note = ("2 of the 3 scheduled matches are stored: the tournament is not finished; "
            "running it again plays the other 1")
    assert plain.stdout.rstrip().endswith(note), plain.stdout
    as_json = arena("leaderboard", str(cut), "--format", "json")
    json.loads(as_json.stdout)
    assert as_json.stderr.strip() == note


def test_a_dry_run_over_stored_results_says_what_a_run_would_do(stored: Path, tmp_path: Path) -> None:
    """An organiser checks an edited file with --dry-run before resuming: it
    printed the new schedule as if all were well, and only the run refused."""
    results = stored / "arena-results" / "class"
    before = (results / "results.sqlite").read_bytes()
    same = arena("run", "t.yaml", "--dry-run", "--out", str(results), cwd=stored)
    assert same.returncode == 0, same.stderr
    assert f"3 of 3 matches already stored in {results / 'results.sqlite'}" in same.stderr
    (tmp_path / "t.yaml").write_text(TOURNAMENT.replace("contracts: [2S3]", "contracts: [2R4]"))
    changed = arena("run", "t.yaml", "--dry-run", "--out", str(results), cwd=tmp_path)
    assert changed.returncode == 1
    assert changed.stderr.strip().splitlines()[-1].startswith(f"Error: {results / 'results.sqlite'}: holds results "
                                                              f"of tournament 'class' with a different configuration")
    assert changed.stdout == ""
    assert (results / "results.sqlite").read_bytes() == before


def test_a_resume_with_another_sandbox_is_refused(tmp_path: Path) -> None:
    """``sandbox: auto`` in the first run, ``none`` in its resume: half the
    final would have run without a sandbox, in one table.  Refused in one
    line, as any other changed setting."""
    first = "name: t\nbots: [{name: a, builtin: greedy}, {name: b, builtin: random}]\nplayers: 2\n" \
            "rules: {contracts: [2S3]}\nseed: 1\n"
    (tmp_path / "t.yaml").write_text(first)
    assert arena("run", "t.yaml", "--out", "res", cwd=tmp_path).returncode == 0
    (tmp_path / "t.yaml").write_text(first + "sandbox: none\n")
    done = arena("run", "t.yaml", "--out", "res", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    (error,) = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert 'with a different configuration (sandbox: was "auto", now "none")' in error, done.stderr


def test_results_stored_before_the_sandbox_was_stored_still_resume(tmp_path: Path) -> None:
    from arena.tournament.results.database import ResultStore, StoreError

    with ResultStore(tmp_path / "r.sqlite") as store:
        store.init_tournament("t", {"name": "t", "players": 2}, seed=1)
        store._conn.execute("INSERT INTO matches VALUES ('m1', 0, 0, 0, 0, 1, 0, 0, 0, 0, 'x', 'x', NULL, NULL)")
        store.init_tournament("t", {"name": "t", "players": 2, "sandbox": "bwrap"}, seed=1)   # no error
        with pytest.raises(StoreError, match="players: was 2, now 3"):
            store.init_tournament("t", {"name": "t", "players": 3, "sandbox": "bwrap"}, seed=1)
