"""`arena run` (and `arena play`) warn when sandboxed bots can read each other's files: two
bots with one `dir:` (or dirs that nest) see each other's files there, all
but their programs and scripts (a red-team finding; docs/SECURITY.md).

Through the real command line: what an organiser sees on stderr.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from inproc import arena_here

ROOT = Path(__file__).resolve().parent.parent
BOT = ROOT / "bots" / "random_bot.py"
PY = sys.executable


def arena(*args: str) -> subprocess.CompletedProcess[str]:
    return arena_here(*args, cwd=ROOT)


PEEK = """import sys
try:
    with open("alice_book.json") as book:
        sys.stderr.write("peek: " + book.read() + "\\n")
except OSError as exc:
    sys.stderr.write(f"peek: {exc}\\n")
sys.stderr.flush()
"""


def warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("warning:")]


def tournament(tmp_path: Path, bots: dict[str, tuple[str, str]], sandbox: str = "auto") -> Path:
    """bots: name -> (dir, program file in it), each a copy of a shipped bot."""
    lines = ["name: t", f"sandbox: {sandbox}", "players: 2", "seed: 2410114748679867459", "bots:"]
    for name, (folder, program) in bots.items():
        target = tmp_path / folder / program
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(BOT, target)
        lines += [f"  - name: {name}", f"    command: {PY} {program}", f"    dir: {folder}"]
    path = tmp_path / "t.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_bots_sharing_a_folder_with_a_file_of_their_own_are_warned_on_a_run_and_a_dry_run(tmp_path: Path) -> None:
    path = tournament(tmp_path, {"alice": ("sub", "alice.py"), "bob": ("sub", "bob.py")})
    (tmp_path / "sub" / "alice_book.json").write_text('{"secret": 42}')
    bob = tmp_path / "sub" / "bob.py"        # reads alice's book, as the warning says it can
    bob.write_text(PEEK + bob.read_text())
    for extra in (["--dry-run"], ["--jobs", "1"]):    # the run's matches are played, as always
        done = arena("run", str(path), "--out", str(tmp_path / "out"), *extra)
        assert done.returncode == 0, done.stderr
        assert warnings(done.stderr) == [
            f"warning: bots alice and bob can read each other's files in {tmp_path / 'sub'} "
            f"(such as alice_book.json): the sandbox hides the other bots' programs and scripts, not a "
            f"folder that holds what a bot runs from; give each bot a folder of its own (its dir:, "
            f"with its program in it)"], done.stderr
    logs = [p.read_text() for p in (tmp_path / "out").rglob("*bob*.log")]
    assert logs and all('peek: {"secret": 42}' in log for log in logs), logs




def test_a_bot_whose_dir_is_inside_another_bots_reads_nothing_of_the_outer_one(visible_dir: Path) -> None:
    """Dirs that nest: the inner bot's sandbox holds its own folder, not the
    one around it (the allow-list), and the inner folder is hidden from the
    outer bot: no one can read the other's files, so no warning."""
    tmp_path = visible_dir          # outside the private /tmp, which would hide alice's folder from bob
    path = tournament(tmp_path, {"alice": ("sub", "alice.py"), "bob": ("sub/bob", "bob.py")})
    (tmp_path / "sub" / "weights.bin").write_bytes(b"\0")
    (tmp_path / "sub" / "bob" / "book.json").write_text("{}")     # bob's own, hidden from alice
    found = warnings(arena("run", str(path), "--dry-run").stderr)
    assert found == [], found


def test_no_warning_where_the_private_tmp_hides_the_outer_folder(tmp_path: Path) -> None:
    if not str(tmp_path).startswith("/tmp/"):
        pytest.skip("the test's directory is not under /tmp")
    path = tournament(tmp_path, {"alice": ("sub", "alice.py"), "bob": ("sub/bob", "bob.py")})
    (tmp_path / "sub" / "weights.bin").write_bytes(b"\0")
    done = arena("run", str(path), "--dry-run")
    assert done.returncode == 0 and warnings(done.stderr) == [], done.stderr


