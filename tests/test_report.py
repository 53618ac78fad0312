"""``arena report`` and ``arena show --html`` without a browser: the files, the
grade book, the per-bot diagnostics, stderr tied to decisions, one-line errors
for bad input, and markup from bots escaped.  (tests/test_report_browser.py
opens the pages in Chromium.)"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from report_fixtures import GAMEBOTS, cli, run_tournament

from arena.report.html import replay_data, replay_page
from arena.report.replay import _game, _snapshot, build_replay, patch
from arena.shanghai.actions import action_from_json
from arena.tournament.results.database import ResultStore


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    return run_tournament(tmp_path_factory.mktemp("report"))


@pytest.fixture(scope="module")
def report_dir(results) -> Path:
    out = results / "report"
    res = cli("report", str(results))
    assert res.exit_code == 0, res.output
    assert f"report: {out / 'index.html'}" in res.output
    return out


def test_report_is_one_file_with_everything_inline_and_a_replay_per_match(results, report_dir):
    page = (report_dir / "index.html").read_text()
    # nothing loaded from elsewhere: no external scripts, styles, images or frames
    markup = re.sub(r"(<script[^>]*>).*?</script>", r"\1</script>", page, flags=re.S)
    assert markup.count("<script") == 3 and not re.search(r"<(script|img|iframe)[^>]+src=|<link\b", markup)
    assert "Content-Security-Policy" in page and "vegaEmbed" in page
    with ResultStore(results / "results.sqlite", create=False) as store:
        ids = [m.match_id for m in store.matches()]
    assert len(ids) == 6
    assert sorted(p.stem for p in (report_dir / "replays").glob("*.html")) == sorted(ids)
    for mid in ids:
        assert f'href="replays/{mid}.html"' in page
    for section in ("leaderboard", "head-to-head", "seats", "ratings", "faults", "times", "matches"):
        assert f'id="{section}"' in page


# A fresh interpreter in which a chart library cannot be imported, as where the
# report extra was never installed, running the real command line.
WITHOUT = """
import sys
hidden = sys.argv[1]
class Missing:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == hidden:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Missing())
from arena.cli import main
sys.argv[:2] = ["arena"]
main()
"""


@pytest.mark.parametrize("library", ["altair", "vl_convert"])
def test_report_without_the_chart_libraries_is_written_without_charts_and_says_how_to_get_them(
        results, tmp_path, library):
    out = tmp_path / "report"
    res = subprocess.run([sys.executable, "-c", WITHOUT, library, "report", str(results), "--out", str(out)],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    assert f"report: {out / 'index.html'}" in res.stdout
    # one line on stderr, naming the missing library and the fix
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr
    assert f"No module named '{library}'" in res.stderr and "pip install '.[report]'" in res.stderr
    page = (out / "index.html").read_text()
    for section in ("leaderboard", "head-to-head", "seats", "ratings", "faults", "times", "matches"):
        assert f'id="{section}"' in page
    # a note where each chart would be, and no script calling the missing Vega
    assert page.count('class="note no-charts"') == 2 and "pip install &#39;.[report]&#39;" in page
    assert "vegaEmbed" not in page and 'class="chart"' not in page
    assert (out / "gradebook.csv").is_file() and len(list((out / "replays").glob("*.html"))) == 6


def test_gradebook_has_one_row_per_bot_matching_the_store(results, report_dir):
    rows = list(csv.DictReader((report_dir / "gradebook.csv").open()))
    with ResultStore(results / "results.sqlite", create=False) as store:
        matches = store.matches()
        faults = store.faults()
    assert {r["bot"] for r in rows} == {"chatty", "minimal", "greedy-builtin"}
    for r in rows:
        mine = [(m, m.bots.index(r["bot"])) for m in matches if r["bot"] in m.bots]
        assert int(r["matches"]) == len(mine)
        assert float(r["mean_place"]) == pytest.approx(sum(m.places[s] for m, s in mine) / len(mine), abs=1e-3)
        hands = sum(len(m.hand_scores) for m, _ in mine)
        assert float(r["score_per_hand"]) == pytest.approx(
            sum(h[s] for m, s in mine for h in m.hand_scores) / hands, abs=0.01)
        assert int(r["faults_illegal"]) == sum(1 for f in faults if f["bot"] == r["bot"] and f["kind"] == "illegal")
        assert int(r["forfeits"]) == sum(1 for m, s in mine if m.forfeited[s])
    # the last bot has nothing below it; the others say whether the pair test separates them from it
    assert [r["apart_from_next"] for r in rows][-1] == "" and {r["apart_from_next"] for r in rows[:-1]} <= {"yes", "no"}
    chatty = next(r for r in rows if r["bot"] == "chatty")
    assert int(chatty["faults_illegal"]) >= 2 and int(chatty["faults"]) == int(chatty["faults_illegal"])


def test_bot_diagnostics_show_each_illegal_decision_with_its_request_reply_and_stderr(results, report_dir):
    res = cli("report", str(results), "--bot", "chatty", "--no-replays")
    assert res.exit_code == 0, res.output
    page = (report_dir / "bot-chatty.html").read_text()
    assert 'data-bot="minimal"' not in page.split('id="bot-chatty"')[0]     # only chatty's section
    blocks = re.findall(r'<div class="fault illegal">(.*?)</div>\s*(?=<div class="fault|<h3>|</section>)', page, re.S)
    with ResultStore(results / "results.sqlite", create=False) as store:
        assert len(blocks) == sum(1 for f in store.faults() if f["bot"] == "chatty") >= 2
    for block in blocks:
        request = json.loads(re.search(r'<pre class="request">(.*?)</pre>', block, re.S).group(1)
                             .replace("&#34;", '"').replace("&quot;", '"'))
        assert request["type"] == "request" and request["kind"] == "play"
        # the stderr shown is the bot's own for exactly this request
        assert f"thinking about request {request['id']}\ndecided request {request['id']}" in block
        assert "go_down" in block                                            # the reply
    res = cli("report", str(results), "--bot", "nobody")
    assert res.exit_code == 1 and f"no bot 'nobody' in {results} (bots: " in res.output


def test_show_prints_what_the_bot_wrote_during_a_faulty_decision(results):
    with ResultStore(results / "results.sqlite", create=False) as store:
        fault = store.faults()[0]
    res = cli("show", str(results), fault["match_id"])
    assert res.exit_code == 0, res.output
    assert "stderr during this decision:" in res.output
    assert re.search(r"      thinking about request (\d+)\n      decided request \1\n", res.output)


def test_show_html_of_a_stored_match_and_of_a_play_log(results, tmp_path):
    with ResultStore(results / "results.sqlite", create=False) as store:
        mid = store.matches()[0].match_id
    out = tmp_path / "one.html"
    res = cli("show", str(results), mid, "--html", "--out", str(out))
    assert res.exit_code == 0 and f"replay: {out}" in res.output
    assert "replay-data" in out.read_text()
    log = tmp_path / "m.json"
    res = cli("play", f"{sys.executable} {GAMEBOTS / 'chatty.py'} --illegal-at 1", "greedy", "random",
              "--seed", "4", "--log", str(log), "--log-dir", str(tmp_path / "logs"))
    assert res.exit_code == 0, res.output
    res = cli("show", str(log), "--html")
    assert res.exit_code == 0, res.output
    page = (tmp_path / "m.html").read_text()
    data = replay_data(page)
    fault = data["faults"][0]
    assert fault["kind"] == "illegal" and "go_down" in fault["reply"]
    assert fault["stderr"].startswith("thinking about request ")
    # Anything else read from the log, which is no database, says what does read it.
    for args in (["show", str(log)], ["show", str(log), "--decision", "2"], ["matches", str(log)],
                 ["leaderboard", str(log)]):
        res = cli(*args)
        assert res.exit_code == 1 and len(res.output.strip().splitlines()) == 1, (args, res.output)
        assert f"`arena show {log} --html` opens that" in res.output, (args, res.output)


@pytest.mark.parametrize("content, message", [
    ("{not json", "not a JSON match log"),
    ('{"events": []}', "not a match log of `arena play --log`"),
    ('{"events": [{"type": "deal"}], "actions": []}', "does not start with a match_start event"),
    ('{"events": [{"type": "match_start", "players": 3}], "actions": []}', "cannot be replayed"),
])
def test_a_broken_log_gives_one_line(tmp_path, content, message):
    log = tmp_path / "bad.json"
    log.write_text(content)
    res = cli("show", str(log), "--html")
    assert res.exit_code == 1 and message in res.output
    assert len(res.output.strip().splitlines()) == 1 and "Traceback" not in res.output


def test_report_of_a_missing_database_gives_one_line(tmp_path):
    res = cli("report", str(tmp_path / "nothing"))
    assert res.exit_code == 1 and "no such results database" in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_markup_from_a_bot_cannot_escape_the_page(tmp_path):
    from arena.match import MatchSpec, SeatSpec, run_match
    result = run_match(MatchSpec("m", (SeatSpec.builtin("greedy"), SeatSpec.builtin("random")),
                                 {"contracts": ["2S3"]}, seed=3))
    evil = "</script><script>alert(1)</script>"
    page = replay_page(build_replay(result.record, [evil, "x"], title=evil))
    assert evil not in page and "alert(1)" in page      # present, but only as escaped text


def test_events_inside_one_action_change_the_table_as_the_engine_does():
    """patch() gives the table between the events of one play; where the
    engine's own table is known after the play, both agree."""
    from arena.match import MatchSpec, SeatSpec, run_match
    record = run_match(MatchSpec("m", tuple(SeatSpec.builtin("greedy") for _ in range(4)), {}, seed=9)).record
    game = _game(record)
    checked = 0
    for entry in record["actions"]:
        before, state = len(game.log), _snapshot(game)
        game.apply(action_from_json(entry["action"]), seat=entry["seat"])
        kinds = [e.kind for e in game.log[before:]]
        if len(kinds) < 2 or kinds[-1] != "discard" or "swap" in kinds:
            continue
        for e in game.log[before:]:
            state = patch(state, e.to_json())
        after = _snapshot(game)
        assert state["hands"] == after["hands"] and state["pile_top"] == after["pile_top"]
        assert state["melds"] == after["melds"]          # what the cards stand for too
        checked += 1
    assert checked > 10


