"""The report's section per bot says why a bot crashed or timed out, not only
how often: one entry per reason, with its count, where it first happened, the
request it was sent and what it wrote on stderr (a start-up crash's traceback
included), so that a teacher can tell a student what went wrong.  A real
tournament through the CLI: a bot with a syntax error, one that exits at its
third request, one that sleeps past the time limit, and a built-in."""

from __future__ import annotations

import html
import json
import re
import sys
from pathlib import Path

import pytest
from report_fixtures import GAMEBOTS, cli

from arena.report.data import collect
from arena.tournament.results.database import ResultStore


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("failures")
    (tmp / "broken.py").write_text("print('hello'\n")        # a SyntaxError: it never starts
    py = json.dumps(sys.executable)
    (tmp / "t.yaml").write_text(f"""
name: failures
bots:
  - name: broken
    command: [{py}, broken.py]
  - name: quitter
    command: [{py}, {json.dumps(str(GAMEBOTS / "exit_midway.py"))}, "3"]
  - name: sleepy
    command: [{py}, {json.dumps(str(GAMEBOTS / "silent_after.py"))}, "1"]
  - name: greedy-builtin
    builtin: greedy
players: 3
rules:
  contracts: [2S3]
time: {{startup: 20, per_decision: 0.5}}
faults: {{max_strikes: 1}}
seed: 3
""")
    out = tmp / "results"
    res = cli("run", str(tmp / "t.yaml"), "--out", str(out), "--jobs", "1")
    assert res.exit_code == 0, res.output
    return out


def section(page: str, bot: str) -> str:
    return page.split(f'id="bot-{bot}"')[1].split('<section class="botsection"')[0]


def failures(page: str, bot: str) -> str:
    return section(page, bot).split("<h3>Crashes and timeouts</h3>")[1]


@pytest.fixture(scope="module")
def page(results) -> str:
    res = cli("report", str(results), "--no-replays")
    assert res.exit_code == 0, res.output
    return (results / "report" / "index.html").read_text()


def test_a_start_up_crash_is_shown_once_with_its_count_and_the_traceback(results, page):
    with ResultStore(results / "results.sqlite", create=False) as store:
        played = sum(1 for m in store.matches() if "broken" in m.bots)
    text = html.unescape(failures(page, "broken"))
    assert text.count('<div class="fault crash">') == 1, text
    assert f"crash</span> {played} times in {played} matches, first in " in text
    assert "at start-up: exited with code 1; stderr: SyntaxError" in text
    assert "stderr as it started:" in text and "print('hello'" in text     # the traceback's source line


def test_a_crash_at_a_decision_shows_the_request_and_what_the_bot_wrote(page):
    text = html.unescape(failures(page, "quitter"))
    assert text.count('<div class="fault crash">') == 1, text
    assert re.search(r"crash</span> (\d+) times in \1 matches, first in .*hand 1, request id 3 \(", text), text
    request = json.loads(re.search(r'<pre class="request">(.*?)</pre>', text, re.S).group(1))
    assert request["type"] == "request" and request["id"] == 3
    assert "stderr during this decision:" in text and "exit_midway: giving up now" in text


def test_timeouts_are_shown_with_the_request_left_unanswered(results, page):
    text = html.unescape(failures(page, "sleepy"))
    assert '<div class="fault timeout">' in text and "no reply within 0.500 s" in text
    request = json.loads(re.search(r'<pre class="request">(.*?)</pre>', text, re.S).group(1))
    assert request["id"] == 2            # it answered its first request only


def test_a_bot_without_crashes_or_timeouts_says_none(page):
    assert '<p class="note">none</p>' in failures(page, "greedy-builtin")


def test_the_report_data_of_a_start_up_crash_carries_what_the_bot_wrote(results):
    with ResultStore(results / "results.sqlite", create=False) as store:
        data = collect(store)
    (entry,) = next(s for s in data.bots if s.bot == "broken").failures
    assert entry["decision"] is None and "SyntaxError" in entry["stderr"]


def test_one_bots_page_writes_the_replays_of_its_own_matches_only(results, tmp_path):
    """``--bot`` is one student's page: replaying the whole tournament for it
    took a class of 12 bots seven minutes."""
    with ResultStore(results / "results.sqlite", create=False) as store:
        everyone = {m.match_id for m in store.matches()}
        mine = {m.match_id for m in store.matches() if "quitter" in m.bots}
    assert mine < everyone
    out = tmp_path / "one"
    res = cli("report", str(results), "--bot", "quitter", "--out", str(out))
    assert res.exit_code == 0, res.output
    assert {p.stem for p in (out / "replays").glob("*.html")} == mine
    page = (out / "bot-quitter.html").read_text()
    linked = set(re.findall(r'href="replays/([^"#]+)\.html', page))
    assert linked and linked <= mine
    assert len((out / "gradebook.csv").read_text().splitlines()) == 5      # every bot, as before


def test_the_grade_book_says_what_went_wrong_first(results, page):
    """One line per student to paste into their feedback: the first fault,
    where it happened and why."""
    import csv
    rows = {r["bot"]: r for r in csv.DictReader((results / "report" / "gradebook.csv").open())}
    assert rows["broken"]["first_fault"].startswith("crash in ")
    assert ", at start-up: exited with code 1; stderr: SyntaxError" in rows["broken"]["first_fault"]
    assert re.fullmatch(r"crash in \S+, hand 1, request id 3 \(\w+\): exited with code 3.*",
                        rows["quitter"]["first_fault"]), rows["quitter"]["first_fault"]
    assert "timeout in " in rows["sleepy"]["first_fault"] and "request id 2 (" in rows["sleepy"]["first_fault"]
    assert rows["greedy-builtin"]["first_fault"] == ""
