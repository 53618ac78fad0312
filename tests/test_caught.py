"""A bot caught computing between its turns, on the record: stored per seat
(schema 4), and shown where an organiser looks before publishing a table
(``arena show`` of a match and of the tournament, ``--json``, the report and
its grade book, the summary that ends ``arena run``); and forfeits marked in
``arena show``'s final table.

The tournament, through the real ``arena run``: ``ponder_minimal.py`` (the
minimal bot with a child process that computes all the time), ``late.py`` (sleeps
1.5 s at its first request: that turn leaves the CPU to the ponderer for
several of the watchdog's scans, so it is caught even on a loaded machine;
with 0.6 s, as ``arena check``'s opponent sleeps, at load 17 on 2 cores
one match in three did not catch it) and ``exit_midway.py`` (exits at its 5th request: a crash, its seat
forfeited).  Duplicate deals give each match fresh processes, so the
ponderer is caught anew in every match.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from inproc import arena_here
from test_fault_lines import SEATS_2

from arena.match import MatchResult
from arena.match.spec import Fault
from arena.tournament.results.database import SCHEMA_VERSION, ResultStore
from arena.tournament.standings.faults import FaultTally

ROOT = Path(__file__).resolve().parent.parent
GAMEBOTS = ROOT / "tests" / "gamebots"
PONDER = GAMEBOTS / "ponder_minimal.py"
PY = sys.executable


def arena(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    res = arena_here(*args, cwd=cwd)
    assert "Traceback" not in res.stdout + res.stderr, res.stderr
    return res


def tournament_file(where: Path) -> Path:
    path = where / "t.yaml"
    path.write_text(f"""
name: caught
bots:
  - name: ponder
    command: [{json.dumps(PY)}, {json.dumps(str(PONDER))}]
  - name: sleepy
    command: [{json.dumps(PY)}, {json.dumps(str(GAMEBOTS / "late.py"))}, "1.5", "--once"]
  - name: crashy
    command: [{json.dumps(PY)}, {json.dumps(str(GAMEBOTS / "exit_midway.py"))}, "5"]
