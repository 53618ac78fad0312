"""Lean workers: arena's own memory (PSS) and CPU at --jobs 2, against --jobs 1.

Not a test.  Run: python benchmarks/workers.py [FILE] [--pairs 5] [--cpu N] [--tty] [--pythonpath DIR]

Plays the tournament FILE (default: tournaments/demo.yaml) through the real
``arena`` console script, as a user runs it, with ``--jobs 1`` (the floor) and
``--jobs 2`` (the subject), interleaved: floor, subject, floor, subject...,
``--pairs`` times, each into a fresh results directory.  For every run:

- arena's PSS: every 20 ms, the sum of ``Pss`` in /proc/PID/smaps_rollup over
  arena's own processes (the ``arena`` process, its worker processes, forked
  (named ``arena-worker``) or exec'd (``arena.tournament.executors.worker`` on their
  command line), and any multiprocessing helper: resource tracker,
  forkserver), bots excluded; the
  peak of that sum over the run.  PSS charges shared pages to each process in
  proportion, so the sum is what arena's processes cost the machine together.
- CPU, two figures:
  - ``all``: user + system CPU of every process of the run, bots included,
    exact (``getrusage(RUSAGE_CHILDREN)``; this script is a child subreaper,
    so helpers orphaned by arena are reaped here and counted too);
  - ``arena``: arena's own processes only, bots excluded, from their
    /proc/PID/stat read at each sample (the last sample of a process can miss
    up to 20 ms of its CPU).

The host's own price for two busy CPUs, measured in the same pairs: the
same pure-Python work (seeded in-process matches of the built-in greedy
players, ``HOST_WORK``) as one process alone, then as two processes at once,
each on a CPU of its own as ``--jobs 2`` runs its workers (in a random order:
each run starts with one of the two, by coin toss, so a drift in the
neighbours' load favours neither).  Its ratio, CPU per copy two-at-once over
alone, is the floor under any ``--jobs 2`` / ``--jobs 1`` ratio on this machine:
it charges nothing of arena's.  On the 2-vCPU VMs this was developed on it
is about 1.05 when the host is quiet and far more when it is not.

Prints the runs, then per pair the ratio subject/floor of each CPU figure,
the host's ratio and the arena's ratio over it, their median with min and
max; and the median (min, max) peak PSS.
``results()`` returns the peak PSS at --jobs 2 and the CPU ratios as
figures with issue 9's aims, for ``benchmarks/all.py``.

``--cpu N`` runs every process of every run on CPU N alone.  CPU time is not
a pure count of work: on a busy machine two processes of one run running at
once slow each other (shared caches, memory bandwidth), so --jobs 2 pays a
contention tax that --jobs 1 does not, on top of any overhead of arena's.
Pinned, both job counts run time-sliced on one CPU and the ratio shows the
extra work alone (wall times then mean nothing).

``--tty`` gives arena a terminal for its stderr, as a user at a terminal
does: the progress line then shows the leader, whose fit loads numpy into the
arena process while the workers play.

``--pythonpath DIR`` runs the arena found in DIR (a checkout of another
commit, say) with this interpreter, to compare before and after in one way.
Python's bytecode caches matter to start-up: the header says whether this
interpreter writes them (PYTHONDONTWRITEBYTECODE unset) or not.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib.util
import os
import pty
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from figures import Figure  # noqa: E402 (benchmarks/ is on sys.path)
from reaping import reap_orphans  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_SECONDS = 0.02
RESCAN_SECONDS = 0.1
PR_SET_CHILD_SUBREAPER = 36
TICK = os.sysconf("SC_CLK_TCK")
# Command-line marks of arena's own child processes (workers and helpers);
# anything else below the arena process is a bot (or its sandbox).
ARENA_MARKS = ("arena.tournament.executors.worker", "multiprocessing")
# A worker forked from the arena has the arena's command line and this name.
FORKED_WORKER = "arena-worker"


# The host floor's work: in-process matches, the kind of Python a match runs.
HOST_WORK = """
import os, sys, time
from arena.match import SeatSpec, MatchSpec, run_match
cpu = int(sys.argv[1])
if cpu >= 0:
    os.sched_setaffinity(0, {cpu})
t0 = time.process_time()
for seed in range(%d):
    run_match(MatchSpec(f"host-{seed}", tuple(SeatSpec.builtin("greedy") for _ in range(4)),
                        {"contracts": ["2S3", "S3+R4", "2R4"]}, seed=seed))