def _states(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Each step's table, as the viewer rebuilds it from the steps' deltas."""
    out: list[dict[str, Any]] = []
    for st in data["steps"]:
        state = {**out[-1], **st["s"]} if out else dict(st["s"])
        if out and "hands" in st["s"]:
            state["hands"] = list(out[-1]["hands"])
            for seat, cards in st["s"]["hands"].items():
                state["hands"][int(seat)] = cards
        out.append(state)
    return out


def test_a_meld_says_what_its_cards_stand_for_at_every_lay_off():
    """Issue 32: between the events of one play (a lay-off before the discard)
    the viewer showed 'set of ?s' and a run without its range; at every step
    each meld's stands_for must be what the engine makes of its cards, wild
    cards laid off included."""
    from arena.match import MatchSpec, SeatSpec, run_match
    from arena.shanghai.cards import parse_card
    from arena.shanghai.melds import make_meld

    record = run_match(MatchSpec("m", tuple(SeatSpec.builtin("greedy") for _ in range(4)), {}, seed=1)).record
    data = build_replay(record, ["a", "b", "c", "d"], title="m")
    seen: set[tuple[str, bool]] = set()
    for step, state in zip(data["steps"], _states(data)):
        e = step["e"]
        if e["type"] != "lay_off":
            continue
        meld = next(m for m in state["melds"] if m["id"] == e["meld"])
        engine = make_meld([parse_card(c) for c in meld["cards"]], meld["kind"])
        assert meld["stands_for"] == engine.represents(), (e, meld)
        seen.add((meld["kind"], e["card"] == "JK" or e["card"].startswith("2")))
    assert seen == {("set", False), ("set", True), ("run", False), ("run", True)}


def test_show_one_decision_prints_the_stderr_the_bot_wrote_during_it(results):
    with ResultStore(results / "results.sqlite", create=False) as store:
        m = store.match(store.matches()[1].match_id)
    seat = m.bots.index("chatty")
    k, req_id = m.record["trace"][seat]["decisions"][4][:2]
    res = cli("show", str(results), m.match_id, "--decision", str(k))
    assert res.exit_code == 0, res.output
    assert res.output.startswith(f"decision {k}: seat {seat} (chatty)")
    assert f"    thinking about request {req_id}\n    decided request {req_id}\n" in res.output
    res = cli("show", str(results), m.match_id, "--decision", "100000")
    assert res.exit_code == 1 and "has decisions 0 to" in res.output


def test_only_bots_that_wrote_on_stderr_have_a_log_file(results):
    with ResultStore(results / "results.sqlite", create=False) as store:
        matches = store.matches()
    for m in matches:
        for seat, bot in enumerate(m.bots):
            path = m.stderr_logs[seat]
            if bot == "chatty":
                assert path is not None and Path(path).stat().st_size > 0
            elif bot == "minimal":
                assert path is not None and not Path(path).exists()     # wrote nothing: no file
            else:
                assert path is None          # the built-in is no process
    assert all("chatty" in p.name for p in (results / "logs").glob("*.stderr.log"))


def test_a_replay_page_carries_its_data_compressed_and_whole():
    """A ten-hand match's data is mostly request lines (1-2 MB as JSON): the page
    embeds it gzipped, several times smaller, and gives back exactly the data."""
    from arena.match import MatchSpec, SeatSpec, run_match
    result = run_match(MatchSpec("m", tuple(SeatSpec.builtin(p) for p in ("greedy", "random", "greedy")),
                                 {}, seed=5))
    data = build_replay(result.record, ["a", "b", "c"], title="m")
    page = replay_page(data)
    assert replay_data(page) == json.loads(json.dumps(data))
    assert len(page.encode()) * 5 < len(json.dumps(data, separators=(",", ":")).encode())
    with pytest.raises(ValueError, match="no replay data"):
        replay_data("<html></html>")


def test_the_report_of_an_unfinished_tournament_says_so(results, report_dir, tmp_path):
    """A run stopped part-way: its report, like its leaderboard, read like the
    final one ("5 matches stored"), not saying a sixth was still to play."""
    import shutil
    import sqlite3

    assert "scheduled" not in (report_dir / "index.html").read_text()
    cut = tmp_path / "cut"
    shutil.copytree(results, cut, ignore=shutil.ignore_patterns("report"))
    with sqlite3.connect(cut / "results.sqlite") as db:
        db.execute("PRAGMA foreign_keys = ON")
        db.execute("DELETE FROM matches WHERE schedule_index = 5")
    res = cli("report", str(cut), "--no-replays")
    assert res.exit_code == 0, res.output
    page = (cut / "report" / "index.html").read_text()
    assert "5 of the 6 scheduled matches stored: the tournament is not finished" in page


def test_the_final_table_and_the_charts_last_point_are_the_leaderboards(results, monkeypatch):
    """The history fits start from each other and its last point is the
    leaderboard's own fit: the report's table is still exactly what `arena
    leaderboard` ranks, and the chart ends on its numbers (HISTORY_POINTS 2:
    one warm-started point before the last)."""
    from dataclasses import asdict

    from arena.report import data as report_data
    from arena.tournament.standings.leaderboard import leaderboard

    monkeypatch.setattr(report_data, "HISTORY_POINTS", 3)
    store = ResultStore(results / "results.sqlite", readonly=True)
    try:
        got = report_data.collect(store)
        table = [asdict(r) for r in leaderboard(store)]
    finally:
        store.close()
    assert got.leaderboard == table
    assert sorted({p["matches"] for p in got.history}) == [2, 4, 6]
    last = {p["bot"]: p for p in got.history if p["matches"] == 6}
    for row in table:
        p = last[row["bot"]]
        assert p["rating"] == round(row["rating"], 3)
        assert p["high"] - p["low"] == pytest.approx(4 * row["sigma"], abs=0.002)


def test_one_bots_page_replays_only_its_own_matches(results, tmp_path):
    """--bot: the other bots' sections (kept for the grade book) make no
    replays for requests they do not show, and their records are not read."""
    from arena.report import data as report_data

    store = ResultStore(results / "results.sqlite", readonly=True)
    try:
        cache: dict = {}
        full = report_data.collect(store, history=False)
        one = report_data.collect(store, cache=cache, history=False, shown="minimal")
        mine = {m.match_id for m in store.matches() if "minimal" in m.bots}
    finally:
        store.close()
    assert set(cache) <= mine
    assert list(report_data.gradebook_rows(one)) == list(report_data.gradebook_rows(full))
    shown = next(s for s in one.bots if s.bot == "minimal")
    assert shown == next(s for s in full.bots if s.bot == "minimal")


def test_replays_written_by_worker_processes_are_the_same_files(results, tmp_path, monkeypatch):
    """The replays of a report are written by worker processes: the same
    files, in the same order, as written one by one; a record that cannot
    be replayed is a warning in its place, from either."""
    import shutil
    import sqlite3

    from arena.report import writers

    pools = _counted_pools(monkeypatch)
    copy = tmp_path / "results"
    shutil.copytree(results, copy, ignore=shutil.ignore_patterns("report"))
    with sqlite3.connect(copy / "results.sqlite") as db:
        db.execute("UPDATE matches SET record = ? WHERE schedule_index = 2", (b"not zlib",))
    store = ResultStore(copy / "results.sqlite", readonly=True)
    try:
        ids = [m.match_id for m in store.matches()]
        written: dict[int, list[Path]] = {}
        warned: dict[int, list[str]] = {}
        for jobs in (1, 2):
            warned[jobs] = []
            written[jobs] = writers.write_replays(store, [(mid, tmp_path / str(jobs) / f"{mid}.html") for mid in ids],
                                                  back="../index.html", workers=jobs,
                                                  progress=warned[jobs].append)
    finally:
        store.close()
    assert pools == [2]
    assert [p.name for p in written[2]] == [p.name for p in written[1]] == [f"{mid}.html" for mid in ids
                                                                            if mid != ids[2]]
    assert len(warned[2]) == 1 and warned[2] == warned[1] and ids[2] in warned[1][0]
    for one, two in zip(written[1], written[2]):
        assert one.read_bytes() == two.read_bytes(), one.name


# What the viewer reads from the replay pages of fixed matches, as sha256 of
# its canonical JSON (decision times, which vary from run to run, left out).
# Written by the straightforward replay (a snapshot of the whole table after
# every action, stdlib json, gzip level 6) before it was made cheaper: what
# makes a page cheaper must not change what the viewer reads.  A deliberate
# change of the viewer's data (or of the engine's events or requests) gives
# new values: print them from this test's failure and say why in the commit.
PLAYED_PAGES = {
    (("greedy", "random", "greedy"), 5): "91189ab47f0cd14ceb767e96bff55eceaacf8ef0e458074f5e9a2f5c2d7f5e6d",
    (("greedy",) * 4, 9): "5dfa36f42deaed9619231cd61a595afe0243ef3982ed0ef7b4b08bf3de9ede0d",
    (("random", "passive"), 3): "ea99b1f7aa4758030f5d3df966b06c274132978c60b1609760f72a28dba7204c",
}
# Issue 32: a meld says what its cards stand for between the events of one
# play too (a lay-off before the discard had stands_for null): new values.
# The fixture's second deal (d1) is seated by the second block of the
# balanced seating (the other cycle of 3), so its pages differ from rotate's.
REPORTED_PAGES = {      # the report fixture's tournament: an illegal play, request ids (stderr and times left out)
    "t000-r0-d0": "0eb9bd45ab3876389a0c97b7a7acac46e2c4627c5502583f9c8e4f504368408e",
    "t000-r0-d1": "2c1d69523770f26fc870ea1fe0fe9e01a5294af1041ac67a76c0cd587dd7eff0",
    "t000-r1-d0": "1391454e96f662520869f992ebde15a04446a2b95c07599df4131665c8351a49",
    "t000-r1-d1": "c83ed3dc4bdec05dabe3b6f53424fbc4c141321c1b2365f009d79a4e05ae8fe1",
    "t000-r2-d0": "95512d2ad2322648810d68f969322b7d6985d593665e8f85ff9c0a25876bca8f",
    "t000-r2-d1": "0d447fb40f3ebdd5884f49a4468da9a29f102b7ed748abe52e0fb89f3680d26b",
}


def _viewer_digest(page: str, *, timing: bool = False) -> str:
    """``timing``: also leave out what depends on the machine's speed when
    the bots ran (where a bot's stderr splits between two decisions, its CPU
    between turns): not the replay's to decide."""
    import hashlib

    data = replay_data(page)
    for d in data["decisions"]:
        d["ms"] = None
        if timing:
            d["stderr"] = None
    if timing:
        data["off_turn"] = None
        for f in data["faults"]:
            f["stderr"] = None
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def test_the_viewer_reads_the_same_data_from_the_pages_of_fixed_matches(report_dir):
    from arena.match import MatchSpec, SeatSpec, run_match

    got = {}
    for kinds, seed in PLAYED_PAGES:
        record = run_match(MatchSpec("m", tuple(SeatSpec.builtin(k) for k in kinds), {}, seed=seed)).record
        got[kinds, seed] = _viewer_digest(replay_page(build_replay(record, list(kinds), title=f"m{seed}")))
    assert got == PLAYED_PAGES
    reported = {p.stem: _viewer_digest(p.read_text(), timing=True) for p in (report_dir / "replays").glob("*.html")}
    assert reported == REPORTED_PAGES


def test_show_html_into_a_place_it_cannot_write_says_how_to_write_it_elsewhere(results, tmp_path, monkeypatch):
    """As `arena report` does: one line, naming the file, and the --out that
    chooses another place (a command to copy when none was given)."""
    with ResultStore(results / "results.sqlite", create=False) as store:
        mid = store.matches()[0].match_id
    monkeypatch.chdir(tmp_path)
    (tmp_path / f"{mid}.html").mkdir()          # the default file is a directory: it cannot be written
    res = cli("show", str(results), mid, "--html")
    assert res.exit_code == 1 and len(res.output.strip().splitlines()) == 1, res.output
    assert res.output.strip() == (f"Error: {mid}.html: cannot write (Is a directory); write it elsewhere with "
                                  f"--out FILE: arena show {results} {mid} --html --out FILE")
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    res = cli("show", str(results), mid, "--html", "--out", str(blocked / "one.html"))
    assert res.exit_code == 1 and len(res.output.strip().splitlines()) == 1, res.output
    assert res.output.startswith(f"Error: {blocked / 'one.html'}: cannot write (")
    assert res.output.strip().endswith("); write it elsewhere with another --out FILE")
    res = cli("show", str(results), mid, "--html", "--out", str(tmp_path / "one.html"))
    assert res.exit_code == 0 and (tmp_path / "one.html").is_file()


@pytest.mark.long(20)
def test_report_jobs_on_the_command_line_writes_the_same_pages_with_worker_processes(tmp_path, monkeypatch):
    """`arena report --jobs N` end to end: --jobs 2 writes its replays in two
    worker processes, --jobs 1 in none, and every file is the same.  Six
    built-in bots (60 short matches): more matches than the sections replay
    for their rows, which the report writes itself."""

    spec = tmp_path / "t.yaml"
    spec.write_text("name: jobs\nbots:\n" + "".join(
        f"  - name: b{i}\n    builtin: {('greedy', 'random', 'passive')[i % 3]}\n" for i in range(6))
        + "players: 3\nrules:\n  contracts: [2S3]\ndeals: 1\nseed: 5\n")
    results = tmp_path / "results"
    res = cli("run", str(spec), "--out", str(results), "--jobs", "1", "-q")
    assert res.exit_code == 0, res.output
    pools = _counted_pools(monkeypatch)
    files: dict[int, dict[str, bytes]] = {}
    for jobs in (1, 2):
        out = tmp_path / f"jobs{jobs}"
        res = cli("report", str(results), "--out", str(out), "--jobs", str(jobs))
        assert res.exit_code == 0, res.output
        files[jobs] = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}
        assert pools == ([] if jobs == 1 else [2])
    assert len([f for f in files[1] if f.startswith("replays/")]) == 60
    assert files[2] == files[1]


