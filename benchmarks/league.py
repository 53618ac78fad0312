"""``arena league``'s aims (issue 35): placement, the page under load, memory.

Not a test.  Run (each part alone with ``--only``; small by default):
    nice -n 19 python benchmarks/league.py [--only a|b|c|d] [--seeds 3] [--readers 50] [--authors 100]

(a) **Placement.**  A field of 12 built-in authors (2 greedy, 3 random, 7
passive, listed shuffled, so the order of the names is not their strength)
plays ``--before`` matches; then one passive author hands in a greedy
version (the new version: its older one retires), and the league plays on
until the new version has ``--after`` matches.  Its final rank is its
place by rating in that last table.  After every table it sat at, its rank
range (``standings``: the playing versions clearly better and clearly worse,
95 %, bootstrap over deals) is computed from the matches stored by then; the
figure is how many of its matches it took until its range held its final
rank, at most 3 wide, and did at every table after (the aim: <= 60).  Its
tie group is 3 (the three greedy versions), so 3 wide is the narrowest a
range can rightly be: the built-in players have three strengths only, and a
version tied with 4 or more others can never be told apart from them (a
first field of 4 greedy, 3 random, 5 passive with a random newcomer showed
it: under one short contract greedy and random tie, and its range stayed
1-8).  Rules: one short contract, so a match is ~0.1 s; ``--full-rules``: the
default rules, whose longer matches tell greedy from random apart sooner.

(b) **The page under load.**  ``arena league serve`` and ``arena league run
--jobs 2`` of a 12-author league, each in its own process; ``--readers``
async httpx clients on loopback each fetch the leaderboard (``/fragments``,
what the page fetches on each update, and ``/``) in a loop; the latency of
every request is kept.  Interleaved windows: the run stopped (SIGSTOP: the
floor, an idle league) and playing (SIGCONT), ``--windows`` of each.
Printed: the p95 of each window, the median over windows with min and max
(the aim: p95 <= 100 ms while playing).

(c) **Memory.**  A league of ``--authors`` built-in authors, each handing in
``--versions`` versions one after another (each admitted, the older
retiring), ``--per-version`` matches played after each round of versions.
Each round is one ``arena league run --max-matches`` process, its RSS
sampled every 0.1 s (``/proc``: it and its workers, summed); then
``arena league serve`` answers 20 requests of ``/`` and its RSS is read.
Printed: peak RSS per round against the matches stored, for run and serve:
"flat" is peak RSS not growing with the matches stored.

(d) **The page's memory as matches grow.**  A league of ``--authors``
built-in authors x ``--versions`` versions (all registered; the last of each
playing), its results written straight into its store, not played (20,000
matches would take hours): each match a table of 3 versions of one round,
``--hands`` hands, scores drawn from each version's strength, 3 rotations a
table.  At each of ``--counts`` stored matches, ``arena league serve`` starts,
answers its first ``/`` (the fit of every stored match: how long it took is
printed), then 2 s of 4 readers; its peak RSS (``VmHWM``) is read.  Flat:
peak RSS not growing with the matches stored.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))

from arena.league.config import load_league  # noqa: E402
from arena.league.register import PLAYING, SUBMITTED, Register  # noqa: E402
from arena.league.run import run_league  # noqa: E402
from arena.league.standings import _rows as standing_rows  # noqa: E402
from arena.tournament.results.database import ResultStore, StoredMatch  # noqa: E402

RULES = "{contracts: [2S3]}"
SEED = 3535


def league_file(where: Path, authors: Sequence[tuple[str, str]], seed: int, placement: int = 30,
                rules: str | None = RULES) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    lines = [f"name: {where.name}", "players: 3", *([f"rules: {rules}"] if rules else []), "sandbox: none",
             f"seed: {seed}",
             f"matchmaking: {{placement_matches: {placement}}}", "authors:"]
    lines += [f"  - {{name: {name}, builtin: {kind}}}" for name, kind in authors]
    (where / "league.yaml").write_text("\n".join(lines) + "\n")
    return where


def new_version(league: Path, author: str, kind: str) -> str:
    """``author`` hands in a built-in ``kind`` as its next version, admitted at once (its older retires)."""
    with Register(league) as register:
        version = register.add_version(author, None, None, builtin=kind, status=SUBMITTED)
        register.admit(version.name)
    return version.name


def quiet(line: str) -> None:
    pass


# -- (a) placement -----------------------------------------------------------------

FIELD = ["greedy"] * 2 + ["random"] * 3 + ["passive"] * 7


def ranges_over_time(matches: list[StoredMatch], league: Path, newcomer: str, seed: int,
                     playing: list[str]) -> list[tuple[int, int, int, int]]:
    """After each table the newcomer sat at: (its matches, its first rank, last rank, place by rating)."""
    with Register(league, readonly=True) as register:
        versions = register.versions()
    ordered = sorted(matches, key=lambda m: m.schedule_index)
    out = []
    seen = 0
    for i, m in enumerate(ordered):
        if newcomer not in m.bots:
            continue
        seen += 1
        if m.rotation != 2:            # the table's last rotation: one point a table
            continue
        rows = standing_rows(ordered[:i + 1], versions, seed)
        first, _, last = rows[newcomer].ranks.partition("-")
        by_rating = sorted((r for name, r in rows.items() if name in playing), key=lambda r: -r.rating)
        out.append((seen, int(first), int(last or first), [r.bot for r in by_rating].index(newcomer) + 1))
    return out


def settled_after(points: list[tuple[int, int, int, int]]) -> int | None:
    """The newcomer's matches from which its range held its final place, <= 3 wide, at every later table."""
    final = points[-1][3]
    settled = None
    for seen, first, last, _ in points:
        if first <= final <= last and last - first + 1 <= 3:
            settled = seen if settled is None else settled
        else:
            settled = None
    return settled


