"""Forfeited seats rank last, tied with each other, everywhere a table shows them.

After a forfeit the arena plays the seat on with stand-in moves so that the
match can finish; those moves' totals must not order one forfeiter above
another.  A tournament in which one table's two bots both fail (one never
starts, one crashes a few requests in) must show that table's matches as
draws: no wins for a bot that never started, nobody ahead of the other
forfeiter, in the leaderboard, head to head, ``arena matches``, ``arena
show`` and the report; and results stored by earlier versions (forfeited
seats placed by their stand-in totals) must read the same.
"""

from __future__ import annotations

import csv
import json
import re
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
from test_fault_lines import arena  # the CLI as a user runs it, no traceback allowed

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "tests" / "gamebots"


def tournament_file(tmp: Path) -> Path:
    path = tmp / "t.yaml"
    path.write_text(f"""
name: forfeits
bots:
  - name: nostart
    command: [{json.dumps(sys.executable)}, "-c", "import sys; sys.exit(1)"]
  - name: quitter
    command: [{json.dumps(sys.executable)}, {json.dumps(str(BOTS / "exit_midway.py"))}, "30"]
  - name: greedy
    builtin: greedy
  - name: random
    builtin: random
players: 2
rules:
  contracts: [2S3, S3+R4, 2R4]
  turn_cap_per_player: 15
time: {{startup: 20, per_move: 5}}
sandbox: none
deals: 2
seed: 5
""")
    return path


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("forfeits")
    out = tmp / "results"
    res = arena("run", str(tournament_file(tmp)), "--out", str(out), "--jobs", "1")
    assert res.returncode == 0, res.stderr
    return out


def seats(out: Path) -> list[tuple[str, str, int, int, int]]:
    with sqlite3.connect(out / "results.sqlite") as db:
        return db.execute("SELECT match_id, bot, total, place, forfeited FROM seats ORDER BY match_id, seat").fetchall()


def json_of(*args: str) -> object:
    res = arena(*args)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def section(out: Path, name: str) -> list[dict[str, Any]]:
    got = json_of("leaderboard", str(out), "--format", "json", "--section", name)
    assert isinstance(got, dict)
    return got[name]


def test_the_table_where_every_seat_forfeited_is_a_draw(results: Path) -> None:
    rows = seats(results)
    both = {mid for mid, bot, *_ in rows if bot == "nostart"} & {mid for mid, bot, *_ in rows if bot == "quitter"}
    assert len(both) == 4                                  # 2 deals x 2 rotations
    table = [r for r in rows if r[0] in both]
    assert all(forfeited for *_, forfeited in table)
    # the stand-in play scored differently (else this test shows nothing) ...
    assert any(len({t for mid, _, t, *_ in table if mid == m}) == 2 for m in both)
    # ... and yet both seats share the place: a draw, in the last place (both lost)
    assert {place for _, _, _, place, _ in table} == {2}
    # where another bot finished, a forfeited seat is behind it
    assert all(place == 2 for mid, bot, _, place, f in rows if f and mid not in both)

    board = {r["bot"]: r for r in section(results, "leaderboard")}
    assert board["nostart"]["wins"] == board["quitter"]["wins"] == 0
    assert board["nostart"]["hands_won"] == 0
    # a forfeit is a last place, and the arena's stand-in moves score nothing for the bot
    assert board["nostart"]["mean_place"] == board["quitter"]["mean_place"] == 2.0
    assert board["nostart"]["mean_hand_score"] is None
    assert board["nostart"]["rating"] == pytest.approx(board["quitter"]["rating"], abs=1e-6)
    assert board["nostart"]["ranks"] == board["quitter"]["ranks"]       # not told apart
    h2h = {(e["bot"], e["opponent"]): e for e in section(results, "head_to_head")}
    pair = h2h[("nostart", "quitter")]
    assert (pair["ahead"], pair["behind"], pair["tied"]) == (0, 0, 4) and pair["p_value"] == 1.0

    listed = json_of("matches", str(results), "--bot", "nostart", "--format", "json")
    assert isinstance(listed, list)
    drawn = [m for m in listed if m["match_id"] in both]
    assert len(drawn) == 4 and all(m["places"] == [2, 2] for m in drawn)
    lines = [line for line in arena("matches", str(results), "--bot", "nostart").stdout.splitlines()
             if any(m in line for m in both)]
    assert len(lines) == 4 and all(" 2. nostart " in line and " 2. quitter " in line for line in lines)

    shown = arena("show", str(results))
    assert "Forfeits (the seat ranks last in the match, tied with any other seat that forfeited):" in shown.stdout
    # what a teacher tells each author: the first fault, where and why, next to the counts
    faults = shown.stdout[shown.stdout.index("Faults (each bot's first"):].splitlines()
    nostart = next(line for line in faults if line.startswith("  nostart: "))
    assert "; first: crash in t000-r0-d0, at start-up: exited with code 1" in nostart, shown.stdout
    quitter = next(line for line in faults if line.startswith("  quitter: "))
    assert re.search(r"; first: crash in t\d+-r\d-d\d, hand \d+, request id \d+ \(\w+\): ", quitter), quitter
    summary = json.loads(arena("show", str(results), "--json").stdout)
    first = {b["bot"]: b["first_fault"] for b in summary["bots"]}
    assert first["nostart"].startswith("crash in t000-r0-d0, at start-up") and first["greedy"] is None


def test_the_report_shows_no_first_place_for_a_bot_that_never_started(results: Path, tmp_path: Path) -> None:
    made = arena("report", str(results), "--out", str(tmp_path), "--no-replays")
    assert made.returncode == 0, made.stderr
    html = (tmp_path / "index.html").read_text()
    section = html[html.index('<section class="botsection" id="bot-nostart"'):]
    section = section[:section.index("</section>")]
    assert 'data-place="1"' not in section and 'data-place="forfeit">12<' in section
    graded = {r["bot"]: r for r in csv.DictReader((tmp_path / "gradebook.csv").open())}
    assert graded["nostart"]["forfeits"] == "12"


def test_places_stored_by_earlier_versions_rank_the_same(results: Path, tmp_path: Path) -> None:
    before = {f: arena("leaderboard", str(results), "--format", "json", "--section", s).stdout
              for f, s in (("board", "leaderboard"), ("h2h", "head_to_head"), ("seats", "seats"))}
    before["matches"] = arena("matches", str(results), "--format", "json").stdout
    # The places an earlier version stored: forfeited seats ordered by their (stand-in) totals.
    old = tmp_path / "old"
    old.mkdir()
    (old / "results.sqlite").write_bytes((results / "results.sqlite").read_bytes())
    with sqlite3.connect(old / "results.sqlite") as db:
        rows = db.execute("SELECT match_id, seat, total, forfeited FROM seats").fetchall()
        changed = 0
        for mid, seat, total, forfeited in rows:
            if forfeited:
                mine = [(f, t) for m, _, t, f in rows if m == mid]
                place = 1 + sum(1 for k in mine if k < (forfeited, total))
                changed += db.execute("UPDATE seats SET place = ? WHERE match_id = ? AND seat = ? AND place != ?",
                                      (place, mid, seat, place)).rowcount
    assert changed > 0
    after = {f: arena("leaderboard", str(old), "--format", "json", "--section", s).stdout
             for f, s in (("board", "leaderboard"), ("h2h", "head_to_head"), ("seats", "seats"))}
    after["matches"] = arena("matches", str(old), "--format", "json").stdout
    assert after == before
