"""Earlier runs with the same seed are hidden from the bots (arena.tournament.earlier):
a trial's results database holds the final's deals when both have one seed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from inproc import arena_here

from arena.tournament.earlier import EarlierRun, remember_run, runs_file, same_seed_runs
from arena.tournament.results.database import DEFAULT_DB_NAME, ResultStore

HOSTILE = Path(__file__).parent / "hostile"



def stored_run(out: Path, seed: int) -> Path:
    with ResultStore(out / DEFAULT_DB_NAME) as store:
        store.init_tournament("t", {"name": "t"}, seed=seed, bots=["a", "b"])
    return out


def test_the_list_holds_each_run_once_and_finds_those_with_the_seed(tmp_path: Path) -> None:
    trial, other, gone, final = (tmp_path / n for n in ("trial", "other", "gone", "final"))
    stored_run(trial, 5)
    stored_run(other, 6)
    stored_run(final, 5)
    for out in (trial, trial, other, gone, final):
        remember_run(out, tmp_path / f"{out.name}.yaml")
    listed = runs_file()
    assert listed is not None
    # once each; "gone" is dropped when the next run is noted: its results folder does not exist
    assert [json.loads(line)["out"] for line in listed.read_text().splitlines()] == \
        [str(trial), str(other), str(final)]
    # the final itself, a run with another seed and one whose results are gone are not hidden
    assert same_seed_runs(5, final) == [EarlierRun(trial, tmp_path / "trial.yaml")]
    assert same_seed_runs(6, final) == [EarlierRun(other, tmp_path / "other.yaml")]
    assert same_seed_runs(7, final) == []


def test_a_damaged_list_or_database_hides_what_it_still_can(tmp_path: Path) -> None:
    trial = stored_run(tmp_path / "trial", 5)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / DEFAULT_DB_NAME).write_text("not a database")
    remember_run(broken, tmp_path / "broken.yaml")
    listed = runs_file()
    assert listed is not None
    with listed.open("a") as f:
        f.write('{"out": 3}\nnot json\n' + "x" * 10000 + "\n")
    remember_run(trial, tmp_path / "trial.yaml")
    assert same_seed_runs(5, tmp_path / "final") == [EarlierRun(trial, tmp_path / "trial.yaml")]


def test_a_list_that_cannot_be_written_stops_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))      # a file where the folder should be
    remember_run(tmp_path / "out", tmp_path / "t.yaml")
    assert same_seed_runs(5, tmp_path / "out") == []


def test_without_a_home_directory_nothing_is_listed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No HOME and no passwd entry: ``~`` stays unexpanded, and a relative
    ``~/.local/state`` must not appear in the current directory."""
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setattr("os.path.expanduser", lambda path: path)
    monkeypatch.chdir(tmp_path)
    assert runs_file() is None
    remember_run(tmp_path / "out", tmp_path / "t.yaml")
    assert list(tmp_path.iterdir()) == []


def tournament(path: Path, seed: int, out: str, bots: list[dict[str, object]], **more: object) -> Path:
    path.write_text(json.dumps({"name": path.stem, "sandbox": "bwrap", "players": 2, "seed": seed,
                                "rules": {"contracts": ["2S3"]}, "out": out, "bots": bots, **more}))
    return path


def run(tfile: Path) -> subprocess.CompletedProcess[str]:
    return arena_here("run", str(tfile), "--jobs", "1", cwd=tfile.parent)


def probed(out: Path) -> dict[str, object]:
    lines = [line for log in (out / "logs").glob("*-rt.stderr.log")
             for line in log.read_text().splitlines() if line.startswith("REDTEAM-PROBE read ")]
    assert lines, f"the probing bot did not play in {out}"
    return dict(json.loads(lines[0][len("REDTEAM-PROBE read "):]))


@pytest.mark.parametrize("more", [{}, {"settle": {"max_matches": 4}}], ids=["schedule", "settling run"])
def test_a_trial_run_with_the_finals_seed_is_hidden_from_the_finals_bots(visible_dir: Path,
                                                                        more: dict[str, object]) -> None:
    """Real bubblewrap (``sandbox: bwrap``: no run without it).  Both ways a
    run plays: its whole schedule, or rounds until settled."""
    rt = visible_dir / "rt"
    rt.mkdir()
    for name in ("proto.py", "redteam.py"):
        shutil.copy(HOSTILE / name, rt)
    trial = tournament(visible_dir / "trial.yaml", 5, "trial-out",
                       [{"name": "a", "builtin": "random"}, {"name": "b", "builtin": "random"}])
    done = run(trial)
    assert done.returncode == 0, done.stdout + done.stderr
    trial_db = visible_dir / "trial-out" / DEFAULT_DB_NAME
    # Granted the folder holding both runs: what a bot sees there is hidden only for the seed.
    probe = {"name": "rt", "command": [sys.executable, "redteam.py"], "dir": "rt",
             "env": {"RT_PROBES": "read", "RT_READ": f"{trial_db}:{trial}"}, "sandbox": {"read": [str(visible_dir)]}}
    ref = {"name": "ref", "builtin": "random"}

    final = run(tournament(visible_dir / "final.yaml", 5, "final-out", [probe, ref], **more))
    assert final.returncode == 0, final.stdout + final.stderr
    seen = probed(visible_dir / "final-out")
    # Left out of the granted folder, not mounted at all (the allow-list).
    assert seen[str(trial_db)] == "No such file or directory"
    assert seen[str(trial)] == "No such file or directory"
    assert (f"hiding from the bots an earlier run with this seed, which holds this run's deals: "
            f"{visible_dir / 'trial-out'} (and {trial})") in final.stdout + final.stderr

    # With a seed of its own, a run's bots see the trial as before: it holds none of their deals.
    other = run(tournament(visible_dir / "other.yaml", 6, "other-out", [probe, ref], **more))
    assert other.returncode == 0, other.stdout + other.stderr
    seen = probed(visible_dir / "other-out")
    assert seen[str(trial_db)] == trial_db.stat().st_size and seen[str(trial)] == trial.stat().st_size
    assert "earlier run" not in other.stdout + other.stderr

    # Everything stored: no bot starts, nothing to say.
    again = run(visible_dir / "final.yaml")
    assert again.returncode == 0 and "resuming" in again.stdout + again.stderr, again.stdout + again.stderr
    assert "earlier run" not in again.stdout + again.stderr
