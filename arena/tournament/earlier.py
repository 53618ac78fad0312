"""Earlier runs with the same seed, hidden from the bots of this one.

Every deal follows from the seed and the match's name, so the results of an
earlier run with this run's seed (a trial of the final, say, kept in another
``--out``) hold this run's deals, and its tournament file may hold the seed
itself.  The sandbox hides this run's results and file, and every
tournament's ``arena-results`` beside its file; this module finds the others.

Each ``arena run`` notes its results directory and tournament file in a
list of runs in the user's state directory (``$XDG_STATE_HOME/arena``, by
default ``~/.local/state/arena``).  A later run reads the seed stored in each
listed database that still exists and hides the results directory and the
tournament file of every one with its own seed.  Runs made on another
machine, by another user, or copied by hand are not on the list
(docs/SECURITY.md).  The list is a convenience: a run that cannot read or
write it goes on without it.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from ..userdirs import user_dir
from .results.database import DEFAULT_DB_NAME, ResultStore, StoreError

LOG = logging.getLogger(__name__)
RUNS_FILE = "runs.jsonl"
MAX_LINE = 8192        # a hand-edited or damaged list: longer lines are skipped


@dataclass(frozen=True)
class EarlierRun:
    """An earlier run's results directory and the tournament file it ran."""

    output: Path
    tournament_file: Path


def runs_file() -> Path | None:
    """The list of runs: in ``$XDG_STATE_HOME`` (an absolute path), else
    ``~/.local/state``; None without a home directory to put it in."""
    state = user_dir("XDG_STATE_HOME", ".local/state")
    return state / RUNS_FILE if state is not None else None


def _listed() -> list[EarlierRun]:
    path = runs_file()
    if path is None:
        return []
    try:
        with path.open("rb") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    runs: list[EarlierRun] = []
    for line in lines:
        if len(line) > MAX_LINE:
            continue
        try:
            entry = json.loads(line)
            runs.append(EarlierRun(Path(entry["out"]), Path(entry["file"])))
        except (ValueError, KeyError, TypeError):
            continue             # a damaged line hides nothing; the others still count
    return runs


def remember_run(output: Path, tournament_file: Path) -> None:
    """Add this run to the list, once, and drop the runs whose results
    directories are gone."""
    run = EarlierRun(output.absolute(), tournament_file.absolute())
    path = runs_file()
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Runs started at once take turns: none loses another's line.
        with open(path.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            listed = _listed()
            # A run just started has its folder before its database.
            kept = [r for r in listed if r == run or r.output.is_dir()]
            if run not in kept:
                kept.append(run)
            if kept[:len(listed)] == listed:
                if len(kept) > len(listed):
                    with path.open("a") as f:
                        f.write(_line(run))
            else:
                temp = path.with_suffix(".new")
                temp.write_text("".join(map(_line, kept)))
                os.replace(temp, path)
    except OSError as exc:
        LOG.debug("could not note this run in %s: %s", path, exc)


def _line(run: EarlierRun) -> str:
    return json.dumps({"out": str(run.output), "file": str(run.tournament_file)}) + "\n"


def _stored_seed(output: Path) -> int | None:
    db = output / DEFAULT_DB_NAME
    if not db.is_file():
        return None
    try:
        store = ResultStore(db, create=False, readonly=True)
    except StoreError:
        return None
    try:
        stored = store.tournament()
    except StoreError:
        return None
    finally:
        store.close()
    seed = None if stored is None else stored.get("seed")
    return seed if isinstance(seed, int) else None


def same_seed_runs(seed: int, output: Path) -> list[EarlierRun]:
    """The listed runs, other than into ``output``, whose stored seed is ``seed``."""
    here = output.absolute()
    found: list[EarlierRun] = []
    for run in _listed():
        if run.output == here or run in found:
            continue
        if _stored_seed(run.output) == seed:
            found.append(run)
    return found