def placement(seed: int, before: int, after: int, tmp: Path, rules: str | None) -> tuple[int | None, int, str]:
    rng = random.Random(seed)
    kinds = FIELD[:]
    rng.shuffle(kinds)
    authors = [(f"author{i:02d}", kind) for i, kind in enumerate(kinds)]
    league = league_file(tmp / f"a{seed}", authors, seed, rules=rules)
    config = load_league(league)
    run_league(config, jobs=2, max_matches=before, echo=quiet, idle_exit=True)
    mover = next(name for name, kind in authors if kind == "passive")
    newcomer = new_version(league, mover, "greedy")
    db = league / "results" / "results.sqlite"
    while True:
        with ResultStore(db, readonly=True) as store:
            count = sum(1 for m in store.matches() if newcomer in m.bots)
        if count >= after:
            break
        run_league(config, jobs=2, max_matches=30, echo=quiet, idle_exit=True)
    with ResultStore(db, readonly=True) as store:
        matches = store.matches()
    with Register(league, readonly=True) as register:
        playing = [v.name for v in register.versions(PLAYING)]
    points = ranges_over_time(matches, league, newcomer, seed, playing)
    last = points[-1]
    return settled_after(points), last[0], f"final place {last[3]}, range {last[1]}-{last[2]}"


def part_a(args: argparse.Namespace, tmp: Path) -> None:
    print(f"(a) placement: 12 built-in authors, {args.before} matches, then a new version to {args.after} "
          f"of its matches; seeds {args.seeds}")
    found = []
    for s in range(args.seeds):
        settled, played, final = placement(SEED + s, args.before, args.after, tmp,
                                           None if args.full_rules else RULES)
        found.append(settled)
        print(f"  seed {SEED + s}: settled after {settled if settled is not None else 'never'} of its "
              f"{played} matches ({final})")
    done = [n for n in found if n is not None]
    if done:
        print(f"  settled after: median {statistics.median(done)} [min {min(done)} .. max {max(done)}] of its "
              f"matches, {len(done)} of {len(found)} seeds settled (aim: <= 60)")


# -- (b) the page under load ---------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def arena(*args: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    return subprocess.Popen([sys.executable, "-m", "arena", *args], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