print(time.process_time() - t0)
"""
HOST_MATCHES = 24


def host_ratio(env: dict[str, str]) -> float:
    """CPU per copy of ``HOST_WORK`` run twice at once (CPUs 0 and 1) over
    the same work alone (on CPU 0, or unpinned with a single usable CPU)."""
    cpus = sorted(os.sched_getaffinity(0))
    code = HOST_WORK % HOST_MATCHES

    def start(cpu: int) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-c", code, str(cpu)], stdout=subprocess.PIPE,
                                text=True, env=env, cwd=ROOT)

    def alone() -> float:
        return float(start(cpus[0]).communicate()[0])

    def together() -> float:
        procs = [start(cpus[0]), start(cpus[1] if len(cpus) > 1 else -1)]
        return statistics.mean(float(p.communicate()[0]) for p in procs)

    if random.random() < 0.5:
        one = alone()
        two = together()
    else:
        two = together()
        one = alone()
    return two / one


@dataclass
class Run:
    jobs: int
    wall: float = 0.0
    cpu_all: float = 0.0
    cpu_arena: float = 0.0
    peak_pss_mb: float = 0.0
    peak_by_role: dict[str, float] = field(default_factory=dict)
    arena_processes: int = 0
    bot_starts: int = 0


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def _children_of(pid: int) -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        stat = _read(f"/proc/{name}/stat")
        if stat is None:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if int(fields[1]) == pid:
            out.append(int(name))
    return out


def _role(pid: int) -> str | None:
    """'worker' or 'helper' for arena's own children, None for a bot."""
    cmd = _read(f"/proc/{pid}/cmdline")
    if cmd is None:
        return None
    if (_read(f"/proc/{pid}/comm") or "").strip() == FORKED_WORKER:
        return "worker"
    if "resource_tracker" in cmd or "forkserver" in cmd:
        return "helper"
    return "worker" if any(mark in cmd for mark in ARENA_MARKS) else None


def _pss_kb(pid: int) -> int:
    text = _read(f"/proc/{pid}/smaps_rollup") or ""
    for line in text.splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1])
    return 0


