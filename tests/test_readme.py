"""The README is short, its links and the docs' links lead somewhere, and its
commands run.

The quick start's commands run for real, on a cut-down demo (the built-in
players, 3 matches: a few seconds instead of the demo's 15); the set-up
commands are the ones CI runs.
"""
from __future__ import annotations

import re
import shlex
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MAX_LINES = 170
DEMO_RESULTS = "tournaments/arena-results/demo"


def documents() -> list[Path]:
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


def section(text: str, title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, f"no section {title!r}"
    return match.group(1)


def code_blocks(text: str) -> list[str]:
    return re.findall(r"^```[a-z]*\n(.*?)^```", text, re.S | re.M)


def commands(block: str) -> list[list[str]]:
    """The ``arena ...`` lines of a code block, split as a shell would, comments dropped."""
    return [shlex.split(line, comments=True) for line in block.splitlines() if line.startswith("arena ")]


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.S | re.M)
    return {slug(h) for h in re.findall(r"^#+ (.+)$", text, re.M)}


def test_the_readme_is_short() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines, at most {MAX_LINES}"


@pytest.mark.parametrize("doc", documents(), ids=lambda p: p.name)
def test_every_relative_link_leads_to_a_file_and_heading(doc: Path) -> None:
    text = re.sub(r"^```.*?^```", "", doc.read_text(), flags=re.S | re.M)
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue                                   # an absolute address, not checked here
        path, _, anchor = target.partition("#")
        where = (doc.parent / path).resolve() if path else doc
        if not where.exists():
            broken.append(f"{target}: no such file")
        elif anchor and where.suffix == ".md" and anchor not in anchors(where):
            broken.append(f"{target}: no such heading")
    assert not broken, f"{doc.name}: " + "; ".join(broken)


def test_the_set_up_commands_are_the_ones_ci_runs() -> None:
    blocks = code_blocks(section(README.read_text(), "Set-up"))
    assert len(blocks) == 2, "the set-up is two commands"
    install, tests = (b.strip() for b in blocks)
    assert install.endswith("pip install . && arena run tournaments/demo.yaml")
    ci = (ROOT / ".ci" / "run").read_text()
    assert "pip install --quiet --disable-pip-version-check -e '.[test]'" in ci
    assert tests.endswith("pip install -e '.[test]' && " + ci.strip().splitlines()[-1])


def test_each_set_up_command_says_how_long_its_pip_takes() -> None:
    """A first-time user waits minutes in pip with no output: each of the two
    set-up commands says how long, before it is run."""
    text = section(README.read_text(), "Set-up")
    paragraphs = re.split(r"^```sh\n.*?^```\n", text, flags=re.S | re.M)[:2]
    for paragraph in paragraphs:
        assert re.search(r"about \d+ minutes? of\s+pip", paragraph), paragraph


def test_the_protocol_links_the_minimal_bot_from_its_summary_and_warns_of_a_process_per_message() -> None:
    text = (ROOT / "docs" / "PROTOCOL.md").read_text()
    assert "(#a-minimal-bot)" in section(text, "In short")
    limits = section(text, "Time limits")
    assert "jq" in limits and re.search(r"about \d+ ms", limits), "no figure for starting a process"


def arena(args: list[str]) -> str:
    """``arena ARGS`` in this process (as the console script would run it), in the current directory."""
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, f"arena {shlex.join(args)}: {done.output}"
    return done.stdout


def cut_down_demo(where: Path) -> None:
    """tournaments/demo.yaml with built-in players only: 1 table, 3 matches, no bot process."""
    (where / "tournaments").mkdir()
    (where / "tournaments" / "demo.yaml").write_text(
        "name: demo\n"
        "bots:\n"
        "  - {name: greedy, builtin: greedy}\n"
        "  - {name: random, builtin: random}\n"
        "  - {name: passive, builtin: passive}\n"
        "players: 3\n"
        "seed: 2410114748679867459\n")


def quick_start() -> list[list[str]]:
    (block, *_) = code_blocks(section(README.read_text(), "Quick start"))
    return commands(block)


def test_the_quick_start_names_each_command_once_and_only_real_commands() -> None:
    listed = set(re.findall(r"^\| `arena (\w+)", section(README.read_text(), "Commands"), re.M))
    helped = arena(["--help"]).split("Commands:")[1]
    assert listed == set(re.findall(r"^  (\w+) ", helped, re.M))
    assert {args[1] for args in quick_start()} <= listed


def test_the_quick_start_runs_on_the_demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cut_down_demo(tmp_path)
    monkeypatch.chdir(tmp_path)
    # The report as without its `report` extra: no charts, so no Vega bundle to
    # make (4 CPU-seconds; tests/test_report_cache.py covers it), one warning.
    monkeypatch.setitem(sys.modules, "altair", None)
    tournament = [args for args in quick_start() if DEMO_RESULTS in args or "tournaments/demo.yaml" in args]
    assert tournament[0] == ["arena", "run", "tournaments/demo.yaml"], "the quick start begins with the demo"
    for args in tournament:
        arena(args[1:] + (["--jobs", "1"] if args[1] in ("run", "report") else []))
    assert (tmp_path / DEMO_RESULTS / "report" / "index.html").is_file()
    board = arena(["leaderboard", DEMO_RESULTS, "--format", "csv"])
    assert "greedy" in board and "passive" in board


def test_the_quick_start_plays_and_checks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run where the checkout's examples are (copied, so no log lands in the checkout)."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    others = [args for args in quick_start() if DEMO_RESULTS not in args and "tournaments/demo.yaml" not in args]
    assert {args[1] for args in others} == {"play", "check"}
    for args in others:
        arena(args[1:])