@pytest.mark.parametrize("layout", ["programs only", "a folder per program", "no sandbox"])
def test_no_warning_where_no_bot_reads_another_ones_files(tmp_path: Path, layout: str) -> None:
    if layout == "a folder per program":     # one dir for both, each program in a folder of its own
        path = tournament(tmp_path, {"alice": ("sub", "alice/bot.py"), "bob": ("sub", "bob/bot.py")})
        (tmp_path / "sub" / "alice" / "book.json").write_text("{}")
        (tmp_path / "sub" / "bob" / "book.json").write_text("{}")
    else:
        path = tournament(tmp_path, {"alice": ("sub", "alice.py"), "bob": ("sub", "bob.py")},
                          sandbox="none" if layout == "no sandbox" else "auto")
        (tmp_path / "sub" / "README.md").write_text("how to run these bots")
        if layout == "no sandbox":
            (tmp_path / "sub" / "alice_book.json").write_text("{}")
    done = arena("run", str(path), "--dry-run")
    assert done.returncode == 0 and warnings(done.stderr) == [], done.stderr


def test_the_demo_tournament_run_from_the_repository_root_is_not_warned() -> None:
    done = arena("run", str(ROOT / "tournaments" / "demo.yaml"), "--dry-run")
    assert done.returncode == 0 and warnings(done.stderr) == [], done.stderr


def play(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """arena play from tmp_path (a bot program's working directory is arena's)."""
    return arena_here("play", *args, "--seed", "1", "--log-dir", "logs", cwd=tmp_path)


def test_arena_play_warns_of_bots_sharing_a_folder_as_a_run_does(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    shutil.copy(BOT, tmp_path / "sub" / "alice.py")
    (tmp_path / "sub" / "bob.py").write_text(PEEK.replace("alice_book", "sub/alice_book") + BOT.read_text())
    (tmp_path / "sub" / "alice_book.json").write_text('{"secret": 42}')
    done = play(tmp_path, f"{PY} sub/alice.py", f"{PY} sub/bob.py")
    assert done.returncode == 0, done.stderr
    alice, bob = repr(f"{PY} sub/alice.py"), repr(f"{PY} sub/bob.py")
    assert warnings(done.stderr) == [
        f"warning: bots {alice} and {bob} can read each other's files in {tmp_path / 'sub'} "
        f"(such as alice_book.json): the sandbox hides the other bots' programs and scripts, not a "
        f"folder that holds what a bot runs from; put each bot's program in a folder of its own"], done.stderr
    logs = [p.read_text() for p in (tmp_path / "logs").rglob("*bob*.log")]
    assert logs and all('peek: {"secret": 42}' in log for log in logs), logs


@pytest.mark.parametrize("layout", ["one program in two seats", "a folder per program", "no sandbox"])
def test_arena_play_gives_no_warning_where_no_bot_reads_another_ones_files(tmp_path: Path, layout: str) -> None:
    folders = ("alice", "bob") if layout == "a folder per program" else ("sub", "sub")
    for folder, name in zip(folders, ("alice", "bob")):
        (tmp_path / folder).mkdir(exist_ok=True)
        shutil.copy(BOT, tmp_path / folder / f"{name}.py")
        (tmp_path / folder / f"{name}_book.json").write_text("{}")
    bots = [f"{PY} {folders[0]}/alice.py", f"{PY} {folders[1]}/bob.py"]
    if layout == "one program in two seats":
        bots[1] = bots[0]
    done = play(tmp_path, *bots, *(["--sandbox", "none"] if layout == "no sandbox" else []))
    assert done.returncode == 0 and warnings(done.stderr) == [], done.stderr


def a_student_folder(tmp_path: Path) -> Path:
    """A student's own folder (a bot script and its notes) beside a copy of the shipped bots."""
    shutil.copytree(ROOT / "bots", tmp_path / "bots")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "bot.sh").write_text("#!/bin/sh\nexec python3 minimal.py\n")
    (mine / "bot.sh").chmod(0o755)
    for name in ("minimal.py", "common.py"):
        shutil.copy(ROOT / "tests" / "gamebots" / name, mine / name)
    (mine / "notes.txt").write_text("what to try next")
    return mine


def test_a_students_first_play_from_their_own_folder_against_the_shipped_bots_is_not_warned(tmp_path: Path) -> None:
    """Every bot of `arena play` runs in the current folder, the student's: the
    shipped bot can read it, as any bot could, but no other bot program lies there."""
    done = play(a_student_folder(tmp_path), "./bot.sh", f"{PY} ../bots/greedy_bot.py")
    assert done.returncode == 0 and warnings(done.stderr) == [], done.stderr


def test_a_mistyped_built_in_name_is_the_only_line(tmp_path: Path) -> None:
    done = play(a_student_folder(tmp_path), "./bot.sh", f"{PY} ../bots/greedy_bot.py", "gredy")
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "Error: bot 'gredy': cannot start 'gredy': no such file or command (built-in players are: random, greedy, passive)"]
