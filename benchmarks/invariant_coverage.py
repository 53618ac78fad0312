"""Which branches of arena/ the random matches of tests/test_invariants.py reach.

Not a test.  Needs coverage.py (``pip install coverage``; not a dependency).

    python benchmarks/invariant_coverage.py [--upto 192]

Plays each seed of ``range(UPTO)`` as the test plays it (every decision
checked, the record replayed), and records the branch arcs of arena/ (the
engine, the finder, the players) each reaches.  Prints how many arcs all of
them reach, how many the test's default seeds (``test_invariants.SEEDS``)
reach, the arcs those miss with the seeds that reach them, and a small set
of seeds (greedy) that reaches all.

The suite plays the default seeds only (issue 31: 192 matches took 35 of
the module's 40 CPU-s); run this after changing the engine or the players,
and add a seed for any arc the defaults no longer reach.  Seed 0 runs first,
after a warm-up match, so that what runs at import is no seed's.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent / "tests"


def arcs_of(seed: int, cov: object) -> set[str]:
    """The arcs of arena/ that playing and replaying ``seed`` reaches."""
    import test_invariants as inv

    from arena.shanghai.game import Game

    cov.erase()  # type: ignore[attr-defined]
    cov.start()  # type: ignore[attr-defined]
    game = inv.play_checked(seed)
    record = json.loads(json.dumps(game.to_record()))
    assert Game.from_record(record).to_record() == record
    cov.stop()  # type: ignore[attr-defined]
    data = cov.get_data()  # type: ignore[attr-defined]
    return {f"{name.split('/arena/', 1)[1]}:{a}:{b}" for name in data.measured_files()
            for a, b in data.arcs(name) or ()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--upto", type=int, default=192)
    args = ap.parse_args()
    try:
        import coverage
    except ImportError:
        sys.exit("invariant_coverage.py: needs coverage.py: pip install coverage")
    sys.path.insert(0, str(TESTS))
    import test_invariants as inv

    inv.play_checked(1)       # the warm-up: imports and first-call set-up belong to no seed
    cov = coverage.Coverage(branch=True, source=["arena"], data_file=None)
    seeds = sorted(set(range(args.upto)) | set(inv.SEEDS))
    reached = {seed: arcs_of(seed, cov) for seed in seeds}
    every = set().union(*reached.values())
    default = set().union(*(reached[s] for s in inv.SEEDS))
    print(f"{len(seeds)} seeds reach {len(every)} arcs; the {len(inv.SEEDS)} default seeds reach {len(default)}")
    for arc in sorted(every - default):
        print(f"  missed: {arc}, reached by seeds {[s for s in seeds if arc in reached[s]]}")
    left, chosen = set(every), []
    while left:
        best = max(seeds, key=lambda s: len(reached[s] & left))
        chosen.append(best)
        left -= reached[best]
    print(f"{len(chosen)} seeds reach them all: {sorted(chosen)}")


if __name__ == "__main__":
    main()