def _cpu_seconds(pid: int) -> float | None:
    stat = _read(f"/proc/{pid}/stat")
    if stat is None:
        return None
    fields = stat[stat.rfind(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / TICK   # utime + stime, this process only


class Sampler(threading.Thread):
    """Samples arena's processes (root and its arena children) until told to stop."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.roles: dict[int, str] = {root: "parent"}
        self.cpu: dict[int, float] = {}
        self.peak_kb = 0
        self.peak_by_role: dict[str, int] = {}
        self.bots: set[int] = set()          # bot processes started (seen at a rescan)
        self.done = threading.Event()

    def run(self) -> None:
        next_scan = 0.0
        while not self.done.is_set():
            now = time.monotonic()
            if now >= next_scan:
                self._rescan()
                next_scan = now + RESCAN_SECONDS
            total = 0
            by_role: dict[str, int] = {}
            for pid, role in self.roles.items():
                kb = _pss_kb(pid)
                total += kb
                key = role if role != "worker" else f"worker {pid}"
                by_role[key] = kb
                if (cpu := _cpu_seconds(pid)) is not None:
                    self.cpu[pid] = cpu
            if total > self.peak_kb:
                self.peak_kb, self.peak_by_role = total, by_role
            self.done.wait(SAMPLE_SECONDS)


    def _rescan(self) -> None:
        """New arena processes below the root, and the bots (or their
        sandboxes) started by the root (``--jobs 1``) or by a worker."""
        for child in _children_of(self.root):
            if child not in self.roles and (role := _role(child)) is not None:
                self.roles[child] = role
        for parent in [pid for pid, role in self.roles.items() if role in ("parent", "worker")]:
            for child in _children_of(parent):
                if child not in self.roles and _role(child) is None:
                    self.bots.add(child)


def arena_command() -> list[str]:
    script = shutil.which("arena", path=str(Path(sys.executable).parent))
    if script is None:
        sys.exit("no 'arena' console script next to this interpreter: pip install -e . first")
    return [sys.executable, script]


def _drain(fd: int, into: list[bytes]) -> None:
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except OSError:  # EIO: the terminal's other side closed
            break
        if not chunk:
            break
        into.append(chunk)
    os.close(fd)


def measure(file: Path, jobs: int, env: dict[str, str], tty: bool = False) -> Run:
    run = Run(jobs)
    with tempfile.TemporaryDirectory() as tmp:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        out: list[bytes] = []
        if tty:
            ours, theirs = pty.openpty()
            drain = threading.Thread(target=_drain, args=(ours, out), daemon=True)
            drain.start()
        # A list of runs of its own (arena.tournament.earlier): every run is a first run.
        proc = subprocess.Popen([*arena_command(), "run", str(file), "--jobs", str(jobs), "--out", f"{tmp}/out"],
                                stdout=subprocess.DEVNULL, stderr=theirs if tty else subprocess.PIPE,
                                env={**env, "XDG_STATE_HOME": f"{tmp}/state"})
        if tty:
            os.close(theirs)
        sampler = Sampler(proc.pid)
        sampler.start()
        _, err = proc.communicate()
        err = err or b"".join(out)
        sampler.done.set()
        sampler.join()
        run.wall = time.perf_counter() - start
        reap_orphans(time.monotonic() + 5)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            sys.exit(f"arena run --jobs {jobs} failed ({proc.returncode}): {err.decode(errors='replace')[-500:]}")
    run.cpu_all = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    run.cpu_arena = sum(sampler.cpu.values())
    run.peak_pss_mb = sampler.peak_kb / 1024
    run.peak_by_role = {k: v / 1024 for k, v in sorted(sampler.peak_by_role.items())}
    run.arena_processes = len(sampler.roles)
    run.bot_starts = len(sampler.bots)
    return run


def spread(values: list[float], fmt: str = "{:.3f}") -> str:
    return (f"median {fmt.format(statistics.median(values))} "
            f"(min {fmt.format(min(values))}, max {fmt.format(max(values))})")


def run_pairs(file: Path, pairs: int, env: dict[str, str], echo=print,
              tty: bool = False) -> list[tuple[Run, Run, float]]:
    """``pairs`` interleaved pairs of runs, --jobs 1 then --jobs 2, each
    followed by the host's ratio (``host_ratio``; call ``prepare`` first)."""
    out = []
    for _ in range(pairs):
        one, two = measure(file, 1, env, tty), measure(file, 2, env, tty)
        host = host_ratio(env)
        out.append((one, two, host))
        echo(f"  host: the same Python work two at once / alone: {host:.3f}")
        for r in (one, two):
            roles = ", ".join(f"{k} {v:.1f}" for k, v in r.peak_by_role.items())
            echo(f"  --jobs {r.jobs}: wall {r.wall:5.1f} s, CPU all {r.cpu_all:6.2f} s, arena {r.cpu_arena:5.2f} s, "
                 f"{r.bot_starts} bot processes; "
                 f"peak arena PSS {r.peak_pss_mb:5.1f} MB ({roles})")
    return out


def prepare(cpu: int | None) -> None:
    """Become a child subreaper; pin this process (and so every child) to ``cpu``."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1) != 0:
        print("warning: cannot become a child subreaper; orphaned helpers' CPU is not counted")
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})


def results(pairs_n: int = 5, file: Path = ROOT / "tournaments" / "demo.yaml") -> list[Figure]:
    """Arena's peak PSS at --jobs 2 and the CPU ratio --jobs 2 / --jobs 1 (all
    processes, with the issue's aim; arena's own processes, for information)."""
    prepare(None)
    pairs = run_pairs(file, pairs_n, user_env(), echo=lambda _line: None)
    command = f"python benchmarks/workers.py {_shown(file)} --pairs {pairs_n}"
    return [
        Figure("arena's peak PSS at --jobs 2 (workers, helpers; bots excluded)",
               tuple(b.peak_pss_mb for _, b, _ in pairs), "MB", 60.0, higher_is_better=False, command=command),
        Figure("CPU --jobs 2 / --jobs 1, all processes", tuple(b.cpu_all / a.cpu_all for a, b, _ in pairs),
               "x", 1.03, higher_is_better=False, command=command, fmt=".3f"),
        Figure("CPU --jobs 2 / --jobs 1, arena's processes only",
               tuple(b.cpu_arena / a.cpu_arena for a, b, _ in pairs),
               "x", None, higher_is_better=False, command=command, fmt=".3f"),
        Figure("bot processes started, --jobs 2 / --jobs 1 (a process never sees a deal twice)",
               tuple(b.bot_starts / a.bot_starts for a, b, _ in pairs if a.bot_starts),
               "x", None, higher_is_better=False, command=command, fmt=".3f"),
        Figure("host floor: the same Python work on 2 CPUs at once / alone", tuple(h for _, _, h in pairs),
               "x", None, higher_is_better=False, command=command, fmt=".3f"),
        Figure("CPU --jobs 2 / --jobs 1, all processes, over the host floor",
               tuple(b.cpu_all / a.cpu_all / h for a, b, h in pairs),
               "x", None, higher_is_better=False, command=command, fmt=".3f"),
    ]


def user_env() -> dict[str, str]:
    """This environment as the README's user has it: the venv that runs this
    script activated, so a bot's ``python3`` is its interpreter (not a
    system or pyenv one, whose start may cost more)."""
    env = dict(os.environ)
    if sys.prefix != sys.base_prefix:
        env["VIRTUAL_ENV"] = sys.prefix
        env["PATH"] = os.pathsep.join(filter(None, [str(Path(sys.executable).parent), env.get("PATH")]))
    return env


def install_kind() -> str:
    """How arena is installed in this interpreter: an editable install (``pip
    install -e``, the test set-up) makes every Python process of the venv,
    bots included, import its path finder at start-up (about 16 ms of CPU
    here), which the README's ``pip install .`` does not."""
    site = [Path(p) for p in sys.path if p.endswith("site-packages")]
    editable = any(next(d.glob("__editable__*arena*.pth"), None) for d in site if d.is_dir())
    return "editable (pip install -e: Python bots pay its finder at each start)" if editable else "not editable"


