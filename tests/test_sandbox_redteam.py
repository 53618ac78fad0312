"""Red-team findings against the bubblewrap sandbox (docs/SECURITY.md).

Every test here starts real hostile bots (tests/hostile/) under ``arena run``
or ``arena play`` with ``sandbox: bwrap`` and checks what they could do.  The
``xfail(strict=True)`` ones are weaknesses of the current code: each fails
today and must pass once the weakness is fixed (then drop the mark).  The
reason of each mark names the fix.

Some findings only held when the arena runs as root (as on the machines that
run CI): inside the sandbox the bot was uid 0 *of the host* (bwrap maps 0 to
0), without capabilities, which still made it the owner of every root-owned
file.  Bots now run as nobody then (uid 65534); those tests run under root.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from test_sandbox import Server

from arena.process.confine import cgroups

HOSTILE = Path(__file__).parent / "hostile"
REPO = Path(__file__).parent.parent
ROOT = os.geteuid() == 0
PY = sys.executable          # the venv's python: `import arena` works inside the sandbox too


def arena(*args: str, env: dict[str, str] | None = None, timeout: float = 180,
          cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "arena", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})}, cwd=cwd or REPO)


@pytest.fixture
def workdir(visible_dir):
    """A directory outside /tmp (bots get a private /tmp, which would hide
    anything under the host's /tmp for reasons unrelated to the hidden paths)."""
    return visible_dir


def bot_dir(base: Path, name: str, *scripts: str) -> Path:
    d = base / name
    d.mkdir()
    for script in ("proto.py", *scripts):
        shutil.copy(HOSTILE / script, d)
    return d


def tournament(base: Path, bots: list[dict], **top) -> tuple[Path, Path]:
    out = base / "out"
    tfile = base / "t.yaml"
    data = {"name": "redteam", "sandbox": "bwrap", "players": 2, "seed": 424242,
            "rules": {"contracts": ["2S3"]}, "output": str(out), "bots": bots, **top}
    tfile.write_text(json.dumps(data))
    return tfile, out


def redteam_bot(base: Path, probes: str, *, env: dict[str, str] | None = None,
                **extra) -> dict:
    d = bot_dir(base, "rt", "redteam.py")
    return {"name": "rt", "command": [PY, "redteam.py"], "dir": str(d),
            "env": {"RT_PROBES": probes, **(env or {})}, **extra}


def run_redteam(base: Path, probes: str, *, env: dict[str, str] | None = None,
                arena_env: dict[str, str] | None = None, **extra) -> tuple[dict, Path]:
    """One match of the redteam bot against a built-in player: its report."""
    tfile, out = tournament(base, [redteam_bot(base, probes, env=env, **extra),
                                   {"name": "ref", "builtin": "random"}], deals=1)
    done = arena("run", str(tfile), "--jobs", "1", env=arena_env)
    assert done.returncode == 0, done.stdout + done.stderr
    return probe_report(out), out


def probe_report(out: Path) -> dict:
    """What the redteam bot's probes found (one line per finished probe)."""
    report: dict = {}
    for log in sorted((out / "logs").glob("*-rt.stderr.log")):
        for line in log.read_text().splitlines():
            if line.startswith("REDTEAM-PROBE "):
                _, name, value = line.split(" ", 2)
                report.setdefault(name, json.loads(value))
    return report


def faults(out: Path) -> list[str]:
    import sqlite3
    with sqlite3.connect(out / "results.sqlite") as db:
        return [str(row) for row in db.execute("SELECT * FROM faults")]


# ------------------------------------------------ root: the kernel and the host

def test_bot_cannot_write_kernel_sysctls(workdir):
    report, _ = run_redteam(workdir, "sysctl")
    assert report["sysctl"], report
    assert "writable" not in report["sysctl"].values(), report["sysctl"]


def test_bot_cannot_leave_a_setuid_file_in_its_scratch(workdir):
    report, out = run_redteam(workdir, "setuid", sandbox={"scratch": True})
    planted = out / "scratch" / "rt" / "planted"
    assert "setuid" in report, report
    assert not (planted.exists() and planted.stat().st_mode & (stat.S_ISUID | stat.S_ISGID)), \
        report["setuid"]


@pytest.mark.skipif(not ROOT, reason="without root the bot reads what the organiser reads (documented)")
def test_root_only_files_stay_unreadable(workdir):
    """As root, bots run as nobody: a file only root may read is unreadable
    even where it is mounted (a read: grant here)."""
    secret = workdir / "secret.txt"
    secret.write_text("organiser's secret\n")
    secret.chmod(0o600)
    report, _ = run_redteam(workdir, "read", env={"RT_READ": str(secret)},
                            sandbox={"read": [str(secret)]})
    assert report["read"][str(secret)] != len("organiser's secret\n"), report


# ------------------------------------------------------------- leaks

def test_bot_does_not_see_the_organisers_environment(workdir):
    name = f"ORGANISER_TOKEN_{uuid.uuid4().hex[:8]}"
    report, _ = run_redteam(workdir, "env", env={"RT_ENV_NAME": name},
                            arena_env={name: "s3cr3t"})
    assert report["env"] is False


def test_pid1_cmdline_does_not_name_the_hidden_paths(workdir):
    victim = bot_dir(workdir, "victim")
    (victim / "victim.py").write_text("import proto\nproto.serve(name='victim')\n")
    tfile, out = tournament(workdir, [
        redteam_bot(workdir, "cmdline"),
        {"name": "victim", "command": [PY, "victim.py"], "dir": str(victim)}])
    done = arena("run", str(tfile), "--jobs", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    seen = " ".join(probe_report(out)["cmdline"])
    assert str(victim) not in seen and str(tfile) not in seen and str(out) not in seen, seen


def test_other_bots_script_directories_are_hidden_without_dir(workdir):
    spy = bot_dir(workdir, "spy", "spy.py")
    victim = bot_dir(workdir, "victim")
    (victim / "victim.py").write_text("import proto\nproto.serve(name='victim')\n")
    tdir = workdir / "t"
    tdir.mkdir()
    tfile, out = tournament(tdir, [
        {"name": "spy", "command": [PY, str(spy / "spy.py")],
         "env": {"SPY_FILES": f"{victim / 'victim.py'}:{victim}"}},
        {"name": "victim", "command": [PY, str(victim / "victim.py")]}])
    done = arena("run", str(tfile), "--jobs", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    logs = sorted((out / "logs").glob("*-spy.stderr.log"))
    report = next(json.loads(line[len("SPY-REPORT "):]) for log in logs
                  for line in log.read_text().splitlines() if line.startswith("SPY-REPORT "))
    assert report["files"][str(victim / "victim.py")] is None, report["files"]
    assert report["files"][str(victim)] in (None, []), report["files"]


def unix_server(path: Path) -> Server:
    """A unix-socket server outside /tmp and /run (like a database's socket
    under /var/lib), counting connections."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    return Server(sock)


def test_bot_cannot_reach_a_unix_socket_on_the_host(workdir):
    """Nothing of the host is mounted but the allow-list: a socket file
    elsewhere on the host (a database's, an agent's) is not there to reach."""
    path = workdir / "service.sock"
    server = unix_server(path)
    try:
        report, _ = run_redteam(workdir, "unix", env={"RT_UNIX": str(path)})
    finally:
        server.close()
    assert report["unix"] != "connected" and server.connections == 0, report


# ----------------------------------------------------- seeing the cards

def clairvoyant_reports(logs: list[Path]) -> list[dict]:
    return [json.loads(line[len("CLAIRVOYANT "):]) for log in logs
            for line in log.read_text().splitlines() if line.startswith("CLAIRVOYANT ")]


def test_arena_play_does_not_tell_the_bot_its_seed(workdir):
    bot = bot_dir(workdir, "clair", "clairvoyant.py")
    done = arena("play", f"{PY} {bot / 'clairvoyant.py'}", "random", "random",
                 "--sandbox", "bwrap", "--log-dir", str(workdir / "logs"), cwd=workdir)
    assert done.returncode == 0, done.stdout + done.stderr
    reports = clairvoyant_reports(sorted((workdir / "logs").glob("*.stderr.log")))
    assert reports, done.stdout
    assert not any(r["predicted"] for r in reports), reports


def test_default_tournament_seed_is_not_predictable(workdir):
    bot = bot_dir(workdir, "clair", "clairvoyant.py")
    tfile, out = tournament(workdir, [
        {"name": "clair", "command": [PY, "clairvoyant.py"], "dir": str(bot)},
        {"name": "ref", "builtin": "random"}])
    data = json.loads(tfile.read_text())
    del data["seed"]
    tfile.write_text(json.dumps(data))
    done = arena("run", str(tfile), "--jobs", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    reports = clairvoyant_reports(sorted((out / "logs").glob("*-clair.stderr.log")))
    assert reports
    assert not any(r["predicted"] for r in reports), reports


def test_a_bot_cannot_remember_a_duplicate_deal(workdir):
    bots = []
    for name in ("m1", "m2"):
        d = bot_dir(workdir, name, "memory.py")
        bots.append({"name": name, "command": [PY, "memory.py"], "dir": str(d)})
    tfile, out = tournament(workdir, bots, deals=1)
    done = arena("run", str(tfile), "--jobs", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [json.loads(line[len("MEMORY "):]) for log in sorted((out / "logs").glob("*.stderr.log"))
             for line in log.read_text().splitlines() if line.startswith("MEMORY ")]
    held = {(r["match"], r["seat"]): r["cards"] for r in lines}
    right = [(r["match"], seat) for r in lines for seat, cards in r["claims"].items()
             if held.get((r["match"], int(seat))) == cards]
    assert right == [], f"bots knew an opponent's whole hand in {right}"


# ---------------------------------------------------- resources (DoS)

def test_tmp_is_bounded_by_the_memory_limit(workdir):
    report, _ = run_redteam(workdir, "tmpfill", env={"RT_TMP_MB": "200"},
                            limits={"memory_mb": 64})
    filled = report.get("tmpfill", {}).get("written_mb", 0)
    assert filled < 200, report


def test_setsid_children_count_toward_the_memory_limit(workdir):
    report, out = run_redteam(workdir, "memsplit", env={"RT_SPLIT": "4", "RT_SPLIT_MB": "50"},
                              limits={"memory_mb": 64})
    assert "memsplit" not in report, report
    assert any("memory limit exceeded" in f for f in faults(out))


def test_fork_swarm_is_bounded(workdir):
    """A swarm of more processes than limits.processes (default 128) is killed
    within a watchdog period: it can be forked, but not kept."""
    report, out = run_redteam(workdir, "forks", env={"RT_FORKS": "200", "RT_FORK_HOLD": "3"})
    if cgroups.backend() is not None:        # refused by the kernel at pids.max: never forked
        assert report["forks"]["forked"] < 128 and report["forks"]["error"], report
        return
    assert "forks" not in report, report
    assert any("process limit exceeded" in f for f in faults(out)), faults(out)


def test_scratch_is_bounded(workdir):
    report, _ = run_redteam(workdir, "scratchfill", env={"RT_SCRATCH_MB": "200"},
                            sandbox={"scratch": True})
    assert report.get("scratchfill", {}).get("written_mb", 0) < 200, report


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_seed_is_not_readable_from_the_tournament_files_history(workdir):
    d = bot_dir(workdir, "rt", "redteam.py")
    tfile, out = tournament(workdir, [
        {"name": "rt", "command": [PY, "redteam.py"], "dir": str(d),
         "env": {"RT_PROBES": "git", "RT_GIT_DIR": str(workdir), "RT_GIT_FILE": "t.yaml"}},
        {"name": "ref", "builtin": "random"}])
    git = ["git", "-C", str(workdir), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True, timeout=30)
    subprocess.run([*git, "add", "t.yaml"], check=True, timeout=30)
    subprocess.run([*git, "commit", "-q", "-m", "tournament"], check=True, timeout=30)
    done = arena("run", str(tfile), "--jobs", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    report = probe_report(out)
    assert "git" in report, report
    assert not any("424242" in line for line in report["git"]), report["git"]
