"""The Ray executor, on a real Ray (issue 12).

Every Ray run happens inside a private network namespace that the test makes
(tests/netns.py: unshare(2), loopback up): there Ray binds 127.0.0.1 and can reach
nothing else.  The tournament's files sit in a temporary directory, which
the Ray executor ships to the nodes (Ray's working_dir), so the bots run
from a copy of it, as on a real cluster.

- A local Ray (started by ``arena run --executor ray``, 2 CPUs in CI): a
  Ctrl-C stops it cleanly and kills every bot, the same command resumes, and
  the stored results equal those of ``--jobs 2`` on this machine, memory
  limit fault included; the bots' stderr logs come back to the results.
- Several nodes (``ray.cluster_utils.Cluster``, tests/ray_cluster.py): a node
  lost in mid-match has its match played again, a SIGKILLed arena resumes on
  what is left of the cluster, the results still equal ``--jobs 2``, and
  ``arena check`` runs on a node.

Each test's Ray keeps its files in a directory of its own (``RAY_TMPDIR``, the
``ray_tmp`` fixture), not the machine's /tmp/ray: a ``Cluster`` writes its
address there (``ray_current_cluster``), for any later ``ray.init()`` on the
machine to join, and tests (and other users of the machine) run side by side.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from test_tournament import board, cli, describe, match_rows, processes_with, wait_for_stored, wait_gone

from arena.tournament.results.database import ResultStore, StoredMatch

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent


def in_netns(argv: list[str]) -> list[str]:
    """``argv`` run in a new network namespace with only loopback, up (exec: same pid)."""
    return [sys.executable, str(HERE / "netns.py"), *argv]


@pytest.fixture
def ray_tmp() -> Iterator[Path]:
    """A Ray temporary directory for the test alone; short (under /tmp, not
    pytest's long ``tmp_path``): Ray's unix sockets live in it, and their
    paths have a limit of 107 bytes."""
    path = Path(tempfile.mkdtemp(prefix="arena-ray-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def netns_env(ray_tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("RAY_ADDRESS", None)
    env["RAY_TMPDIR"] = str(ray_tmp)
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH")]))
    return env


def tournament(tmp: Path, deals: int, hog: bool) -> Path:
    """Bots copied into ``tmp`` (shipped to Ray from there), tagged for ``wait_gone``."""
    bots = tmp / "bots"
    bots.mkdir()
    for name in ("greedy_bot.py", "random_bot.py"):
        shutil.copy(ROOT / "bots" / name, bots / name)
    for name in ("common.py", "memhog.py"):
        shutil.copy(HERE / "gamebots" / name, bots / name)
    (bots / "nice.py").write_text("import os, sys, common\n"
                                  "sys.stderr.write(f'niceness {os.getpriority(os.PRIO_PROCESS, 0)}\\n')\n"
                                  "sys.stderr.flush()\ncommon.run()\n")
    tag = f"env: {{ARENA_TEST_TAG: {json.dumps(str(tmp))}}}"
    python = json.dumps(sys.executable)
    hogs = f"""
  - name: memhog
    command: [{python}, bots/memhog.py]
    {tag}
    limits: {{memory_mb: 200}}
  - name: nice
    command: [{python}, bots/nice.py]
    {tag}""" if hog else """
  - name: greedy-builtin
    builtin: greedy
  - name: random-builtin
    builtin: random"""
    path = tmp / "t.yaml"
    path.write_text(f"""
name: on-ray
bots:
  - name: greedy
    command: [{python}, bots/greedy_bot.py]
    {tag}
  - name: random
    command: [{python}, bots/random_bot.py]
    {tag}{hogs}
players: 3
rules:
  contracts: [2S3, S3+R4, 2R4]
time: {{startup: 30, per_move: 10}}
deals: {deals}
seed: 5
""")
    return path


def stored(out: Path) -> list[StoredMatch]:
    store = ResultStore(out / "results.sqlite", create=False)
    try:
        return sorted(store.matches(), key=lambda m: m.match_id)
    finally:
        store.close()


def fault_kinds(out: Path) -> list[tuple[str, int, str]]:
    return [(m.match_id, f["seat"], f["kind"]) for m in stored(out) for f in m.faults]


def stderr_logs(out: Path) -> list[str]:
    return [p for m in stored(out) for p in m.stderr_logs if p]


# Matches of ``tournament(deals=1, hog=True)``: 4 tables of 3 bots, 3 rotations each.
MATCHES = 12


def _stop_a_ray_run(command: list[str], out: Path, tmp_path: Path, ray_tmp: Path, signum: int,
                    at_least: int) -> int:
    """Start ``command``, send ``signum`` to the arena once ``at_least`` matches
    are stored, check it stopped as every command does; how many are stored.

    A run that has at most one match left to play (``at_least`` is all of
    them) may play it before the signal comes: then it must have finished
    as every run does, with every match stored, or stopped as above."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=netns_env(ray_tmp))
    count = wait_for_stored(out / "results.sqlite", proc, at_least)
    finished = proc.poll() is not None
    if not finished:
        os.kill(proc.pid, signum)  # the pid is arena's: netns.py execs it
    output = proc.communicate(timeout=120)[0].decode()
    assert "Traceback" not in output
    left = wait_gone(tmp_path)
    assert left == [], f"bots outlived a stopped Ray run:\n{describe(left)}"
    if at_least >= MATCHES and proc.returncode == 0:
        assert len(stored(out)) == MATCHES, output          # done before the signal: a finished run
        return MATCHES
    assert not finished, output
    status, word = (130, "interrupted") if signum == signal.SIGINT else (143, "terminated (SIGTERM)")
    assert proc.returncode == status, output    # interrupted (or terminated), as every command
    assert f"{word}: the matches already finished are stored" in output
    assert at_least <= count < MATCHES or count == at_least == MATCHES    # stopped with matches to play
    return len(stored(out))


@pytest.mark.long(35)
def test_local_ray_ctrl_c_resume_and_results_equal_jobs_2(tmp_path: Path, ray_tmp: Path) -> None:
    path = tournament(tmp_path, deals=1, hog=True)
    local = tmp_path / "local"
    assert cli("run", str(path), "--out", str(local), "--jobs", "2").exit_code == 0

    out = tmp_path / "ray"
    command = in_netns([sys.executable, "-m", "arena", "run", str(path), "--executor", "ray", "--jobs", "2",
                        "--out", str(out)])
    kept = _stop_a_ray_run(command, out, tmp_path, ray_tmp, signal.SIGINT, 2)
    # Resumed, then a SIGTERM once it has played a match (ray.init puts in a
    # SIGTERM handler of its own: the arena's must be back); when the Ctrl-C
    # left one match or none to play, the resumed run may finish first.
    _stop_a_ray_run(command, out, tmp_path, ray_tmp, signal.SIGTERM, min(kept + 1, MATCHES))

    resumed = subprocess.run(command, capture_output=True, text=True, env=netns_env(ray_tmp), timeout=300)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "resuming" in resumed.stderr
    assert match_rows(out) == match_rows(local)
    assert board(out) == board(local)
    hogged = fault_kinds(out)
    assert hogged == fault_kinds(local) and {k for _, _, k in hogged} == {"crash"}  # the memory limit held
    # Every bot seat has a log path; a bot that wrote nothing has no file.
    logs = [p for p in stderr_logs(out) if os.path.exists(p)]
    assert logs and all(p.startswith(str(out / "logs") + "/") for p in stderr_logs(out))
    # bots run at the arena's niceness, not at the 15 Ray gives its workers (time limits are wall-clock)
    # (a bot reused from the pool wrote its line in the log of the match that started it)
    nice = {Path(p).read_text() for p in logs if p.endswith("-nice.stderr.log")} - {""}
    assert nice == {f"niceness {os.getpriority(os.PRIO_PROCESS, 0)}\n"}
    assert wait_gone(tmp_path) == []


@pytest.mark.long(35)
def test_cluster_node_lost_head_killed_and_check_on_a_node(tmp_path: Path, ray_tmp: Path) -> None:
    # Enough matches that the node is found and removed, and the head killed,
    # well before the last one is stored, even on a quiet machine.
    path = tournament(tmp_path, deals=5, hog=False)
    local = tmp_path / "local"
    assert cli("run", str(path), "--out", str(local), "--jobs", "2").exit_code == 0
    total = len({row[0] for row in match_rows(local)})   # rows are seats; row[0] the match id

    out, report_path = tmp_path / "ray", tmp_path / "report.json"
    scenario = subprocess.run(in_netns([sys.executable, str(HERE / "ray_cluster.py"), str(path), str(out),
                                        str(report_path)]),
                              capture_output=True, text=True, env=netns_env(ray_tmp), timeout=600)
    assert report_path.exists(), scenario.stdout[-3000:] + scenario.stderr[-3000:]
    report = json.loads(report_path.read_text())
    first = report["first_run_stderr"]
    assert report["node_found"], first
    assert "playing the match again" in first, first     # a lost node's match is re-run...
    assert report["first_run_exit"] is None, first       # ...and the run goes on
    assert report["stored_before_node_lost"] < report["stored_after_head_killed"] < total, report
    assert report["resume_exit"] == 0, report["resume_output"]
    assert "resuming" in report["resume_output"]
    assert match_rows(out) == match_rows(local)
    assert board(out) == board(local)
    assert wait_gone(tmp_path) == []
    assert report["check_exit"] == 0, report["check_output"]
    assert "on Ray node" in report["check_output"] and "result: PASS" in report["check_output"]


def test_a_head_nothing_answers_at_is_one_line_at_once(tmp_path: Path, ray_tmp: Path) -> None:
    """Given it, ray.init retried a dead head for minutes on end."""
    env = {**netns_env(ray_tmp), "RAY_ADDRESS": "127.0.0.1:1"}
    run = [sys.executable, "-m", "arena", "run", str(two_builtins(tmp_path)), "--executor", "ray",
           "--out", str(tmp_path / "out")]
    for given, named in (([], " (RAY_ADDRESS)"), (["--address", "127.0.0.1:1"], "")):
        done = subprocess.run(in_netns(run + given), capture_output=True, text=True, env=env, timeout=240)
        assert done.returncode == 1, done.stderr
        assert done.stderr.strip().splitlines()[-1] == (
            f"Error: cannot join the Ray cluster at 127.0.0.1:1{named}: nothing answers there (Connection refused)"
        ), done.stderr
        assert "Traceback" not in done.stderr
        assert "2 matches (" not in done.stderr     # issue 33: no header, no estimate, before the failure
        assert not (tmp_path / "out").exists()


@pytest.mark.long(11)
def test_a_head_that_refuses_this_machines_token_is_one_line_before_the_header(tmp_path: Path,
                                                                            ray_tmp: Path) -> None:
    """Issue 33: the head's port answered, and ray.init found the token
    refused 25 s later, after the header and its estimate."""
    out, report_path = tmp_path / "out", tmp_path / "report.json"
    done = subprocess.run(in_netns([sys.executable, str(HERE / "ray_token.py"), str(two_builtins(tmp_path)),
                                    str(out), str(report_path)]),
                          capture_output=True, text=True, env=netns_env(ray_tmp), timeout=300)
    assert report_path.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    run = json.loads(report_path.read_text())
    assert run["exit"] == 1, run["stderr"]
    assert run["stderr"].strip().splitlines() == [      # the one line: no header, nothing of Ray's
        f"Error: cannot join the Ray cluster at {run['address']}: its token authentication refused this machine's "
        f"token, or this machine has none: give it the cluster's (RAY_AUTH_MODE=token with RAY_AUTH_TOKEN, or "
        f"~/.ray/auth_token; docs/CLUSTER.md)"], run["stderr"]
    assert not run["out_exists"]


def test_from_a_machine_that_is_no_node_one_line_before_the_header(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The head's port answers (a stand-in), and no Ray node runs here."""
    from arena.tournament.executors import rayjoin

    monkeypatch.setattr(rayjoin, "_check_reachable", lambda address, named="": None)
    monkeypatch.setattr(rayjoin, "_raylet_here", lambda: False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    out = tmp_path / "out"
    result = cli("run", str(two_builtins(tmp_path)), "--address", "10.0.0.1:6379", "--out", str(out))
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "Error: cannot join the Ray cluster at 10.0.0.1:6379 from this machine: no Ray node runs here, and arena "
        "runs on a node of the cluster: run it on the head, or run `ray start --address 10.0.0.1:6379` here "
        "first (docs/CLUSTER.md)"], result.output
    assert not out.exists()


@pytest.mark.long(15)
def test_a_sigterm_while_ray_starts_ends_the_run_as_any_sigterm(tmp_path: Path, ray_tmp: Path) -> None:
    # Ray's handler is in place while ray.init runs: here for as long as it
    # retries the head RAY_ADDRESS names, which takes connections and never answers
    # Ray's client gives up on a head that never answers after 1 s, not 40 (RAY_py_gcs_connect_timeout_s),
    # and the token check's child after 2 s, not 60: those waits, before and in ray.init, are not what
    # this test is about, and were 80 of its 86 s (the SIGTERM takes effect once ray.init returns)
    env = {**netns_env(ray_tmp), "RAY_ADDRESS": "127.0.0.1:6390", "RAY_py_gcs_connect_timeout_s": "1"}
    arena = "import arena.tournament.executors.rayjoin as j; j.TOKEN_SECONDS = 2.0\nfrom arena.__main__ import run; run()"
    command = [sys.executable, str(HERE / "netns.py"), "--listen", "6390", sys.executable, "-c", arena, "run",
               str(two_builtins(tmp_path)), "--executor", "ray", "--out", str(tmp_path / "out")]
    log = tmp_path / "output"
    # Ray retries the head: looked for every 0.1 s, as every 0.01 s took 12 CPU-s of /proc reads
    status = sigterm_when(command, env, log, lambda pid: connected(pid, 6390), every=0.1)
    output = log.read_text()
    assert status == 143, output
    assert "terminated (SIGTERM)" in output and "Traceback" not in output


def connected(pid: int, port: int) -> bool:
    """Whether process ``pid`` itself (not a child) holds a TCP connection to
    ``port`` (its network namespace's /proc/PID/net, its own descriptors)."""
    try:
        mine = {os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
        rows = [line.split() for table in ("tcp", "tcp6")
                for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]]
    except OSError:
        return False
    return any(int(row[2].rsplit(":", 1)[1], 16) == port and f"socket:[{row[9]}]" in mine for row in rows)


def ray_processes(ray_tmp: Path, but: int = 0) -> list[int]:
    """Live processes (but ``but``) started with RAY_TMPDIR=ray_tmp: the
    Ray a run started, its GCS, raylet, monitors and workers, wherever they
    were reparented to."""
    return processes_with("RAY_TMPDIR", str(ray_tmp), but=(but, os.getpid()))


def assert_no_ray_left(ray_tmp: Path) -> None:
    """Once the run has exited: no process of its Ray is left (a minute for
    those on their way out; times nothing); any left are killed."""
    deadline = time.monotonic() + 60
    while (left := ray_processes(ray_tmp)) and time.monotonic() < deadline:
        time.sleep(0.1)
    try:
        assert left == [], f"Ray processes outlived the run:\n{describe(left)}"
    finally:
        for pid in left:
            os.kill(pid, signal.SIGKILL)


def sigterm_when(command: list[str], env: dict[str, str], log: Path, ready: Callable[[int], bool],
                 every: float = 0.01) -> int:
    """Run ``command`` with its output in ``log``; once ``ready(pid)`` (asked
    every ``every`` seconds), SIGTERM it (the pid is arena's: netns.py execs
    it).  Its exit status."""
    with log.open("wb") as sink:
        proc = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + 240   # bounds a run that never gets there; times nothing
        while not ready(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(every)
        assert proc.poll() is None and ready(proc.pid), log.read_text()
        os.kill(proc.pid, signal.SIGTERM)
        return proc.wait(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _named(pids: list[int], name: str) -> list[int]:
    found = []
    for pid in pids:
        try:
            if (Path("/proc") / str(pid) / "comm").read_text().strip() == name:
                found.append(pid)
        except OSError:
            continue
    return found


@pytest.mark.long(20)
@pytest.mark.parametrize("daemon", ["gcs_server", "raylet"])
def test_a_sigterm_while_a_local_ray_starts_leaves_none_of_it(tmp_path: Path, ray_tmp: Path, daemon: str) -> None:
    """No --address: the run starts a Ray of its own.  A SIGTERM once its
    first daemon (then its second) is up, ray.init still under way, ends the
    run as any SIGTERM, and nothing of that Ray is left running (Ray starts
    its daemons to die with the process that started them, and its atexit
    ends the rest)."""
    log = tmp_path / "output"
    command = in_netns([sys.executable, "-m", "arena", "run", str(two_builtins(tmp_path)), "--executor", "ray",
                        "--out", str(tmp_path / "out")])
    status = sigterm_when(command, netns_env(ray_tmp), log,
                          lambda pid: bool(_named(ray_processes(ray_tmp, pid), daemon)))
    output = log.read_text()
    assert status == 143, output
    out = tmp_path / "out"
    assert output.strip().splitlines()[-1] == (
        "Error: terminated (SIGTERM): no match had finished, so nothing was stored; "
        "run the same command again to start"), output
    assert "Traceback" not in output
    assert not out.exists()     # the run made it, stored nothing in it: it leaves no empty folder
    assert_no_ray_left(ray_tmp)


def two_builtins(tmp: Path) -> Path:
    """A tournament of two matches between built-in bots: nothing to ship."""
    path = tmp / "t.yaml"
    path.write_text("name: own\nbots:\n  - {name: g, builtin: greedy}\n  - {name: r, builtin: random}\n"
                    "players: 2\ndeals: 1\nseed: 3\n")
    return path


def test_relocation_moves_every_path_under_the_shipped_directory_and_back(tmp_path: Path) -> None:
    from arena.match import MatchSpec, SeatSpec
    from arena.process import BotSpec, SandboxPolicy
    from arena.tournament.executors.ray import Relocation

    head, here = "/srv/t", str(tmp_path)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "bot").write_text("")
    box = SandboxPolicy("bwrap", read=("/srv/t/data", "/usr/share/dict"), write=("/srv/t/out",),
                        hide=("/srv/t/t.yaml", "/srv/tother"), scratch="/srv/t/res/scratch/a")
    bot = BotSpec(["/srv/t/bin/bot", "/srv/t/venv/bin/python", "x.py"], cwd="/srv/t/bots/a", sandbox=box)
    spec = MatchSpec("m", (SeatSpec("a", bot=bot), SeatSpec.builtin("greedy")), log_dir="/srv/t/res/logs")
    moved = Relocation(head, here).spec(spec)
    b = moved.seats[0].bot
    assert b is not None and moved.seats[1] == spec.seats[1]
    # a shipped program moves; one that was not shipped (a venv's python) stays, as do relative arguments
    assert b.argv == (f"{here}/bin/bot", "/srv/t/venv/bin/python", "x.py")
    assert b.cwd == f"{here}/bots/a" and moved.log_dir == f"{here}/res/logs"
    assert b.sandbox.read == (f"{here}/data", "/usr/share/dict") and b.sandbox.write == (f"{here}/out",)
    assert b.sandbox.hide == (f"{here}/t.yaml", "/srv/tother")  # a sibling with the same prefix is not inside
    assert b.sandbox.scratch == f"{here}/res/scratch/a" and b.sandbox.mode == "bwrap"
    assert Relocation(head, here).back(f"{here}/res/logs/m-seat0-a.stderr.log") == "/srv/t/res/logs/m-seat0-a.stderr.log"


def test_an_actor_plays_from_its_copy_and_sends_the_logs_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """MatchActor without Ray: a spec made on the arena's paths is played from
    the copy in the actor's working directory, logs come back by value."""
    from arena.match import MatchResult, MatchSpec, SeatSpec
    from arena.process import BotSpec
    from arena.tournament.executors.ray import MatchActor, Played

    head, copy = tmp_path / "head", tmp_path / "copy"
    (copy / "bots").mkdir(parents=True)
    shutil.copy(HERE / "gamebots" / "common.py", copy / "bots")
    (copy / "bots" / "talker.py").write_text("import sys, common\nsys.stderr.write('hello from the copy\\n')\n"
                                             "sys.stderr.flush()\ncommon.run()\n")
    bot = BotSpec([sys.executable, "bots/talker.py"], cwd=str(head))
    spec = MatchSpec("m1", (SeatSpec("talker", bot=bot), SeatSpec.builtin("greedy")),
                     rules={"contracts": ["2S3"]}, seed=3, log_dir=str(head / "out" / "logs"))
    monkeypatch.chdir(copy)
    actor = MatchActor(str(head))
    try:
        played = actor.play(spec)
    finally:
        actor.close()
    assert isinstance(played, Played) and isinstance(played.outcome, MatchResult)
    assert not played.outcome.faults
    log = str(head / "out" / "logs" / "m1-seat0-talker.stderr.log")
    assert played.outcome.stderr_logs == (log, None)
    assert played.logs == ((log, b"hello from the copy\n"),)
    assert not head.exists()  # nothing was written on the arena's paths on the node


def test_an_actor_sends_back_what_bots_wrote_after_their_match_when_it_closes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pooled bot quits when the actor's worker closes, long after its
    match's outcome went back: what it writes then reaches the arena too."""
    from arena.match import MatchResult, MatchSpec, SeatSpec
    from arena.process import BotSpec
    from arena.tournament.executors.ray import MatchActor, Played

    head, copy = tmp_path / "head", tmp_path / "copy"
    (copy / "bots").mkdir(parents=True)
    for name in ("common.py", "late_stderr.py"):
        shutil.copy(HERE / "gamebots" / name, copy / "bots")
    bot = BotSpec([sys.executable, "bots/late_stderr.py", "--on-quit"], cwd=str(head))
    specs = [MatchSpec(f"m{i}", (SeatSpec("late", bot=bot), SeatSpec.builtin("greedy")),
                       rules={"contracts": ["2S3"]}, seed=i, log_dir=str(head / "out" / "logs")) for i in (1, 2)]
    monkeypatch.chdir(copy)
    actor = MatchActor(str(head))
    try:
        played = [actor.play(spec) for spec in specs]
    finally:
        late = actor.close()
    assert all(isinstance(p, Played) and isinstance(p.outcome, MatchResult) and p.logs == () for p in played)
    last = str(head / "out" / "logs" / "m2-seat0-late.stderr.log")      # the process played both
    assert [p.outcome.stderr_logs[0] for p in played] == [last.replace("m2-", "m1-"), last]
    assert late == ((last, b"quitting now\n"),)
    assert not head.exists()  # nothing was written on the arena's paths on the node


@pytest.mark.long(13)
def test_a_node_that_cannot_sandbox_refuses_to_play(monkeypatch: pytest.MonkeyPatch) -> None:
    from arena.match import MatchSpec, SeatSpec
    from arena.process import BotSpec, SandboxPolicy
    from arena.process.confine import sandbox
    from arena.tournament.executors.ray import MatchActor, Refused

    def unavailable(mode: str) -> object:
        raise sandbox.SandboxUnavailable("sandbox 'bwrap' cannot run here: no bwrap found")

    monkeypatch.setattr(sandbox, "resolve", unavailable)
    bot = BotSpec([sys.executable, "-c", "pass"], sandbox=SandboxPolicy("bwrap"))
    actor = MatchActor(None)
    try:
        refused = actor.play(MatchSpec("m", (SeatSpec("b", bot=bot), SeatSpec.builtin("greedy"))))
    finally:
        actor.close()
    assert isinstance(refused, Refused) and "cannot run here: no bwrap found" in refused.reason


def test_a_league_s_later_versions_are_checked_on_every_node_before_their_first_match(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With a lookahead (a league), matches are read as actors come free: a
    version handed in mid-league is started on every node before its first
    match is handed on, once; a match of checked bots alone is not held up."""
    from arena.match import MatchSpec, SeatSpec
    from arena.process import BotSpec
    from arena.tournament.executors import ray as ray_executor

    checked: list[list[str]] = []
    monkeypatch.setattr(ray_executor, "check_nodes", lambda specs, root, env, seconds: checked.append(
        sorted({seat.name for spec in specs for seat in spec.seats if seat.bot is not None})))
    executor = object.__new__(ray_executor.RayExecutor)         # no Ray: only the reading of matches
    executor.shipment, executor.lookahead, executor._checked = None, 1, None
    bot = BotSpec([sys.executable, "-c", "pass"])

    def table(*names: str) -> MatchSpec:
        return MatchSpec(f"m-{'-'.join(names)}", tuple(SeatSpec(n, bot=bot) for n in names))

    executor._check([table("a.v1", "b.v1")])                          # the first table
    read = executor._checked_as_read(iter([table("a.v1", "b.v1"), table("a.v1", "c.v1"), table("c.v1", "b.v1")]))
    assert next(read).match_id == "m-a.v1-b.v1" and checked == [["a.v1", "b.v1"]]
    assert next(read).match_id == "m-a.v1-c.v1" and checked[1:] == [["a.v1", "c.v1"]]   # c.v1, new: checked first
    assert next(read).match_id == "m-c.v1-b.v1" and len(checked) == 2
    # Built-in players alone: the nodes are checked all the same (their arena, Ray and Python versions).
    builtins = object.__new__(ray_executor.RayExecutor)
    builtins.shipment, builtins.lookahead, builtins._checked = None, None, None
    builtins._check([MatchSpec("m-g-r", (SeatSpec.builtin("greedy"), SeatSpec.builtin("random")))])
    assert checked[2:] == [[]]


def test_without_ray_installed_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    path = tournament(tmp_path, deals=1, hog=False)
    result = cli("run", str(path), "--out", str(tmp_path / "out"), "--executor", "ray")
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == "Error: the ray executor needs Ray on this machine: pip install 'arena[ray]'"


def test_a_ctrl_c_while_ray_starts_leaves_later_sigterms_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    """connect() puts back the arena's SIGTERM handler in place of the one
    ray.init installs.  After a Ctrl-C inside ray.init the arena's handlers
    ignore every later signal while the command cleans up; connect put its
    SIGTERM handler back as it was before init, so a SIGTERM then (a second
    signal, a CI timeout) cut the clean-up short.  A stand-in for Ray: this
    is connect's own doing, and needs no cluster."""
    import threading

    from arena.cli.common import stop_signals
    from arena.tournament.executors import rayjoin as ray_join

    class StartingRay:
        def is_initialized(self) -> bool:
            return False

        def init(self, **kwargs: object) -> None:
            signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(signum))    # as ray.init does
            signal.pthread_kill(threading.get_ident(), signal.SIGINT)                # a Ctrl-C meanwhile

        def shutdown(self) -> None:
            pass

    monkeypatch.setattr(ray_join, "import_ray", StartingRay)
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        with pytest.raises(KeyboardInterrupt):
            with stop_signals():
                try:
                    ray_join.connect("auto")
                finally:
                    ignoring = signal.getsignal(signal.SIGINT)
                    assert signal.getsignal(signal.SIGTERM) is ignoring
                    signal.pthread_kill(threading.get_ident(), signal.SIGTERM)   # during the clean-up: ignored
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def test_a_ray_that_times_out_starting_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """On an overloaded machine ray.init raised a plain Exception ("The
    current node timed out during startup..."), and a full suite run showed
    its traceback to the user.  A stand-in for Ray, as above."""
    from arena.tournament.executors import rayjoin as ray_join
    from arena.tournament.executors.local import WorkerError

    class SlowRay:
        def is_initialized(self) -> bool:
            return False

        def init(self, **kwargs: object) -> None:
            raise Exception("The current node timed out during startup. This could happen because some of "
                            "the raylet failed to startup or the GCS has become overloaded.")

        def shutdown(self) -> None:
            pass

    monkeypatch.setattr(ray_join, "import_ray", SlowRay)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with pytest.raises(WorkerError) as caught:
        ray_join.connect(None)
    assert str(caught.value) == ("Ray could not start here: The current node timed out during startup. This "
                                 "could happen because some of the raylet failed to startup or the GCS has "
                                 "become overloaded.")


def test_a_half_started_ray_leaves_no_orphan_of_its_daemons(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A Ray of our own interrupted as it starts is ended, all of it, even
    a daemon's child whose parent ``ray.shutdown`` killed outright (a
    raylet's agent, seen still running a minute after such a run): while Ray
    starts, connect() adopts such orphans, and ends them with the rest.  A
    stand-in for Ray, whose 'raylet' starts an 'agent' that never looks at
    its parent."""
    from arena.tournament.executors import rayjoin

    agent_file = tmp_path / "agent"
    raylet = (f"import os, subprocess, sys, time\n"
              f"agent = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
              f"open({str(agent_file)!r} + '.new', 'w').write(str(agent.pid))\n"
              f"os.replace({str(agent_file)!r} + '.new', {str(agent_file)!r})\n"
              f"time.sleep(600)\n")

    class StartingRay:
        started: subprocess.Popen[bytes] | None = None

        def is_initialized(self) -> bool:
            return False

        def init(self, **kwargs: object) -> None:
            StartingRay.started = subprocess.Popen([sys.executable, "-c", raylet])
            deadline = time.monotonic() + 60     # bounds a wait for the stand-in; times nothing
            while not agent_file.exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            raise KeyboardInterrupt                  # a Ctrl-C while Ray starts

        def shutdown(self) -> None:                  # as Ray's may: its raylet killed outright
            if StartingRay.started is not None:
                StartingRay.started.kill()
                StartingRay.started.wait()

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(rayjoin, "import_ray", StartingRay)
    with pytest.raises(KeyboardInterrupt):
        rayjoin.connect(None)                        # no address: a Ray of our own
    agent = int(agent_file.read_text())
    try:
        state = Path(f"/proc/{agent}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        state = "gone"
    if state != "gone":
        os.kill(agent, signal.SIGKILL)
    assert state == "gone", f"the orphaned 'agent' {agent} outlived the half-started Ray (state {state})"


def test_a_half_started_ray_is_ended_newest_process_first(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A half-started Ray's processes are ended newest first, each given its
    SIGTERM once those started after it have gone: a raylet whose GCS was
    ended before it waited 30 s or more for it, and so did the run.  Stand-ins:
    the older ignores a SIGTERM while the newer runs, and says that it ended
    by its SIGTERM; ended in the other order it would be SIGKILLed after its
    grace, and say nothing."""
    from arena.tournament.executors import rayjoin

    monkeypatch.setattr(rayjoin, "STOP_SECONDS", 20.0)    # ample for a loaded machine; the wrong order waits it out
    said, newer_pid, ready = tmp_path / "older-ended", tmp_path / "newer-pid", tmp_path / "older-ready"
    older = subprocess.Popen([sys.executable, "-c", (
        "import os, signal, sys, time\n"
        "def term(signum, frame):\n"
        f"    newer = int(open({str(newer_pid)!r}).read())\n"
        "    if not os.path.exists(f'/proc/{newer}') or open(f'/proc/{newer}/stat').read().split()[2] == 'Z':\n"
        f"        open({str(said)!r}, 'w').write('by SIGTERM')\n"
        "        sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, term)\n"
        f"open({str(ready)!r}, 'w').close()\n"
        "while True: time.sleep(0.05)\n")])
    deadline = time.monotonic() + 120   # its handler in place (a loaded machine starts Python slowly); times nothing
    while not ready.exists() and older.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert ready.exists(), "the older stand-in did not start"
    newer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    newer_pid.write_text(str(newer.pid))
    try:
        rayjoin._stop({older.pid, newer.pid})
    finally:
        for proc in (older, newer):
            if proc.poll() is None:
                proc.kill()
    assert said.exists(), "the older process was ended before the newer one"


@pytest.mark.long(55)
def test_on_a_ray_node_holding_the_files_a_bot_sees_only_the_allow_list(visible_dir: Path, ray_tmp: Path) -> None:
    """Issue 30: on a node that holds the tournament's files (this machine),
    a bot read the seed in the tournament file and in results.sqlite, and
    another bot's files, at their original paths: the node hid only their
    copies.  A node builds the bot's sandbox from the same allow-list as a
    local worker (its copy of the bot's folder, and nothing else), so the
    probe of tests/test_sandbox_allowlist.py finds nothing, there (the
    original paths) nor in the node's copy (the same paths relative to the
    bot's folder)."""
    from test_sandbox_allowlist import PROBES, check_report, layout, reports

    where = layout(visible_dir)
    command = in_netns([sys.executable, "-m", "arena", "run", str(where.tfile), "--executor", "ray", "--jobs", "1"])
    done = subprocess.run(command, capture_output=True, text=True, env=netns_env(ray_tmp), timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    found = reports(where.out)
    assert set(found) == set(PROBES), found.keys()
    for name in PROBES:
        assert found[name]["cwd"] != str(where.subs / ("" if name == "whole" else name)).rstrip("/")  # the copy
        check_report(found[name], where)


def _joining_head(monkeypatch: pytest.MonkeyPatch, ray: type, node_here: bool) -> str:
    """The one line of joining a head at 10.0.0.1:6379 (its port answers)
    with ``ray`` standing in for Ray, from a machine that is a node of a
    cluster or not."""
    from arena.tournament.executors import rayjoin as ray_join
    from arena.tournament.executors.local import WorkerError

    monkeypatch.setattr(ray_join, "import_ray", ray)
    monkeypatch.setattr(ray_join, "_check_reachable", lambda address, named="": None)
    monkeypatch.setattr(ray_join, "_raylet_here", lambda: node_here)
    monkeypatch.setattr(ray_join, "_check_token", lambda address, named, bootstrap: None)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with pytest.raises(WorkerError) as caught:
        ray_join.connect("10.0.0.1:6379")
    return str(caught.value)


def test_a_cluster_that_refuses_this_machines_token_is_named_as_such(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33: a head started with token authentication (a token left in
    ~/.ray/auth_token turns it on) refused the arena with Ray's "Failed to
    connect ..." only.  A stand-in for Ray raising what Ray raises."""

    class AuthenticationError(Exception):
        pass

    class TokenRay:
        def is_initialized(self) -> bool:
            return False

        def init(self, **kwargs: object) -> None:
            try:
                raise AuthenticationError("RPC error: InvalidAuthToken: Authentication token is missing or incorrect.")
            except AuthenticationError as exc:
                raise RuntimeError("Failed to connect to GCS at address 10.0.0.1:6379 within 5 seconds.") from exc

        def shutdown(self) -> None:
            pass

    # a node of the cluster (else refused before joining: whether another
    # test's raylet runs on this machine meanwhile must not decide it)
    assert _joining_head(monkeypatch, TokenRay, node_here=True) == (
        "cannot join the Ray cluster at 10.0.0.1:6379: its token authentication refused this machine's token, or "
        "this machine has none: give it the cluster's (RAY_AUTH_MODE=token with RAY_AUTH_TOKEN, or "
        "~/.ray/auth_token; docs/CLUSTER.md)")


def test_joining_from_a_machine_that_is_no_node_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33: a driver on a machine with no Ray node got Ray's 84-line
    traceback (the files' upload), or its core's fatal log."""

    class NoRayYet:
        """This process has joined no Ray (a Ray an earlier test of this
        worker joined would make connect return at once), and is never
        asked to: the refusal comes first."""

        def is_initialized(self) -> bool:
            return False

        def init(self, **kwargs: object) -> None:
            raise AssertionError("ray.init called from a machine that is no node")

    assert _joining_head(monkeypatch, NoRayYet, node_here=False) == (
        "cannot join the Ray cluster at 10.0.0.1:6379 from this machine: no Ray node runs here, and arena runs on a "
        "node of the cluster: run it on the head, or run `ray start --address 10.0.0.1:6379` here first "
        "(docs/CLUSTER.md)")


def test_the_head_is_lost_once_its_port_has_been_silent_for_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """HeadWatch without Ray: a port that refuses (nothing listens) is not
    yet a lost head; silent for HEAD_LOST_SECONDS (a clock of the test's),
    it is, named; an answer in between starts the count again."""
    import socket

    from arena.tournament.executors import rayjoin
    from arena.tournament.executors.local import WorkerError

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]      # nothing listens there once closed
    address, now = f"127.0.0.1:{port}", [0.0]
    watch = rayjoin.HeadWatch(address, clock=lambda: now[0])

    def silent_for(seconds: int, start: float) -> None:
        for second in range(seconds):
            now[0] = start + second
            watch.check()

    silent_for(int(rayjoin.HEAD_LOST_SECONDS), 0.0)      # silent since 0, up to 4: not yet
    with socket.create_server(("127.0.0.1", port)):
        now[0] = 5.0
        watch.check()                                   # it answers: the count starts again
    silent_for(int(rayjoin.HEAD_LOST_SECONDS), 6.0)      # silent since 6, up to 10: not yet
    now[0] = 11.0
    with pytest.raises(WorkerError) as lost:
        watch.check()
    assert str(lost.value).startswith(f"lost the Ray cluster's head at {address}: nothing has answered there for "
                                      f"5 s (Connection refused); the matches already finished are stored")


def test_a_head_that_does_not_answer_at_all_is_given_longer_than_one_that_refuses(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A head whose port refuses connections has lost its GCS; one that does
    not answer at all may be behind a network that comes back, within Ray's
    own 60 s: it is lost only after HEAD_SILENT_SECONDS (a clock of the test's)."""
    from arena.tournament.executors import rayjoin
    from arena.tournament.executors.local import WorkerError

    monkeypatch.setattr(rayjoin, "_unanswered", lambda address, seconds: TimeoutError("timed out"))
    now = [0.0]
    watch = rayjoin.HeadWatch("10.0.0.1:6379", clock=lambda: now[0])
    for second in range(int(rayjoin.HEAD_SILENT_SECONDS)):
        now[0] = float(second)
        watch.check()                                   # silent since 0, up to 29: not yet
    now[0] = rayjoin.HEAD_SILENT_SECONDS
    with pytest.raises(WorkerError, match=r"at 10\.0\.0\.1:6379: nothing has answered there for 30 s \(timed out\)"):
        watch.check()


@pytest.mark.long(33)
def test_without_an_address_a_ray_of_its_own_not_the_last_cluster_here_and_no_token_file_at_home(
        tmp_path: Path, ray_tmp: Path) -> None:
    """Two things a run without an address does with the Ray it starts, seen
    in one run (each start of a Ray costs about 4 CPU-s; issue 31):

    - it starts a Ray of its own, and does not join the cluster a Cluster
      (or `ray start`) last started here left for ray.init() to join: here
      the head of one long gone (the same as one in another network
      namespace, as a test beside this one has: Ray retries it for ever);
    - Ray starts a local Ray with token authentication and writes its token
      to ~/.ray/auth_token, which then turns token authentication on for any
      later 'ray start --head' on the machine (issue 33: its workers could
      not join).  arena's own Ray runs with a token of the run's instead: the
      run completes, and the home folder stays empty."""
    (ray_tmp / "ray").mkdir()
    (ray_tmp / "ray" / "ray_current_cluster").write_text("127.0.0.1:1\n")
    home = tmp_path / "home"
    home.mkdir()
    env = {**netns_env(ray_tmp), "HOME": str(home)}
    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        env.pop(name, None)
    out = tmp_path / "out"
    command = in_netns([sys.executable, "-m", "arena", "run", str(two_builtins(tmp_path)), "--executor", "ray",
                        "--out", str(out)])
    # the timeout bounds a hung run (a Ray joining the dead head), it times nothing
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "127.0.0.1:1" not in done.stderr
    assert len(stored(out)) == 2
    assert list(home.rglob("*")) == [], list(home.rglob("*"))
