"""The report and the replay viewer in a real headless Chromium (the system's
``chromium``, driven by Playwright): what the pages show is checked against
the stored record and the engine, and no page may log a console error or
warning (Vega-Lite logs its complaints about a chart's spec as warnings).

In CI (CI set) a missing Chromium or Playwright fails these tests; elsewhere
they are skipped with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from report_fixtures import cli, run_tournament

from arena.report.html import replay_page
from arena.report.replay import _game, build_replay
from arena.shanghai.actions import action_from_json
from arena.shanghai.cards import parse_card, sort_key
from arena.shanghai.melds import make_meld
from arena.tournament.results.database import ResultStore

BROWSERS = ("chromium", "chromium-browser")


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI must run the browser tests (.ci/run installs chromium)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed (pip install -e '.[test]')")
    path = next((p for p in map(shutil.which, BROWSERS) if p), None)
    if path is None:
        _unavailable("no system Chromium (apt-get install chromium)")
    with sync_playwright() as p:
        # Playwright's own browser download cannot work here: the system's binary.
        b = p.chromium.launch(executable_path=path, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    out = run_tournament(tmp_path_factory.mktemp("browser"))
    res = cli("report", str(out))
    assert res.exit_code == 0, res.output
    return out


class Page:
    """A page that records console errors and warnings, and uncaught exceptions."""

    def __init__(self, browser: Any, width: int = 1300) -> None:
        self.page = browser.new_page(viewport={"width": width, "height": 900})
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(f"{m.type}: {m.text}")
                     if m.type in ("error", "warning") else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def __enter__(self) -> Any:
        return self

    def open_replay(self, url: str) -> None:
        """Open a replay page and wait until it has unpacked its data and drawn a step."""
        self.page.goto("about:blank")
        self.page.goto(url)
        self.page.wait_for_selector("body[data-ready]", state="attached")

    def __exit__(self, *exc: object) -> None:
        self.page.close()


def _seat_cards(page: Any, seat: int) -> list[str]:
    return page.eval_on_selector_all(f'#seats .seat[data-seat="{seat}"] .card', "els => els.map(e => e.dataset.card)")


def test_report_renders_its_charts_and_tables_without_errors(browser, results):
    with ResultStore(results / "results.sqlite", create=False) as store:
        bots = store.bots()
        first = store.matches()[0].match_id
    with Page(browser) as p:
        page = p.page
        page.goto((results / "report" / "index.html").as_uri())
        assert page.evaluate("window.chartsDrawn.then(() => true)")
        for chart in ("#chart-ratings", "#chart-times"):
            assert page.locator(f"{chart} svg").count() == 1
            assert page.locator(f"{chart} svg .mark-symbol, {chart} svg .mark-line, {chart} svg .mark-rect, "
                                f"{chart} svg path").count() > 0
        shown = page.eval_on_selector_all("#leaderboard-table tbody tr", "rows => rows.map(r => r.dataset.bot)")
        assert sorted(shown) == sorted(bots)
        # the head-to-head cells are coloured by share
        colours = page.eval_on_selector_all("#h2h td[data-share]", "tds => tds.map(t => getComputedStyle(t).backgroundColor)")
        assert len(colours) == len(bots) * (len(bots) - 1) and len(set(colours)) > 1
        page.click(f'#match-table a.replay[href="replays/{first}.html"]')
        page.wait_for_selector("#seats .seat")
        assert page.url.endswith(f"replays/{first}.html")
        assert p.errors == []


def _expected_after_each_action(record: dict[str, Any]) -> list[tuple[int, list[list[str]]]]:
    """(step index showing the table after action k, every seat's cards) from the engine."""
    game = _game(record)
    out = []
    for entry in record["actions"]:
        game.apply(action_from_json(entry["action"]), seat=entry["seat"])
        out.append((len(game.log) - 1, [[c.text for c in sorted(h, key=sort_key)] for h in game.hands]))
    return out


def test_replay_steps_jumps_and_shows_what_the_record_holds(browser, results):
    with ResultStore(results / "results.sqlite", create=False) as store:
        m = store.match(store.matches()[0].match_id)
    record = m.record
    assert record is not None
    url = (results / "report" / "replays" / f"{m.match_id}.html").as_uri()
    events = record["events"]
    expected = _expected_after_each_action(record)
    with Page(browser) as p:
        page = p.page
        p.open_replay(url)
        # the arrow keys step
        for i in range(1, 6):
            page.keyboard.press("ArrowRight")
            assert page.evaluate("document.body.dataset.step") == str(i)
        page.keyboard.press("ArrowLeft")
        assert page.evaluate("document.body.dataset.step") == "4"
        # the hand selector jumps to the second deal
        deal2 = next(i for i, e in enumerate(events) if e["type"] == "deal" and e["hand"] == 2)
        page.select_option("#hand", "2")
        assert page.evaluate("document.body.dataset.step") == str(deal2)
        assert "Hand 2" in page.inner_text("#event")
        # cards in every hand, after a sample of actions, as the engine has them
        for step, hands in expected[:: max(1, len(expected) // 12)]:
            p.open_replay(f"{url}#step={step}")
            for seat, cards in enumerate(hands):
                assert _seat_cards(page, seat) == cards, (step, seat)
        # a meld on the table after the first go-down
        down = next(i for i, e in enumerate(events) if e["type"] == "go_down")
        p.open_replay(f"{url}#step={down}")
        for meld in events[down]["melds"]:
            shown = page.eval_on_selector_all(f'#melds .meld[data-meld-id="{meld["id"]}"] .card',
                                              "els => els.map(e => e.dataset.card)")
            assert shown == meld["cards"]
        # the scores of hand 1 at its end, as stored
        end = next(i for i, e in enumerate(events) if e["type"] == "hand_end")
        p.open_replay(f"{url}#step={end}")
        row = page.eval_on_selector_all('#scores tr[data-hand="1"] td[data-seat]', "tds => tds.map(t => t.textContent)")
        assert [int(x) for x in row] == m.hand_scores[0] == events[end]["scores"]
        assert p.errors == []


def test_a_seats_view_shows_only_its_cards_and_the_request_as_sent(browser, results):
    with ResultStore(results / "results.sqlite", create=False) as store:
        m = store.match(store.matches()[0].match_id)
    record = m.record
    seat = m.bots.index("chatty")
    url = (results / "report" / "replays" / f"{m.match_id}.html").as_uri()
    # the step of chatty's third decision: its request is what the panel shows
    k = record["trace"][seat]["decisions"][2][0]
    game = _game(record)
    for entry in record["actions"][:k]:
        game.apply(action_from_json(entry["action"]), seat=entry["seat"])
    before = len(game.log)
    own = [c.text for c in sorted(game.hands[seat], key=sort_key)]
    game.apply(action_from_json(record["actions"][k]["action"]), seat=seat)
    step = before          # the first event it caused (or, if none, the next one)
    with Page(browser) as p:
        page = p.page
        p.open_replay(f"{url}#step={step}")
        page.select_option("#view", str(seat))
        others = [s for s in range(len(m.bots)) if s != seat]
        for s in others:
            assert set(_seat_cards(page, s)) <= {"?"}          # face down
        request = json.loads(page.inner_text("#request"))
        assert request["type"] == "request" and request["id"] == record["trace"][seat]["decisions"][2][1]
        assert request["view"]["cards"] == own and request["view"]["seat"] == seat
        # back to the full table: every seat's cards face up again
        page.select_option("#view", "")
        assert all("?" not in _seat_cards(page, s) for s in others)
        assert page.locator("#sent").is_hidden()
        assert p.errors == []


def test_a_fault_shows_where_it_happened_with_the_reply_and_stderr(browser, results):
    with ResultStore(results / "results.sqlite", create=False) as store:
        fault = store.faults()[0]
    url = (results / "report" / "replays" / f"{fault['match_id']}.html").as_uri()
    with Page(browser) as p:
        page = p.page
        p.open_replay(url)
        page.click("#faultlist a")
        box = page.locator("#faults .fault")
        assert box.count() == 1
        text = box.inner_text()
        assert "illegal" in text.lower() and f"request id {fault['request_id']} (" in text
        assert "go_down" in text                                  # the reply
        assert "thinking about request" in text                   # the stderr of that decision
        assert p.errors == []


BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
# As a hand-edited results database can call a bot: bidi controls, an ESC,
# a zero-width space (two names differing there would look the same).
NAME = "mini\u202emal\u2067\x1b\u200b"
HIDDEN = BIDI + "\x1b\u200b"


@pytest.fixture(scope="module")
def bidi_results(tmp_path_factory) -> Path:
    out = run_tournament(tmp_path_factory.mktemp("bidi"))
    with sqlite3.connect(out / "results.sqlite") as db:
        db.execute("UPDATE bots SET name = ? WHERE name = 'minimal'", (NAME,))
        db.execute("UPDATE seats SET bot = ? WHERE bot = 'minimal'", (NAME,))
    res = cli("report", str(out))
    assert res.exit_code == 0, res.output
    return out


def _shown_text(page: Any) -> str:
    """Everything the page shows as text, its select options and tooltips included."""
    return page.evaluate("""() => [document.body.innerText,
        ...[...document.querySelectorAll("option")].map(o => o.textContent),
        ...[...document.querySelectorAll("[title]")].map(e => e.title)].join("\\n")""")


def test_bidi_controls_in_a_name_are_shown_not_obeyed(browser, bidi_results):
    shown_name = "mini\\u202emal\\u2067\\x1b\\u200b"
    with Page(browser) as p:
        page = p.page
        page.goto((bidi_results / "report" / "index.html").as_uri())
        assert page.evaluate("window.chartsDrawn.then(() => true)")
        text = _shown_text(page)
        assert shown_name in text and not [c for c in HIDDEN if c in text]
        assert page.evaluate("getComputedStyle(document.querySelector('nav a')).unicodeBidi") == "isolate"
        replay = next(iter(sorted((bidi_results / "report" / "replays").glob("*.html"))))
        p.open_replay(replay.as_uri())
        for key in ("Home", "ArrowRight", "ArrowRight", "End"):      # names in the events' text too
            page.keyboard.press(key)
            text = _shown_text(page)
            assert shown_name in text and not [c for c in HIDDEN if c in text], key
        assert page.evaluate("getComputedStyle(document.querySelector('.seat .name')).unicodeBidi") == "isolate"
        assert p.errors == []


# -- issue 32: nothing surprises a student or a teacher ---------------------------

PHONE = 390         # px: a phone held upright


@pytest.fixture(scope="module")
def played() -> dict[str, Any]:
    """The record of four greedy players (seed 1): lay-offs of naturals and of
    wild cards, on sets and on runs, many of them before the play's discard."""
    from arena.match import MatchSpec, SeatSpec, run_match
    return run_match(MatchSpec("m", tuple(SeatSpec.builtin("greedy") for _ in range(4)), {}, seed=1)).record


def _replay_file(tmp_path: Path, record: dict[str, Any], name: str = "m") -> str:
    path = tmp_path / f"{name}.html"
    path.write_text(replay_page(build_replay(record, ["ann", "bob", "cy", "dee"], title=name)))
    return path.as_uri()


def _label(cards: list[str], kind: str) -> str:
    """A meld's label as the engine reads its cards."""
    shown = make_meld([parse_card(c) for c in cards], kind).represents()
    return f"set of {shown[0]}s" if kind == "set" else f"run {shown[0]}\u2013{shown[-1]}"


def _lay_offs_before_the_discard(record: dict[str, Any]) -> dict[tuple[str, bool], tuple[int, int, list[str]]]:
    """(meld kind, a wild card laid off) -> (step, meld id, the meld's cards) of
    the first such lay-off that is not the last event of its play."""
    steps = build_replay(record, ["a", "b", "c", "d"], title="m")["steps"]
    kinds: dict[int, str] = {}
    out: dict[tuple[str, bool], tuple[int, int, list[str]]] = {}
    for i, st in enumerate(steps):
        e = st["e"]
        for m in e.get("melds", []) if e["type"] == "go_down" else []:
            kinds[m["id"]] = m["kind"]
        if e["type"] == "lay_off" and i + 1 < len(steps) and steps[i + 1]["a"] == st["a"]:
            wild = e["card"] == "JK" or e["card"].startswith("2")
            out.setdefault((kinds[e["meld"]], wild), (i, e["meld"], e["result"]))
    return out


def test_a_meld_keeps_its_label_after_lay_offs_wild_cards_included(browser, played, tmp_path):
    """A set laid off on read "set of ?s" (and a run lost its range) until the
    play's discard; nearly every match has one."""
    url = _replay_file(tmp_path, played)
    found = _lay_offs_before_the_discard(played)
    assert set(found) == {("set", False), ("set", True), ("run", False), ("run", True)}
    with Page(browser) as p:
        for (kind, _), (step, meld, cards) in sorted(found.items()):
            p.open_replay(f"{url}#step={step}")
            label = p.page.inner_text(f'#melds .meld[data-meld-id="{meld}"] .label')
            assert label.startswith(f"[{meld}] {_label(cards, kind)} \u00b7 "), (step, label)
            assert "?" not in p.page.inner_text("#melds"), step
        assert p.errors == []


def test_the_scores_say_none_yet_until_a_hand_ends(browser, played, tmp_path):
    """'Scores (hand 0)' at the start of a match: no hand 0 exists."""
    url = _replay_file(tmp_path, played)
    end = next(i for i, e in enumerate(played["events"]) if e["type"] == "hand_end")
    with Page(browser) as p:
        page = p.page
        p.open_replay(url)
        assert page.inner_text("#scoreshead") == "Scores (none yet: no hand has ended)"
        assert page.locator("#scores").is_hidden()
        p.open_replay(f"{url}#step={end - 1}")
        assert "none yet" in page.inner_text("#scoreshead")
        p.open_replay(f"{url}#step={end}")
        hands = len(played["events"][0]["rules"]["contracts"])
        assert page.inner_text("#scoreshead") == f"Scores (after hand 1 of {hands})"
        assert page.locator('#scores tr[data-hand="1"]').is_visible()
        assert p.errors == []


def test_a_process_caught_before_this_match_is_not_said_to_use_0_s_of_cpu(browser, played, tmp_path):
    """A kept process caught in an earlier match is stopped between its turns
    throughout the next: its record holds 0.0 for that match (arena/match/runner.py),
    which the viewer showed as 'used 0.000 s of CPU between its turns'."""
    record = {**played, "trace": [{"decisions": [], "off_turn_cpu": 0.0}, {"decisions": [], "off_turn_cpu": 0.25},
                                  {"decisions": []}, {"decisions": []}]}
    with Page(browser) as p:
        p.open_replay(_replay_file(tmp_path, record))
        meta = p.page.eval_on_selector_all("#seats .seat .meta", "els => els.map(e => e.textContent)")
        assert "0.000" not in meta[0] and "stopped between its turns" in meta[0] and "before this match" in meta[0]
        assert "used 0.250 s of CPU between its turns (measured)" in meta[1]
        assert not any("between its turns" in m for m in meta[2:])
        assert p.errors == []


def _no_sideways_scroll(page: Any) -> None:
    width, inner = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= inner, (width, inner)


def test_the_viewer_is_one_column_on_a_phone_with_no_sideways_scroll(browser, results):
    """At 390 px the table, then the decisions, the request and the scores,
    one under the other; the request's JSON lines as wide as the screen."""
    with ResultStore(results / "results.sqlite", create=False) as store:
        m = store.match(store.matches()[0].match_id)
    url = (results / "report" / "replays" / f"{m.match_id}.html").as_uri()
    with Page(browser, PHONE) as p:
        page = p.page
        p.open_replay(f"{url}#step=40")
        _no_sideways_scroll(page)
        table, side = (page.locator(sel).bounding_box() for sel in ("#tablearea", "#side"))
        assert side["y"] >= table["y"] + table["height"] and side["width"] > PHONE - 40
        page.select_option("#view", str(m.bots.index("chatty")))
        _no_sideways_scroll(page)
        assert page.locator("#request").bounding_box()["width"] > PHONE - 80
        for key in ("End", "Home"):
            page.keyboard.press(key)
            _no_sideways_scroll(page)
        assert p.errors == []


def test_the_report_and_its_charts_fit_a_phone(browser, results):
    """At 390 px: no sideways scroll (wide tables scroll in their own box), and
    each chart as wide as its box, not wider (the decision times were cut off)."""
    with Page(browser, PHONE) as p:
        page = p.page
        page.goto((results / "report" / "index.html").as_uri())
        assert page.evaluate("window.chartsDrawn.then(() => true)")
        _no_sideways_scroll(page)
        for chart in ("#chart-ratings", "#chart-times"):
            box, svg = page.evaluate(f"""[document.querySelector("{chart}").clientWidth,
                document.querySelector("{chart} svg").getBoundingClientRect().width]""")
            assert 300 < svg <= box <= PHONE, (chart, svg, box)
        assert p.errors == []


def test_the_ratings_legend_is_in_the_lines_colours(browser, results):
    """The legend's swatches were in the bands' pale colour (opacity 0.15)."""
    with Page(browser) as p:
        page = p.page
        page.goto((results / "report" / "index.html").as_uri())
        assert page.evaluate("window.chartsDrawn.then(() => true)")
        swatches = page.eval_on_selector_all(
            "#chart-ratings .role-legend-symbol path",
            "els => els.map(e => [e.getAttribute('fill'), getComputedStyle(e).opacity])")
        lines = page.eval_on_selector_all("#chart-ratings .mark-line path", "els => els.map(e => e.getAttribute('stroke'))")
        assert len(swatches) == 3 and {opacity for _, opacity in swatches} == {"1"}
        assert {fill for fill, _ in swatches} == set(lines)
        ticks = page.eval_on_selector_all("#chart-ratings .role-axis-label text", "els => els.map(e => e.textContent)")
        assert ticks and not [t for t in ticks if "." in t]
        assert p.errors == []
