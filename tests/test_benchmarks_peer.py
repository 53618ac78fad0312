"""benchmarks/peer.py: the arena against a peer runner (issue 34).

No figure's value is asserted (CPU on a shared machine): what is checked is
that a runner's own CPU leaves its children's out, that the fixed chess line
the peer's engines play is legal as the benchmark uses it, and that without
a fastchess binary the arena is measured against its echo floor (with its context
switches per decision), and that ``--one-cpu`` pins what the benchmark starts.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCH))

import all as bench_all  # noqa: E402
import peer  # noqa: E402


def test_a_runners_own_cpu_leaves_out_what_its_children_used() -> None:
    # The parent only waits; its child spins for 0.4 s of CPU (not of wall time).
    script = textwrap.dedent("""
        import subprocess, sys
        subprocess.run([sys.executable, "-c",
                        "import time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.4: pass"])
    """)
    proc = subprocess.Popen([sys.executable, "-c", script])
    own = peer.own_cpu_at_exit(proc)
    assert proc.returncode == 0
    assert own < 0.3          # with its child's it would be over 0.4


def test_the_engines_line_is_long_enough_for_a_match_and_made_of_moves() -> None:
    moves = peer.LINE.read_text().split()
    assert len(moves) >= 724                  # a 2-seat match of protocol.RULES: 723 decisions
    assert all(len(m) == 4 and m[0] in "abcdefgh" and m[2] in "abcdefgh" for m in moves)


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_without_fastchess_the_arena_is_measured_against_its_echo_floor() -> None:
    found = peer.measure(None, pairs_n=2, matches=1, plies=None, echo=lambda _line: None)
    assert [m.language for m in found] == ["C", "Python"]
    for m in found:
        assert len(m.arena_us) == len(m.peer_us) == len(m.ratios) == 2
        assert all(x > 0 for x in m.arena_us + m.peer_us)
        assert len(m.sleeps) == len(m.preempted) == 2                # the arena's switches, per decision
        assert all(s >= 0 for s in m.sleeps + m.preempted)
        # The bare echo loop moves the same bytes without the engine, the codec or the checks.
        assert all(r > 1 for r in m.ratios)


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="Linux only")
def test_one_cpu_pins_the_benchmark_and_what_it_starts() -> None:
    code = ("import os, subprocess, peer; said = peer.one_cpu(); "
            "child = subprocess.run(['grep', 'Cpus_allowed_list', '/proc/self/status'], "
            "capture_output=True, text=True).stdout.split()[-1]; "
            "print(said, len(os.sched_getaffinity(0)), child)")
    out = subprocess.run([sys.executable, "-c", code], cwd=BENCH, capture_output=True, text=True,
                         check=True).stdout.split()
    cpu = str(max(os.sched_getaffinity(0)))
    assert out == ["everything", "on", "CPU", cpu, "1", cpu]


def test_all_py_takes_the_peer_only_with_a_fastchess_binary(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    names = [name for name, _ in bench_all.benches(5, True, tmp_path)]
    assert "peer" not in names
    assert [name for name, _ in bench_all.benches(5, True, tmp_path, "/bin/true")][-1] == "peer"
    with pytest.raises(SystemExit) as exc:
        bench_all.main(["--fastchess", str(tmp_path / "missing")])
    assert exc.value.code == 2 and "not an executable file" in capsys.readouterr().err