def _arena_home() -> str:
    spec = importlib.util.find_spec("arena")
    return str(Path(spec.origin).parent) if spec is not None and spec.origin else "?"


def _shown(file: Path) -> str:
    """The file as a command line run from the repository's root gives it."""
    try:
        return str(file.resolve().relative_to(ROOT))
    except ValueError:
        return str(file)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", nargs="?", default=str(ROOT / "tournaments" / "demo.yaml"))
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--cpu", type=int, default=None, help="run every process on this CPU alone")
    ap.add_argument("--tty", action="store_true", help="arena's stderr on a terminal (the live progress line)")
    ap.add_argument("--pythonpath", default=None, help="run the arena package found in this directory")
    args = ap.parse_args()
    env = user_env()
    if args.pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [args.pythonpath, env.get("PYTHONPATH")]))
    prepare(args.cpu)
    caches = "off (PYTHONDONTWRITEBYTECODE)" if sys.dont_write_bytecode else "on"
    pinned = "unpinned" if args.cpu is None else f"all on CPU {args.cpu}"
    pinned += ", stderr on a terminal" if args.tty else ""
    print(f"tournament {args.file}; {args.pairs} pairs, --jobs 1 (floor) and 2 (subject) interleaved, {pinned}; "
          f"bytecode caches {caches}; arena from {args.pythonpath or _arena_home()}, "
          f"installed {install_kind()}; bots' python3: {shutil.which('python3', path=env.get('PATH'))}")
    pairs = run_pairs(Path(args.file), args.pairs, env, echo=lambda line: print(line, flush=True), tty=args.tty)
    print("CPU --jobs 2 / --jobs 1, per pair:")
    print("  all processes (bots included): " + spread([b.cpu_all / a.cpu_all for a, b, _ in pairs]))
    print("  arena's processes only:        " + spread([b.cpu_arena / a.cpu_arena for a, b, _ in pairs]))
    print("  the host's floor:              " + spread([h for _, _, h in pairs]))
    print("  bot processes started:         "
          + spread([b.bot_starts / a.bot_starts for a, b, _ in pairs if a.bot_starts]))
    print("  all processes over the floor:  " + spread([b.cpu_all / a.cpu_all / h for a, b, h in pairs]))
    print("arena's CPU-seconds: --jobs 1 " + spread([a.cpu_arena for a, _, _ in pairs], "{:.2f}")
          + "; --jobs 2 " + spread([b.cpu_arena for _, b, _ in pairs], "{:.2f}"))
    print("peak PSS of arena's processes (MB): --jobs 1 " + spread([a.peak_pss_mb for a, _, _ in pairs], "{:.1f}")
          + "; --jobs 2 " + spread([b.peak_pss_mb for _, b, _ in pairs], "{:.1f}"))


if __name__ == "__main__":
    main()
