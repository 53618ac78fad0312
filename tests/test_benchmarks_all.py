"""benchmarks/all.py: the table of issue 9's figures, and the benchmarks' ``results()``.

The table logic runs on canned figures; two small real runs (the engine's
in-process matches, the protocol benchmark's subprocess bots) check that the
benchmarks hand all.py real figures.  No figure's value is asserted: these
are CPU measurements on a shared machine.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCH))

import all as bench_all  # noqa: E402
from figures import Figure  # noqa: E402


def fig(name: str, samples: tuple[float, ...], aim: float | None, higher: bool, unit: str = "us") -> Figure:
    return Figure(name, samples, unit, aim, higher_is_better=higher, command=f"python benchmarks/{name}.py")


def test_met_compares_the_median_with_the_aim_in_the_aims_direction() -> None:
    # A ceiling: the median (2) is under it although the mean (34) and the max are not.
    assert fig("a", (1.0, 100.0, 2.0), 5.0, higher=False).met is True
    assert fig("b", (6.0, 7.0, 1.0), 5.0, higher=False).met is False
    assert fig("c", (5.0,) * 5, 5.0, higher=False).met is True          # the aim itself is met
    # A floor.
    assert fig("d", (0.79, 0.81, 0.9), 0.8, higher=True).met is True
    assert fig("e", (0.5, 0.79, 0.95), 0.8, higher=True).met is False
    assert fig("f", (1.0,), None, higher=False).met is None
    assert [bench_all.met_text(f) for f in (fig("g", (1.0,), 2.0, False), fig("h", (3.0,), 2.0, False),
                                             fig("i", (1.0,), None, False))] == ["met", "NOT met", "-"]
    with pytest.raises(ValueError, match="no samples"):
        fig("j", (), 1.0, higher=True)


def test_table_has_a_row_per_figure_with_target_median_min_max_met_and_command() -> None:
    figures = [
        fig("protocol", (41.0, 38.5, 39.0, 50.25, 30.0), 40.0, higher=False),
        Figure("engine", (41_000.0, 39_000.0, 45_500.0), "", 40_000.0, higher_is_better=True,
               command="python benchmarks/engine.py --pairs 5", fmt=",.0f"),
        Figure("share", (0.05, 0.0625, 0.04), "%", None, higher_is_better=False, command="python x.py"),
    ]
    lines = bench_all.table(figures).splitlines()
    assert len(lines) == 2 + len(figures)                   # header, rule, one row each
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert header == list(bench_all.HEADERS)
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines[2:]]
    assert rows[0] == ["protocol", "<= 40.0 us", "39.0 us [30.0 .. 50.2]", "met", "python benchmarks/protocol.py"]
    assert rows[1] == ["engine", ">= 40,000", "41,000 [39,000 .. 45,500]", "met",
                       "python benchmarks/engine.py --pairs 5"]
    assert rows[2] == ["share", "(none)", "5.0 % [4.0 .. 6.2]", "-", "python x.py"]


def test_main_prints_the_table_and_writes_every_sample_to_json(monkeypatch: pytest.MonkeyPatch,
                                                                tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    canned = [fig("fast", (10.0, 12.0, 11.0, 9.0, 30.0), 20.0, higher=False),
              fig("slow", (0.5, 0.6, 0.7, 0.4, 0.55), 0.8, higher=True, unit="x")]
    monkeypatch.setattr(bench_all, "benches", lambda pairs, quick, tmp, fastchess=None: [("canned", lambda: canned)])
    out = tmp_path / "figures.json"
    assert bench_all.main(["--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| fast " in printed and "| slow " in printed
    assert "1 of 2 targets met; not met: slow" in printed
    data = json.loads(out.read_text())
    assert data["pairs"] == 5 and data["quick"] is False
    assert [(f["figure"], f["median"], f["min"], f["max"], f["met"]) for f in data["figures"]] == \
        [("fast", 11.0, 9.0, 30.0, True), ("slow", 0.55, 0.4, 0.7, False)]
    assert data["figures"][0]["samples"] == [10.0, 12.0, 11.0, 9.0, 30.0]


def test_a_failing_benchmark_is_one_line_and_the_others_still_reach_the_table(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def broken() -> list[Figure]:
        sys.exit("arena run --jobs 2 failed (1): bad\nthings")      # as workers.py says it

    def buggy() -> list[Figure]:
        raise RuntimeError("no CPU report in /tmp/x.log")

    after = [fig("after", (1.0, 2.0, 3.0), 5.0, higher=False)]
    monkeypatch.setattr(bench_all, "benches", lambda pairs, quick, tmp, fastchess=None: [
        ("workers", broken), ("protocol", buggy), ("engine", lambda: after)])
    assert bench_all.main([]) == 1
    out, err = capsys.readouterr()
    assert "| after " in out and "1 of 1 targets met" in out
    assert err.splitlines() == ["error: workers: failed: arena run --jobs 2 failed (1): bad things",
                                "error: protocol: failed: no CPU report in /tmp/x.log"]


def test_main_refuses_fewer_than_five_pairs_and_a_json_file_it_cannot_write(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        bench_all.main(["--pairs", "4"])
    assert exc.value.code == 2 and "at least 5" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:            # before any benchmark runs
        bench_all.main(["--json", str(tmp_path / "missing" / "f.json")])
    assert exc.value.code == 2 and "no directory" in capsys.readouterr().err


def test_quick_tournament_is_the_demo_cut_short_and_loads(tmp_path: Path) -> None:
    from arena.tournament.config.load import load_config
    config = load_config(bench_all.quick_tournament(tmp_path))
    assert [b.name for b in config.bots] == ["greedy", "random", "js", "greedy-builtin"]
    assert len(config.rules.contracts) == 2


def test_engine_and_protocol_results_are_real_figures_with_the_issues_aims() -> None:
    import engine
    import protocol
    figures = engine.results(pairs_n=2, matches=1) + protocol.results(pairs_n=2)
    assert [(f.aim, f.higher_is_better) for f in figures] == [
        (40_000, True), (30_000, True), (20_000, True),     # random x4, random x8, greedy x4
        (None, True), (None, True), (None, True),            # each of them / the passive floor
        (40.0, False), (2048.0, False), (0.8, True)]         # arena us/decision, request B, rate ratio
    assert all(len(f.samples) == 2 and all(s > 0 for s in f.samples) for f in figures)
    rates, ratios = figures[:3], figures[3:6]
    # A player that thinks is slower than one that always takes the first option, deal for deal:
    # in one of the two samples at least (one sample of a single match read 1.0x at load 9, 6 workers).
    assert all(r > 0 for f in ratios for r in f.samples) and all(min(f.samples) < 1 for f in ratios)
    assert all(f.unit == "x" and "passive" in f.name for f in ratios)
    assert [f.command for f in ratios] == [f.command for f in rates]
    assert len(bench_all.table(figures).splitlines()) == 2 + len(figures)


def test_decision_floor_results_are_the_arenas_floors_without_aims() -> None:
    import decision_floor
    figures = decision_floor.results(reps=5)
    assert [(f.aim, f.unit) for f in figures] == [(None, "us"), (None, "us")]
    no_process_layer, with_it = figures
    assert "no process layer" in no_process_layer.name and "process layer +" in with_it.name
    assert all(len(f.samples) == 5 and all(s > 0 for s in f.samples) for f in figures)
    # The process layer costs something on top of the bare loop, run for run.
    assert sum(b > a for a, b in zip(no_process_layer.samples, with_it.samples)) >= 3


def test_botstart_results_are_informational_figures_of_real_starts() -> None:
    import botstart
    figures = botstart.results(pairs_n=2, starts=1)
    assert len(figures) == 5          # the floor, then per shipped bot: ms per start and the ratio
    assert all(f.aim is None and len(f.samples) == 2 and all(s > 0 for s in f.samples) for f in figures)
    assert [f.unit for f in figures] == ["ms", "ms", "x", "ms", "x"]
    assert "random_bot.py" in figures[1].name and "greedy_bot.py" in figures[3].name