@contextmanager
def running(*args: str) -> Iterator[subprocess.Popen[bytes]]:
    proc = arena(*args)
    try:
        yield proc
    finally:
        os.killpg(proc.pid, signal.SIGCONT)
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def wait_served(url: str, deadline: float = 60.0) -> None:
    import httpx

    end = time.monotonic() + deadline
    while time.monotonic() < end:
        try:
            if httpx.get(url + "board.json", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"the page at {url} did not answer in {deadline} s")


async def _get(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, path: str) -> int:
    """One GET on a kept-alive connection; its status.  HTTP/1.1 by hand: the
    answers carry Content-Length, and the page's own answers are all this reads."""
    writer.write(f"GET /{path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = next(int(line.split(":", 1)[1]) for line in lines if line.lower().startswith("content-length:"))
    await reader.readexactly(length)
    return int(lines[0].split()[1])


async def readers(url: str, count: int, seconds: float) -> list[float]:
    """``count`` readers, each on its own kept-alive connection, fetching in a loop.
    A hand-written HTTP/1.1 client, not httpx: with 50 readers in one process
    httpx took 10 CPU-ms a request (its pool), 15 times serve's own, so the
    figure was the client's queue, not the page's."""
    host, port = url.split("//", 1)[1].rstrip("/").split(":")
    latencies: list[float] = []
    end = time.monotonic() + seconds

    async def one(i: int) -> None:
        paths = ("fragments", "")
        k = i
        reader, writer = await asyncio.open_connection(host, int(port))
        try:
            while time.monotonic() < end:
                start = time.perf_counter()
                status = await _get(reader, writer, paths[k % 2])
                latencies.append(time.perf_counter() - start)
                if status != 200:
                    raise SystemExit(f"/{paths[k % 2]} answered {status}")
                k += 1
        finally:
            writer.close()
    await asyncio.gather(*(one(i) for i in range(count)))
    return latencies


def cpu_seconds(pid: int) -> float:
    """User and system CPU of process ``pid`` so far (/proc)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1]


def part_b(args: argparse.Namespace, tmp: Path) -> None:
    kinds = FIELD[:]
    random.Random(SEED).shuffle(kinds)
    league = league_file(tmp / "b", [(f"author{i:02d}", k) for i, k in enumerate(kinds)], SEED)
    run_league(load_league(league), jobs=2, max_matches=60, echo=quiet, idle_exit=True)   # a table to show
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    print(f"(b) the page: {args.readers} readers of / and /fragments, league run --jobs 2 stopped (floor) and "
          f"playing, {args.windows} windows of {args.seconds} s each")
    figures: dict[str, list[float]] = {"idle": [], "playing": []}
    with running("league", "serve", str(league), "--port", str(port)) as serve, \
            running("league", "run", str(league), "--jobs", "2", "-q") as run:
        wait_served(url)
        for w in range(args.windows):
            for phase in (("idle", "playing") if w % 2 == 0 else ("playing", "idle")):
                os.killpg(run.pid, signal.SIGSTOP if phase == "idle" else signal.SIGCONT)
                with ResultStore(league / "results" / "results.sqlite", readonly=True) as store:
                    before = len(store)
                cpu = cpu_seconds(serve.pid)
                latencies = asyncio.run(readers(url, args.readers, args.seconds))
                cpu = cpu_seconds(serve.pid) - cpu
                with ResultStore(league / "results" / "results.sqlite", readonly=True) as store:
                    played = len(store) - before
                figures[phase].append(p95(latencies))
                print(f"  {phase:8} p95 {1000 * p95(latencies):7.1f} ms, median "
                      f"{1000 * statistics.median(latencies):6.1f} ms, {len(latencies)} requests, "
                      f"{played} matches stored meanwhile; serve: {1000 * cpu / len(latencies):.2f} CPU-ms a request")
    for phase, values in figures.items():
        print(f"  {phase}: p95 median {1000 * statistics.median(values):.1f} ms [min {1000 * min(values):.1f} .. "
              f"max {1000 * max(values):.1f}]" + (" (aim: <= 100 ms)" if phase == "playing" else " (floor)"))


# -- (c) memory ---------------------------------------------------------------------------

def tree_rss_mb(pid: int) -> float:
    """RSS of ``pid`` and its descendants, in MB (from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        todo += children.get(p, [])
        try:
            with open(f"/proc/{p}/status") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        except (OSError, StopIteration):
            continue
    return total / 1024


def rss_mb(pid: int) -> float:
    """RSS of ``pid`` alone, in MB."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024
    except (OSError, StopIteration):
        return 0.0


def peaks_while(proc: subprocess.Popen[bytes]) -> tuple[float, float]:
    """The peak RSS of ``proc`` with its descendants, and of ``proc`` alone (what it holds, its workers aside)."""
    peak = own = 0.0
    while proc.poll() is None:
        peak = max(peak, tree_rss_mb(proc.pid))
        own = max(own, rss_mb(proc.pid))
        time.sleep(0.1)
    return peak, own


def measure_serve(league: Path) -> float:
    port = free_port()
    with running("league", "serve", str(league), "--port", str(port)) as serve:
        url = f"http://127.0.0.1:{port}/"
        wait_served(url)
        asyncio.run(readers(url, 4, 2.0))
        return tree_rss_mb(serve.pid)


def part_c(args: argparse.Namespace, tmp: Path) -> None:
    kinds = ("greedy", "random", "passive")
    authors = [(f"author{i:03d}", kinds[i % 3]) for i in range(args.authors)]
    league = league_file(tmp / "c", authors, SEED, placement=3)
    print(f"(c) memory: {args.authors} authors x {args.versions} versions, {args.per_version} matches after "
          f"each round of versions")
    rng = random.Random(SEED)
    for round_no in range(1, args.versions + 1):
        if round_no > 1:
            for name, _ in authors:
                new_version(league, name, rng.choice(kinds))
        run = arena("league", "run", str(league), "--jobs", "2", "--max-matches", str(args.per_version),
                    "--idle-exit", "-q")
        run_peak, run_own = peaks_while(run)
        serve_rss = measure_serve(league) if not args.run_only else 0.0
        with ResultStore(league / "results" / "results.sqlite", readonly=True) as store:
            stored = len(store)
        print(f"  round {round_no}: {round_no * args.authors} versions, {stored} matches stored: "
              f"run peak {run_peak:.0f} MB (with its workers; {run_own:.1f} MB itself)"
              + ("" if args.run_only else f", serve {serve_rss:.0f} MB"))


# -- (d) the page's memory as matches grow -----------------------------------------------

def peak_rss_mb(pid: int) -> float:
    """The peak RSS of ``pid`` so far (``VmHWM``), in MB."""
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024


def synthetic_league(where: Path, authors: int, versions: int) -> tuple[Path, list[list[str]]]:
    """A league of ``authors`` x ``versions`` registered versions: each round's version names."""
    from arena.league.versions import register_house

    league = league_file(where, [(f"author{i:03d}", "random") for i in range(authors)], SEED)
    config = load_league(league)
    with Register(league) as register:
        register_house(config, register)
    for _ in range(versions - 1):
        for i in range(authors):
            new_version(league, f"author{i:03d}", "random")
    with Register(league, readonly=True) as register:
        mine = sorted((v.author, v.number, v.name) for v in register.versions())
    rounds = [[name for _, number, name in mine if number == r] for r in range(1, versions + 1)]
    config.results.mkdir(parents=True, exist_ok=True)
    with ResultStore(config.results / "results.sqlite") as store:
        store.init_tournament(config.name, config.stored(), seed=config.seed,
                              bots=[n for names in rounds for n in names])
    return league, rounds


def synthetic_matches(store: ResultStore, rounds: list[list[str]], first: int, last: int, total: int,
                      hands: int) -> None:
    """Matches ``first`` to ``last - 1`` of ``total``: a table (3 rotations) of one round's versions."""
    from arena.tournament.results.database import StoredMatch as Match

    strength = {name: random.Random(name).gauss(0.0, 1.0) for names in rounds for name in names}
    for n in range(first, last):
        table, rotation = divmod(n, 3)
        rng = random.Random(f"{SEED}/{table}")
        names = rounds[min(len(rounds) - 1, n * len(rounds) // total)]
        seated = rng.sample(names, 3)
        seated = seated[rotation:] + seated[:rotation]
        scores = [[0] * 3 for _ in range(hands)]
        winners: list[int | None] = []
        for h in range(hands):
            luck = random.Random(f"{SEED}/{table}/{h}")      # the deal: the same in each rotation
            drawn = [luck.gauss(40.0, 25.0) - 15.0 * strength[b] + rng.gauss(0.0, 10.0) for b in seated]
            out = min(range(3), key=lambda s: drawn[s])
            scores[h] = [0 if s == out else max(5, int(drawn[s])) for s in range(3)]
            winners.append(out)
        totals = [sum(row[s] for row in scores) for s in range(3)]
        places = [1 + sum(t < totals[s] for t in totals) for s in range(3)]
        stamp = f"2026-01-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}+00:00"
        store.add_match(Match(match_id=f"L{table:06d}-r{rotation}", schedule_index=8 * table + rotation,
                              table=table, rotation=rotation, deal=0, seed=table, bots=seated, totals=totals,
                              places=places, forfeited=[False] * 3, hand_scores=scores, hand_winners=winners,
                              started_at=stamp, duration_seconds=0.1))


def measure_serve_peak(league: Path) -> tuple[float, float]:
    """Serve's peak RSS (MB) after its first ``/`` and 2 s of 4 readers; and how long that first ``/`` took."""
    import httpx

    port = free_port()
    with running("league", "serve", str(league), "--port", str(port)) as serve:
        url = f"http://127.0.0.1:{port}/"
        end = time.monotonic() + 600
        while True:
            try:
                start = time.monotonic()
                if httpx.get(url, timeout=600).status_code == 200:
                    first = time.monotonic() - start
                    break
            except httpx.HTTPError:
                if time.monotonic() > end:
                    raise SystemExit(f"the page at {url} did not answer") from None
                time.sleep(0.2)
        asyncio.run(readers(url, 4, 2.0))
        return peak_rss_mb(serve.pid), first


def part_d(args: argparse.Namespace, tmp: Path) -> None:
    counts = sorted(int(c) for c in args.counts.split(","))
    print(f"(d) the page's memory: {args.authors} authors x {args.versions} versions, {args.hands} hands a "
          f"match, {', '.join(map(str, counts))} matches stored; load {os.getloadavg()[0]:.1f}")
    league, rounds = synthetic_league(tmp / "d", args.authors, args.versions)
    done = 0
    for count in counts:
        with ResultStore(league / "results" / "results.sqlite") as store:
            synthetic_matches(store, rounds, done, count, counts[-1], args.hands)
        done = count
        peaks = [measure_serve_peak(league) for _ in range(args.repeats)]
        mbs = [p for p, _ in peaks]
        print(f"  {count:6d} matches stored: serve peak {statistics.median(mbs):.0f} MB [min {min(mbs):.0f} .. "
              f"max {max(mbs):.0f}], first / {statistics.median(s for _, s in peaks):.1f} s; "
              f"load {os.getloadavg()[0]:.1f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("a", "b", "c", "d"), default=None)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--before", type=int, default=120, help="(a) matches before the new version")
    parser.add_argument("--after", type=int, default=90, help="(a) the new version's matches")
    parser.add_argument("--full-rules", action="store_true",
                        help="(a) the default rules (7 contracts) instead of one short contract")
    parser.add_argument("--readers", type=int, default=50)
    parser.add_argument("--windows", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--authors", type=int, default=100)
    parser.add_argument("--versions", type=int, default=5)
    parser.add_argument("--per-version", type=int, default=150)
    parser.add_argument("--counts", default="1000,5000,20000", help="(d) matches stored at each measure")
    parser.add_argument("--hands", type=int, default=7, help="(d) hands a match")
    parser.add_argument("--repeats", type=int, default=2, help="(d) serve started this often at each count")
    parser.add_argument("--run-only", action="store_true", help="(c) the run's memory alone, not serve's")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="arena-league-bench-") as where:
        tmp = Path(where)
        for part, run in (("a", part_a), ("b", part_b), ("c", part_c), ("d", part_d)):
            if args.only in (None, part):
                run(args, tmp)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