def test_a_report_reads_each_record_once_and_its_sections_are_those_of_a_report_without_replays(
        results, tmp_path, monkeypatch):
    """The replays are written first, and what the sections read of each
    match comes back with its page: no record is decoded, no match replayed,
    a second time; and the sections are the same as when they replay the
    matches themselves (--no-replays)."""
    from collections import Counter

    from arena.report import data as report_data
    from arena.report.build import write_report

    reads: Counter[str] = Counter()
    replays: Counter[str] = Counter()
    record, match, build = ResultStore.record, ResultStore.match, report_data.build_replay

    def counted_record(self, match_id):
        reads[match_id] += 1
        return record(self, match_id)

    def counted_match(self, match_id):
        reads[match_id] += 1
        return match(self, match_id)

    def counted_build(record, names, *, title, **kw):
        replays[title] += 1
        return build(record, names, title=title, **kw)

    monkeypatch.setattr(ResultStore, "record", counted_record)
    monkeypatch.setattr(ResultStore, "match", counted_match)
    monkeypatch.setattr(report_data, "build_replay", counted_build)     # where the report calls it
    written = write_report(str(results), tmp_path / "report", jobs=1)
    with ResultStore(results / "results.sqlite", create=False) as store:
        ids = [m.match_id for m in store.matches()]
        assert sorted(p.stem for p in written if p.parent.name == "replays") == sorted(ids)
        assert reads == replays == Counter(ids)
        digests: dict = {}
        from arena.report.writers import write_replays
        write_replays(store, [(mid, tmp_path / "again" / f"{mid}.html") for mid in ids], back="../index.html",
                      workers=1, progress=None, digests=digests)
        assert report_data.collect(store, digests=digests) == report_data.collect(store)


