"""What a teacher's first runs of arena found (issue 32): `--dry-run` as the
check of a class's programs, a path with spaces split into words, an
estimate printed for a run that then refused to start, and a results
folder left behind by a run that stored nothing.

Through the real command line where the two streams are what is checked.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PY = sys.executable


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "arena", *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def broken_class(tmp_path: Path) -> Path:
    """A class whose three programs cannot start: a path with a space left
    unquoted, a missing script, a mistyped interpreter."""
    (tmp_path / "ann").mkdir()
    (tmp_path / "bo").mkdir()
    spaced = tmp_path / "ann" / "my bot.sh"
    spaced.write_text("#!/bin/sh\nexit 0\n")
    spaced.chmod(0o755)
    path = tmp_path / "class.yaml"
    path.write_text("name: class\nplayers: 2\nseed: 123456789123\nrules: {contracts: [2S3]}\nbots:\n"
                    "  - {name: g, builtin: greedy}\n"
                    "  - name: ann\n    command: ./my bot.sh\n    dir: ann\n"
                    "  - name: bo\n    command: python3 bot.py\n    dir: bo\n"
                    "  - name: cy\n    command: pythn3 bot.py\n")
    return path


def test_a_dry_run_checks_every_program_and_names_its_line(tmp_path: Path) -> None:
    broken_class(tmp_path)
    done = arena("run", "class.yaml", "--dry-run", cwd=tmp_path)
    assert done.returncode == 1
    assert "t000-r0-d0" in done.stdout, done.stdout      # the schedule, still
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == [
        "error: class.yaml:7: bots.ann.command: program './my' not found; did you mean the file './my bot.sh'? "
        "quote a path that has spaces: command: \"'./my bot.sh'\"",
        f"error: class.yaml:10: bots.bo.command: script 'bot.py' not found in {tmp_path / 'bo'}",
        f"error: class.yaml:13: bots.cy.command: program 'pythn3' not found (command: pythn3 bot.py, run in "
        f"{tmp_path})"], done.stderr
    assert not (tmp_path / "arena-results").exists()


def test_with_forfeit_unstartable_a_dry_run_warns_as_the_run_would(tmp_path: Path) -> None:
    broken_class(tmp_path)
    done = arena("run", "class.yaml", "--dry-run", "--forfeit-unstartable", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if "forfeits every match it sits in" in line]
    assert len(warned) == 3 and all(line.startswith("warning: class.yaml:") for line in warned)


def test_a_run_that_cannot_start_says_why_and_nothing_else(tmp_path: Path) -> None:
    broken_class(tmp_path)
    done = arena("run", "class.yaml", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "Error: class.yaml:7: bots.ann.command: program './my' not found; did you mean the file './my bot.sh'? "
        "quote a path that has spaces: command: \"'./my bot.sh'\""], done.stderr
    assert not (tmp_path / "arena-results").exists()


def test_arena_play_tells_how_to_quote_a_path_with_spaces(tmp_path: Path) -> None:
    broken_class(tmp_path)
    done = arena("play", "./ann/my bot.sh", "greedy", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "Error: bot 'my': cannot start './ann/my': no such file or command; did you mean the file './ann/my bot.sh'? "
        "quote a path that has spaces: \"'./ann/my bot.sh'\""], done.stderr


def test_a_run_stopped_by_a_failed_build_leaves_no_results_folder(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text("name: t\nplayers: 2\nseed: 123456789123\nbots:\n"
                                     "  - {name: g, builtin: greedy}\n"
                                     "  - {name: m, command: ./bot, build: 'echo no compiler; exit 3'}\n")
    done = arena("run", "t.yaml", "--out", "deep/results", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == "Error: bots.m.build: 'echo no compiler; exit 3' failed with exit code 3: " \
                                           "no compiler", done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.yaml"]


def test_a_folder_is_removed_only_if_this_run_made_it_and_stored_nothing(tmp_path: Path) -> None:
    from arena.tournament.newfolders import new_folders, remove_unused
    from arena.tournament.results.database import ResultStore
    from arena.tournament.results.rows import FailedMatch

    out = tmp_path / "a" / "b"
    created = new_folders(out)
    assert created == [tmp_path / "a", out]
    out.mkdir(parents=True)
    with ResultStore(out / "results.sqlite") as store:
        store.init_tournament("t", {"name": "t"}, seed=1, bots=["x", "y"])
        store.add_failure(FailedMatch("m1", 0, ("x", "y"), "ValueError: a bug", None))
    remove_unused(created, out / "results.sqlite")
    assert (out / "results.sqlite").exists()        # a failure stored: its reason is kept
    remove_unused([], out / "results.sqlite")
    assert (out / "results.sqlite").exists()        # not made by this run
    empty = tmp_path / "c"
    empty.mkdir()
    with ResultStore(empty / "results.sqlite") as store:
        store.init_tournament("t", {"name": "t"}, seed=1, bots=["x", "y"])
    remove_unused([empty], empty / "results.sqlite")
    assert not empty.exists()