players: 3
rules: {{contracts: [2S3]}}
time: {{startup: 30, per_move: 5}}
seed: 9
""")
    return path


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    where = tmp_path_factory.mktemp("caught")
    t = tournament_file(where)
    res = arena("run", str(t), "--out", str(where / "results"), "--jobs", "1")
    assert res.returncode == 0, res.stderr
    return t, where / "results", res


def test_the_store_keeps_who_was_caught_in_which_match(run) -> None:
    _, results, res = run
    with ResultStore(results / "results.sqlite", create=False) as store:
        matches = store.matches()
    assert len(matches) == 3
    for m in matches:
        by_bot = dict(zip(m.bots, m.off_turn_cpu))
        assert by_bot["ponder"] is not None and by_bot["ponder"] > 0, (m.match_id, by_bot)
        assert by_bot["sleepy"] is None and by_bot["crashy"] is None, (m.match_id, by_bot)
    # The summary that ends `arena run` says it too, apart from the faults: being caught is none.
    faults, _, caught = res.stderr.partition("CPU used between their turns, measured (no fault")
    assert "crashy: 3 crashes" in faults and "ponder" not in faults.partition("Faults this run")[2], res.stderr
    assert "\n  ponder: in 3 matches" in caught and "crashy" not in caught, res.stderr


def _result(off_turn_cpu: tuple[float | None, ...], forfeited: tuple[bool, ...] = (False, False)) -> MatchResult:
    return MatchResult("m", ("a", "b"), (0, 5), (1, 2), ((0, 5),), (0,), forfeited, (), (), (None, None), {},
                       1.0, 0.1, off_turn_cpu=off_turn_cpu)


def test_a_run_with_only_catches_has_no_faults() -> None:
    tally = FaultTally()
    for _ in range(2):
        tally.add(("ponder", "calm"), _result((0.25, None)))
    assert tally.lines() == [
        "Faults this run: none",
        "CPU used between their turns, measured (no fault: each was stopped between its turns from then on; "
        "`arena show RESULTS` lists the matches):",
        "  ponder: in 2 matches"]
    tally.add(("calm", "ponder"), _result((None, 0.5), forfeited=(True, False)))
    assert tally.lines()[:2] == ["Faults this run (each bot's first, to tell its author; `arena show RESULTS MATCH` "
                                 "has the details):",
                                 "  calm: forfeited 1 match"]
    assert tally.lines()[-1] == "  ponder: in 3 matches" and len(tally.lines()) == 4


def test_show_marks_the_caught_bot_and_the_forfeited_seat_in_the_final_table(run) -> None:
    _, results, _ = run
    res = arena("show", str(results), "t000-r0-d0")
    assert res.returncode == 0, res.stderr
    table = res.stdout[res.stdout.index("place"):].split("\n\n")[0]
    rows = {name: line for line in table.splitlines() for name in ("ponder", "sleepy", "crashy") if name in line}
    assert "(CPU between turns)" in rows["ponder"] and "forfeit" not in rows["ponder"]
    assert "(forfeited)" in rows["crashy"] and "CPU between turns" not in rows["crashy"]
    assert "(" not in rows["sleepy"]
    # The forfeited seat is last, whatever its total (the stored place, not the game's).
    assert re.match(r"\s*3\s", rows["crashy"]), rows["crashy"]
    assert re.search(r"seat \d \(ponder\): used \d+\.\d{3} s of CPU between its turns", res.stdout)


def test_a_kept_process_caught_before_the_match_is_said_stopped_not_to_have_used_0_000_s(
        run, tmp_path: Path) -> None:
    """A kept process caught in an earlier match is stopped between its turns
    throughout the next one: that match records 0 s, which ``arena show``
    says in words, as the replay viewer does."""
    import shutil

    _, results, _ = run
    copy = tmp_path / "results"
    shutil.copytree(results, copy)
    with sqlite3.connect(copy / "results.sqlite") as db:
        n = db.execute("UPDATE seats SET off_turn_cpu = 0.0 WHERE match_id = 't000-r0-d0' "
                       "AND off_turn_cpu IS NOT NULL").rowcount
    assert n == 1
    res = arena("show", str(copy), "t000-r0-d0")
    assert res.returncode == 0, res.stderr
    assert re.search(r"seat \d \(ponder\): stopped between its turns throughout \(its process was caught using "
                     r"CPU between them before this match\)", res.stdout), res.stdout
    assert "0.000 s" not in res.stdout


def test_show_json_has_the_cpu_per_seat(run) -> None:
    _, results, _ = run
    shown = json.loads(arena("show", str(results), "t000-r1-d0", "--json").stdout)
    cpu = dict(zip(shown["bots"], shown["off_turn_cpu"]))
    assert cpu["ponder"] > 0 and cpu["sleepy"] is None and cpu["crashy"] is None


def test_show_without_a_match_summarises_the_tournament(run) -> None:
    _, results, _ = run
    res = arena("show", str(results))
    assert res.returncode == 0, res.stderr
    assert re.search(r"^  ponder: in 3 of 3 matches, \d+\.\d{3} s of CPU between turns; t000-r0-d0, ",
                     res.stdout, re.M), res.stdout
    assert re.search(r"^  crashy: 3 of 3 matches; t000-r0-d0", res.stdout, re.M), res.stdout
    assert re.search(r"^  crashy: 3 crashes; first: crash in t000-r0-d0, hand 1, request id \d+ \(\w+\): exited "
                     r"with code 3; stderr: exit_midway: giving up now$", res.stdout, re.M), res.stdout
    assert "sleepy" not in res.stdout
    summary = json.loads(arena("show", str(results), "--json").stdout)
    bots = {b["bot"]: b for b in summary["bots"]}
    assert summary["matches"] == 3 and len(bots["ponder"]["caught"]) == 3 and bots["ponder"]["off_turn_cpu"] > 0
    assert bots["sleepy"]["caught"] == [] and bots["crashy"]["faults"]["crash"] == 3


def test_the_report_and_the_grade_book_show_it(run, tmp_path: Path) -> None:
    _, results, _ = run
    res = arena("report", str(results), "--out", str(tmp_path), "--no-replays")
    assert res.returncode == 0, res.stderr
    page = (tmp_path / "index.html").read_text()
    caught = dict(re.findall(r'<tr data-bot="([^"]+)">.*?<td class="caught">(\d+)</td>', page, re.S))
    assert caught == {"ponder": "3", "sleepy": "0", "crashy": "0"}, caught
    assert re.search(r"Used \d+\.\d{3} s of CPU between its turns in 3 of 3 matches \(measured", page)
    assert page.count("(CPU between turns)") == 3       # the list of matches
    rows = {r["bot"]: r for r in csv.DictReader((tmp_path / "gradebook.csv").open())}
    assert {b: r["caught"] for b, r in rows.items()} == {"ponder": "3", "sleepy": "0", "crashy": "0"}


# The seats table of the previous version (3), as it shipped: no off_turn_cpu.
# The other tables are the same as now.
SEATS_3 = SEATS_2
SEAT_COLUMNS_3 = ("match_id, seat, bot, total, place, forfeited, decisions, mean_seconds, p95_seconds,"
                  " max_seconds, timeouts, stderr_log")


def old_database(results: Path, where: Path) -> tuple[Path, str]:
    """A schema-3 database holding the first match of ``results``, made from
    the old DDL: the current schema with the old seats table."""
    db = where / "results.sqlite"
    new = sqlite3.connect(results / "results.sqlite")
    ddl = [r[0] for r in new.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND tbl_name != 'seats'")]
    new.close()
    c = sqlite3.connect(db)
    for stmt in [*ddl, *SEATS_3.split(";")]:
        if stmt.strip():
            c.execute(stmt)
    c.execute("ATTACH DATABASE ? AS new", (str(results / "results.sqlite"),))
    first = c.execute("SELECT match_id FROM new.matches ORDER BY schedule_index LIMIT 1").fetchone()[0]
    columns = {"tournament": "*", "bots": "*", "matches": "*", "seats": SEAT_COLUMNS_3, "hand_scores": "*",
               "faults": "*"}
    for table, cols in columns.items():
        where_ = "" if table in ("tournament", "bots") else " WHERE match_id = ?"
        into = "" if cols == "*" else f" ({cols})"
        c.execute(f"INSERT INTO {table}{into} SELECT {cols} FROM new.{table}{where_}",
                  () if not where_ else (first,))
    c.commit()
    c.execute("DETACH DATABASE new")
    c.execute("PRAGMA user_version = 3")
    c.close()
    return db, first


def test_a_database_of_the_previous_schema_shows_reports_and_resumes(run, tmp_path: Path) -> None:
    """Schema 3 kept a caught bot only in the match record: opening the old
    file migrates it in place, taking the CPU from the records; then it
    shows, reports and resumes like a new one."""
    t, results, _ = run
    db, first = old_database(results, tmp_path)
    res = arena("show", str(tmp_path))
    assert res.returncode == 0, res.stderr
    assert re.search(r"^  ponder: in 1 of 1 match, ", res.stdout, re.M), res.stdout
    res = arena("show", str(tmp_path), first)
    assert res.returncode == 0 and "ponder (CPU between turns)" in res.stdout, res.stderr
    res = arena("report", str(tmp_path), "--no-replays")
    assert res.returncode == 0, res.stderr

    res = arena("run", str(t), "--out", str(tmp_path), "--jobs", "1")
    assert res.returncode == 0, res.stderr
    with ResultStore(db, create=False) as store:
        matches = store.matches()
        assert len(matches) == 3 and store.verify() == []
    assert all(dict(zip(m.bots, m.caught))["ponder"] for m in matches)
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4
    c.close()


def test_a_kept_process_is_charged_per_match(tmp_path: Path) -> None:
    """A process kept for the next match stays caught (and stopped between its
    turns): its next match records it again, with only that match's CPU, so
    the matches' figures add up to the process's."""
    from arena.match import BotPool, MatchSpec, SeatSpec, run_match
    from arena.process import SandboxPolicy, TimeControl

    none = SandboxPolicy("none")
    # 1.5 s of the sleepy bot's turn: the spinning child makes the ponderer a
    # suspect within a scan and is measured in the next ones (turns.py).  (Not
    # caught at load 10-17 even in 5 s while the child was forked before the
    # bot was in its cgroup: ponder_minimal.py's docstring.)
    seats = (SeatSpec.command([PY, str(PONDER)], name="ponder", sandbox=none),
             SeatSpec.command([PY, str(GAMEBOTS / "late.py"), "1.5", "--once"], name="sleepy", sandbox=none),
             SeatSpec.builtin("passive"))
    tc = TimeControl(startup_seconds=30, per_decision_seconds=5)
    with BotPool() as pool:
        first, second = (run_match(MatchSpec(f"m{seed}", seats, {"contracts": ["2S3"]}, seed=seed, time=tc,
                                             log_dir=str(tmp_path)), pool) for seed in (1, 2))
        assert second.reused[0] and second.pids[0] == first.pids[0]
        total = next(h.proc.off_turn_seconds for kept in pool._idle.values() for h in kept
                     if h.proc.pid == first.pids[0])
    assert first.off_turn_cpu[0] is not None and first.off_turn_cpu[0] > 0
    assert second.off_turn_cpu[0] is not None
    assert total is not None and first.off_turn_cpu[0] + second.off_turn_cpu[0] == pytest.approx(total, abs=0.002)
    assert second.record["trace"][0]["off_turn_cpu"] == second.off_turn_cpu[0]
    assert first.off_turn_cpu[1:] == second.off_turn_cpu[1:] == (None, None)


def test_play_says_so_too(tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text("contracts: [2S3]\n")
    res = arena("play", f"{PY} {PONDER}", f"{PY} {GAMEBOTS / 'late.py'} 1.5 --once", "passive", "--seed", "2",
                "--rules", str(rules), "--log-dir", str(tmp_path / "logs"), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    lines = res.stdout[res.stdout.index("Bot programs:"):].splitlines()
    assert re.fullmatch(r"    used \d+\.\d{3} s of CPU between its turns \(measured\): .*", lines[2]), lines
    assert len(lines) == 4, lines        # the other bot program was not caught


def test_the_replay_viewer_has_it_per_seat(run, tmp_path: Path) -> None:
    from arena.report.html import replay_data

    _, results, _ = run
    page = tmp_path / "m.html"
    res = arena("show", str(results), "t000-r1-d0", "--html", "--out", str(page))
    assert res.returncode == 0, res.stderr
    data = replay_data(page.read_text())
    cpu = dict(zip(data["names"], data["off_turn"]))
    assert cpu["ponder"] > 0 and cpu["sleepy"] is None and cpu["crashy"] is None
    assert "of CPU between its turns (measured)" in page.read_text()      # the script that shows it


def test_computing_while_kept_in_the_pool_is_charged_to_the_next_match(tmp_path: Path) -> None:
    """A process that plays its first match cleanly, then computes while it
    waits in the pool for its next, is caught there (parked) and charged that
    CPU in the next match's record: no CPU it was caught using is left out,
    and the matches still add up to the process's figure."""
    import time

    from arena.match import BotPool, MatchSpec, SeatSpec, run_match
    from arena.process import SandboxPolicy, TimeControl

    none = SandboxPolicy("none")
    seats = (SeatSpec.command([PY, str(PONDER), "--after-end"], name="ponder", sandbox=none),
             SeatSpec.builtin("random"))
    tc = TimeControl(startup_seconds=30, per_decision_seconds=5)
    with BotPool() as pool:
        def play(seed: int) -> MatchResult:
            return run_match(MatchSpec(f"m{seed}", seats, {"contracts": ["2S3"]}, seed=seed, time=tc,
                                       log_dir=str(tmp_path)), pool)

        first = play(1)
        kept = next(h for hs in pool._idle.values() for h in hs if h.proc.pid == first.pids[0])
        deadline = time.monotonic() + 30
        while kept.proc.off_turn_seconds is None and time.monotonic() < deadline:
            time.sleep(0.05)          # its own second after 'end', then a scan or two
        parked = kept.proc.off_turn_seconds
        clock = kept.proc.transport.turns
        # (What the clock holds says where it stood: a CPU that did not grow was a child outside the cgroup.)
        state = {name: getattr(clock, name) for name in ("suspect", "exact", "since", "until", "closed",
                                                         "debt", "off_turn", "gaps", "_high", "_expired")
                 } if clock is not None else None
        assert parked is not None and parked > 0, f"computing in the pool was not caught: {state}"
        second = play(2)
        assert second.reused[0] and second.pids[0] == first.pids[0]
        total = kept.proc.off_turn_seconds
    assert first.off_turn_cpu[0] is None                  # its first match was clean
    assert second.off_turn_cpu[0] is not None and second.off_turn_cpu[0] >= parked - 0.001
    assert total is not None and second.off_turn_cpu[0] == pytest.approx(total, abs=0.002)


def test_the_run_summary_names_each_bot_s_first_fault() -> None:
    """A teacher reading the summary learns why a bot failed without opening a match."""
    tally = FaultTally()
    first = Fault(0, "crash", 1, None, "start", "exited with code 1; stderr: FileNotFoundError: 'w.txt'",
                  forfeit=True)
    later = Fault(0, "illegal", 2, 7, "play", "you do not hold KH", request_id=4)
    # parallel matches finish out of order: the first fault is the schedule's first
    tally.add(("alice", "bob"), dataclasses.replace(_result((None, None)), faults=(later,)), "t001-r0-d0", 3)
    tally.add(("alice", "bob"), dataclasses.replace(_result((None, None), (True, False)), faults=(first,)),
              "t000-r0-d0", 0)
    tally.add(("bob", "alice"), dataclasses.replace(_result((None, None)), faults=(
        dataclasses.replace(later, seat=1),)), "t002-r0-d0", 6)
    assert tally.lines()[1:] == [
        "  alice: 1 crash, 2 illegal moves, forfeited 1 match; first: crash in t000-r0-d0, at start-up: "
        "exited with code 1; stderr: FileNotFoundError: 'w.txt'"]
