"""What a Ray run ships to its nodes (issue 33): the bots' folders, never a
home directory's private files.  Checked against Ray's own packer (the zip
it would upload, made here without a cluster); tests/test_ray_nodes.py sees
what arrives on a node."""

from __future__ import annotations

import os
import sys
import zipfile
from pathlib import Path

import pytest

from arena.tournament.config.load import load_config
from arena.tournament.executors.choose import WorkerError, ship_plan
from arena.tournament.executors.shipping import plan


def home(tmp: Path) -> Path:
    """A home directory with a tournament file at its top and bots below it."""
    h = tmp / "home"
    files = {
        ".ssh/id_rsa": "PRIVATE KEY", ".bash_history": "history", ".git/config": "git", "notes/diary.txt": "secret",
        "bots/a/bot.py": "print()", "bots/a/.cfg": "a dot-file is the bot's", "bots/a/.git/HEAD": "git",
        "bots/a/.venv/bin/python": "", "bots/a/__pycache__/bot.pyc": "", "bots/a/data/.cache/x": "",
        "bots/a/.model/weights": "granted", "bots/a/big.log": "ignored by git", "bots/a/.gitignore": "*.log\n",
        "bots/b/bot.py": "print()", "bots/unused/bot.py": "print()", "bots/[odd] #name /f": "",
        "arena-results/t/results.sqlite": "results",
    }
    for name, text in files.items():
        (h / name).parent.mkdir(parents=True, exist_ok=True)
        (h / name).write_text(text)
    os.symlink(h / ".ssh", h / "bots" / "a" / "keys")            # a link out of the shipped folders
    os.symlink(h / "bots" / "b" / "bot.py", h / "bots" / "a" / "b.py")  # and one within them
    python = sys.executable
    (h / "t.yaml").write_text(f"""name: t
bots:
  - {{name: a, command: [{python}, bot.py], dir: bots/a, sandbox: {{read: [bots/a/.model]}}}}
  - {{name: b, command: [{python}, bot.py], dir: bots/b}}
players: 2
deals: 1
seed: 1
""")
    return h


def shipped_by_ray(root: str, excludes: list[str], tmp: Path) -> set[str]:
    """The files Ray's packer puts in the package it uploads (Ray's own code: what it ships)."""
    from ray._private.runtime_env.packaging import _zip_files

    out = tmp / "package.zip"
    _zip_files(root, excludes, str(out), include_gitignore=True)
    with zipfile.ZipFile(out) as z:
        return {n.rstrip("/") for n in z.namelist() if not n.endswith("/")}


def test_only_the_bots_folders_are_shipped_never_a_home_directorys_private_files(tmp_path: Path) -> None:
    h = home(tmp_path)
    shipped = ship_plan(load_config(h / "t.yaml"))
    assert shipped.shipment.root == str(h / "bots") and shipped.folders == ("a", "b")
    files = shipped_by_ray(shipped.shipment.root, list(shipped.shipment.excludes), tmp_path)
    assert files == {"a/bot.py", "a/.cfg", "a/.gitignore", "a/.model/weights", "a/b.py", "b/bot.py"}
    assert shipped.files == len(files)
    assert shipped.size == sum((h / "bots" / f).stat().st_size for f in files)
    assert shipped.line() == f"shipping to the Ray nodes from {h / 'bots'}: a, b (6 files, {shipped.size} bytes)"


def test_a_bot_in_the_tournaments_folder_ships_it_without_dot_folders_results_or_the_file(tmp_path: Path) -> None:
    h = home(tmp_path)
    (h / "t.yaml").write_text((h / "t.yaml").read_text().replace("dir: bots/b", "dir: ."))
    shipped = ship_plan(load_config(h / "t.yaml"))
    assert shipped.shipment.root == str(h) and shipped.folders == (".", "bots/a")
    files = shipped_by_ray(str(h), list(shipped.shipment.excludes), tmp_path)
    assert not {f for f in files if f.startswith((".ssh/", ".git/", "arena-results/", "bots/a/.git/"))}
    assert "t.yaml" not in files            # the seed stays on the arena's machine
    assert {"notes/diary.txt", ".bash_history", "bots/unused/bot.py", "bots/[odd] #name /f"} <= files  # its folder


def test_a_shipment_over_the_limit_is_refused_in_one_line(tmp_path: Path) -> None:
    h = home(tmp_path)
    with (h / "bots" / "b" / "model.bin").open("wb") as f:
        f.truncate(3 * 2**20)       # sparse: no disk used
    shipped = plan([str(h / "bots" / "a"), str(h / "bots" / "b")])
    with pytest.raises(WorkerError) as caught:
        shipped.refuse_if_large(2)
    assert str(caught.value) == (f"the files to ship to the Ray nodes from {h / 'bots'} take 3.0 MiB, over the 2 MiB "
                                 f"arena ships (b holds 3.0 MiB): list large files in a .rayignore in their "
                                 f"folder, or use 'files: shared'")


def test_bots_that_share_no_folder_but_slash_are_refused(tmp_path: Path) -> None:
    h = home(tmp_path)
    (h / "t.yaml").write_text((h / "t.yaml").read_text().replace("dir: bots/b", "dir: /usr"))
    with pytest.raises(WorkerError, match="share no directory but /"):
        ship_plan(load_config(h / "t.yaml"))