def _counted_pools(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The worker count of every replay-writer pool started from now on
    (each pool is started however few matches it gets)."""
    from arena.report import writers

    pools: list[int] = []

    class Counted(writers.ProcessPoolExecutor):
        def __init__(self, workers: int, **kw: Any) -> None:
            pools.append(workers)
            super().__init__(workers, **kw)

    monkeypatch.setattr(writers, "ProcessPoolExecutor", Counted)
    monkeypatch.setattr(writers, "MIN_PER_WORKER", 1)
    return pools


def test_the_neighbour_table_follows_the_seat_effect(results, report_dir):
    page = (report_dir / "index.html").read_text()
    assert page.index('id="seats"') < page.index('id="neighbours"') < page.index('id="ratings"')
    assert '<a href="#neighbours">' in page
    table = page[page.index('id="neighbour-table"'):page.index('id="neighbour-summary"')]
    cells = re.findall(r'<tr data-bot="([^"]+)">|<td data-before="([^"]+)" data-after="(\d+)" data-shared="(\d+)"'
                       r'[^>]*>\s*([-+]\d\.\d\d|–)<br>', table)
    with ResultStore(results / "results.sqlite", create=False) as store:
        matches = store.matches()
    seen, row = [], None
    for bot, before, after, shared, shown in cells:
        if bot:
            row = bot
            continue
        mine = [m for m in matches if {row, before} <= set(m.bots)]
        directly = [(m.bots.index(before) + 1) % 3 == m.bots.index(row) for m in mine]
        place = [m.places[m.bots.index(row)] for m in mine]
        there = [p for p, d in zip(place, directly) if d]
        elsewhere = [p for p, d in zip(place, directly) if not d]
        assert (int(after), int(shared)) == (3, 6) == (len(there), len(mine))     # balanced: half of them
        assert float(shown) == pytest.approx(sum(there) / 3 - sum(elsewhere) / 3, abs=0.005)
        seen.append((row, before))
    assert len(seen) == 6 and len(set(seen)) == 6
    summary = page[page.index('id="neighbour-summary"'):]
    assert "Neighbour effect: " in summary[:400] and "Balance: exact" in summary[:400]


def test_the_ratings_chart_counts_matches_in_whole_numbers_and_its_legend_is_opaque():
    """The x axis read "1.0 ... 12.0" matches; the legend's swatches took the
    bands' opacity (0.15).  Both charts are as wide as their box."""
    from arena.report.charts import ratings_chart, times_chart

    points = [{"matches": n, "bot": b, "rating": 20.0 + n, "low": 10.0, "high": 30.0} for n in (1, 2, 3) for b in "ab"]
    spec = ratings_chart(points)
    for layer in spec["layer"]:
        x, colour = layer["encoding"]["x"], layer["encoding"]["color"]
        assert x["axis"]["format"] == "d" and x["axis"]["tickMinStep"] == 1
        assert colour["legend"]["symbolOpacity"] == 1
    times = times_chart([{"bot": "a", "ms": 1.0}])
    for chart in (spec, times):
        assert chart["width"] == "container" and chart["autosize"] == {"type": "fit-x", "contains": "padding"}


def test_head_to_head_says_what_ns_means_on_the_cell_and_under_the_table(results, report_dir):
    """'1.00 (15/15) ns' puzzled a teacher: a cell's ns says it is not
    significant by a sign test with one vote per duplicate deal, and how many
    deals the two shared; the note under the table says the same."""
    page = (report_dir / "index.html").read_text()
    cells = re.findall(r'<td data-opponent="[^"]*"[^>]*title="([^"]*)">.*?</td>', page, re.S)
    assert len(cells) == 6
    assert all("sign test with one vote per duplicate deal (2 duplicate deals shared): p = " in t for t in cells)
    marks = re.findall(r'<abbr title="([^"]*)">ns</abbr>', page)
    assert len(marks) == 6 and all(m == "not significant at 5 %: a sign test with one vote per duplicate deal, "
                                        "and these two shared 2 duplicate deals" for m in marks)
    note = re.search(r'<p class="note" id="h2h-note">(.*?)</p>', page, re.S)
    assert note is not None and "ns: not significant at 5 % by this table's own test, a sign test with one " \
                                "vote per duplicate deal" in note.group(1)
