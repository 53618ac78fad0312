"""Anonymous tables (``anonymous: true``): no bot learns who sits at its table.

Two bots of one author that know when they share a table can soft-play each
other.  With the option on, nothing a bot is sent (``start``, notices,
requests, ``end``) names another bot or tells it which table or rotation it
plays.  Real subprocess bots (``tests/bots/recorder.py``, each in its own
directory as submissions are) write every line they get to their stderr
log, so the logs are everything the arena told them.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from inproc import arena_here

from arena.match import MatchSpec, SeatSpec
from arena.tournament.config.load import load_config

ROOT = Path(__file__).resolve().parent.parent
RECORDER = ROOT / "tests" / "bots" / "recorder.py"
PY = sys.executable
BOTS = ("zulu-alpha", "yankee-bravo", "xray-charlie")
BUILTIN = "kilo-greedy"


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return arena_here(*args, cwd=cwd)


def tournament(where: Path, anonymous: bool | None) -> Path:
    bots = ""
    for name in BOTS:
        home = where / name
        home.mkdir(exist_ok=True)
        shutil.copy(RECORDER, home / "bot.py")
        bots += f"  - name: {name}\n    command: [{PY}, bot.py]\n    dir: {name}\n"
    key = "" if anonymous is None else f"anonymous: {str(anonymous).lower()}\n"
    path = where / "t.yaml"
    path.write_text(f"name: t\nbots:\n{bots}  - name: {BUILTIN}\n    builtin: greedy\n"
                    f"players: 4\nrules: {{contracts: [2S3]}}\nseed: 11\n{key}")
    return path


def received(results: Path) -> dict[str, list[str]]:
    """Every line each bot log holds, by log file name."""
    logs = sorted((results / "logs").glob("*.stderr.log"))
    assert len(logs) == 4 * len(BOTS), [p.name for p in logs]    # 4 rotations, 3 programs each
    return {p.name: p.read_text().splitlines() for p in logs}


@pytest.fixture(scope="module")
def anonymous_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("anonymous")
    tournament(where, anonymous=True)
    done = arena("run", "t.yaml", "--jobs", "1", cwd=where)
    assert done.returncode == 0, done.stderr
    return where / "arena-results" / "t"


def test_no_message_a_bot_gets_names_another_bot_or_the_table(anonymous_run: Path) -> None:
    told_ids: dict[str, set[str]] = {}
    for log, lines in received(anonymous_run).items():
        text = "\n".join(lines)
        kinds = {json.loads(line)["type"] for line in lines}
        assert {"start", "event", "request", "error", "end", "quit"} <= kinds, (log, kinds)
        for name in (*BOTS, BUILTIN, "greedy"):
            assert name not in text, f"{log} was told {name!r}"
        # The stored ids say the table, rotation and deal: not sent either.
        assert not re.search(r"t\d{3}-r\d", text), log
        start = json.loads(lines[0])
        assert start["type"] == "start"
        assert start["names"] == ["seat 0", "seat 1", "seat 2", "seat 3"]
        assert start["players"] == 4 and 0 <= start["seat"] < 4
        end = next(json.loads(line) for line in lines if json.loads(line)["type"] == "end")
        assert end["match"] == start["match"] and re.fullmatch(r"m-[0-9a-f]{16}", start["match"])
        told_ids.setdefault(log.split("-seat")[0], set()).add(start["match"])
    # Every seat of a match is told the same id, and every match another one.
    assert all(len(ids) == 1 for ids in told_ids.values()), told_ids
    assert len({next(iter(ids)) for ids in told_ids.values()}) == len(told_ids) == 4


def test_the_organiser_still_sees_the_real_names(anonymous_run: Path) -> None:
    shown = arena("show", str(anonymous_run), "t000-r0-d0", cwd=anonymous_run)
    assert shown.returncode == 0, shown.stderr
    for name in (*BOTS, BUILTIN):
        assert name in shown.stdout
    as_json = json.loads(arena("show", str(anonymous_run), "t000-r0-d0", "--json", cwd=anonymous_run).stdout)
    assert sorted(as_json["bots"]) == sorted((*BOTS, BUILTIN))


def test_names_are_told_by_default(tmp_path: Path) -> None:
    tournament(tmp_path, anonymous=None)
    done = arena("run", "t.yaml", "--jobs", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    for log, lines in received(tmp_path / "arena-results" / "t").items():
        start = json.loads(lines[0])
        assert sorted(start["names"]) == sorted((*BOTS, BUILTIN)), log
        assert start["match"] == log.split("-seat")[0]


def test_the_option_is_read_and_stored_only_when_set(tmp_path: Path) -> None:
    assert load_config(tournament(tmp_path, anonymous=None)).anonymous is False
    assert "anonymous" not in load_config(tournament(tmp_path, anonymous=False)).to_mapping()
    on = load_config(tournament(tmp_path, anonymous=True))
    assert on.anonymous is True and on.to_mapping()["anonymous"] is True
    broken = tmp_path / "t.yaml"
    broken.write_text(broken.read_text().replace("anonymous: true", "anonymous: maybe"))
    from arena.tournament.config.model import ConfigError
    with pytest.raises(ConfigError, match=r"t.yaml:\d+: anonymous: expected"):
        load_config(broken)


def test_a_changed_option_is_named_on_resume(anonymous_run: Path, tmp_path: Path) -> None:
    where = tmp_path
    tournament(where, anonymous=None)
    done = arena("run", "t.yaml", "--jobs", "1", "--out", str(anonymous_run), cwd=where)
    assert done.returncode == 1
    assert "anonymous: was true, now not given" in done.stderr, done.stderr


def test_the_told_id_is_stable_and_the_spec_round_trips() -> None:
    seats = (SeatSpec.builtin("greedy", "a"), SeatSpec.builtin("random", "b"))
    spec = MatchSpec("t001-r1-d0", seats, seed=42, anonymous=True)
    again = MatchSpec.from_json(json.loads(json.dumps(spec.to_json())))
    assert again == spec and again.told_match_id() == spec.told_match_id()
    assert spec.told_match_id() != MatchSpec("t001-r1-d0", seats, seed=43, anonymous=True).told_match_id()
    assert spec.told_names() == ["seat 0", "seat 1"]
    plain = MatchSpec("t001-r1-d0", seats, seed=42)
    assert plain.told_match_id() == "t001-r1-d0" and plain.told_names() == ["a", "b"]
    assert "anonymous" not in plain.to_json()


def test_play_offers_it_as_a_flag(tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    done = arena("play", f"{PY} {RECORDER}", "greedy", "random", "--anonymous", "--seed", "3",
                 "--log-dir", str(log_dir), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (log,) = log_dir.glob("*.stderr.log")
    start = json.loads(log.read_text().splitlines()[0])
    assert start["names"] == ["seat 0", "seat 1", "seat 2"] and start["match"].startswith("m-")
    assert "greedy" in done.stdout      # the account shows the real names


def test_botkit_and_the_starter_kits_play_an_anonymous_match(tmp_path: Path) -> None:
    """They must not stumble on the placeholders or the opaque id: with
    --strict a single fault would forfeit a seat (exit status 3)."""
    kits = [f"{PY} {ROOT / 'examples/python/bot.py'}", f"{PY} {ROOT / 'bots/greedy_bot.py'}"]
    if shutil.which("node"):
        kits.append(f"node {ROOT / 'examples/javascript/bot.js'}")
    if shutil.which("gcc") and shutil.which("make"):
        shutil.copytree(ROOT / "examples" / "c", tmp_path / "c", ignore=shutil.ignore_patterns("bot", "*.o"))
        subprocess.run(["make", "-C", str(tmp_path / "c")], check=True, capture_output=True, timeout=120)
        kits.append(str(tmp_path / "c" / "bot"))
    rules = tmp_path / "rules.yaml"
    rules.write_text("contracts: [2S3, S3+R4]\n")
    done = arena("play", *kits, "--anonymous", "--strict", "--seed", "4", "--rules", str(rules),
                 "--log-dir", str(tmp_path / "logs"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
