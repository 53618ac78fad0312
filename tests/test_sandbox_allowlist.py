"""The sandbox built from an allow-list (issue 30): a bot's file system holds
the system, its own folder, its interpreter and its grants, and nothing
else.  One hostile probe per bot process (tests/hostile/allowlist.py) tries
every leak at once and reports it as JSON, so one tournament checks them all:

- the tournament file in a submodule checked out in a git worktree: its seed
  in the object stores of the submodule's source, of the worktree's
  repository, and in the file itself;
- a submissions repository holding an opponent's ``weights.json``, in its
  ``.git/objects``, read by a bot whose ``dir:`` is a folder of it and by one
  whose ``dir:`` is the repository's root (version control inside a bot's
  own folder is not shown);
- the results (the seed stored in ``results.sqlite``);
- files only root may read (a 0600 file granted with ``read:``, /etc/shadow)
  with arena as root: bots run as nobody;
- a unix socket of the host; home directories and /root;
- ``/proc/self/mountinfo`` naming any of these.

The same layout is played through ``--executor ray`` in tests/test_ray.py.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from test_sandbox import Server

from arena.process.confine.sandbox_policy import SYSTEM_PATHS, runtime_paths, toolchain_paths

HOSTILE = Path(__file__).parent / "hostile"
REPO = Path(__file__).parent.parent
PY = sys.executable
ROOT = os.geteuid() == 0
PROBES = ("whole", "alice")          # the probe at the submissions' root, and one in a folder of it


@dataclass(frozen=True)
class Layout:
    base: Path
    tfile: Path
    out: Path
    subs: Path
    secrets: tuple[str, ...]
    hidden: tuple[Path, ...]          # what no bot may read, nor find named in its mountinfo
    root_only: Path                   # granted to the probe "whole" (read:), and 0600: unreadable as nobody
    socket: Path


def probe(base: Path, hidden: list[Path], folder: Path, found: list[str]) -> dict[str, object]:
    """What the probe in ``folder`` tries: the hidden paths, also relative to
    its folder (on a Ray node, that is the node's copy of them)."""
    relative = [os.path.relpath(p, folder) for p in hidden]
    return {"read": [*map(str, hidden), *relative, "/etc/shadow", "/root"], "secrets": found,
            "list": ["/", "/root", "/home", "/etc", str(base)], "unix": [str(base / "service.sock")]}


def git(where: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(where), "-c", "user.name=t", "-c", "user.email=t@t",
                    "-c", "protocol.file.allow=always", "-c", "init.defaultBranch=main", *args],
                   check=True, capture_output=True, timeout=60)


def _repository(path: Path, files: dict[str, str]) -> Path:
    path.mkdir(parents=True)
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git(path, "init", "-q")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "files")
    return path


def _probe_files(folder: Path) -> dict[str, str]:
    return {f"{folder}/{name}": (HOSTILE / name).read_text() for name in ("allowlist.py", "proto.py")}


def layout(base: Path) -> Layout:
    """The tournament described above, in ``base`` (outside the private /tmp)."""
    seed = secrets.randbits(62) | (1 << 61)
    weights, root_only = f"WEIGHTS-{uuid.uuid4().hex}", f"ROOTONLY-{uuid.uuid4().hex}"
    subs, out, source, repo = base / "subs", base / "out", base / "tour-src", base / "repo"
    tfile = base / "wt" / "tour" / "t.yaml"
    secret = base / "secret.txt"
    secret.write_text(root_only + "\n")
    secret.chmod(0o600)
    hidden = [tfile, source, repo / ".git", base / "wt" / ".git", subs / ".git", subs / "victim", out]
    found = [str(seed), weights, root_only]

    def env(folder: Path) -> dict[str, str]:
        return {"ALLOWLIST_PROBE": json.dumps(probe(base, [*hidden, secret], folder, found))}

    bots = [{"name": "whole", "dir": str(subs), "sandbox": {"read": [str(secret)]}, "env": env(subs),
             "command": [PY, "allowlist.py"]},
            {"name": "alice", "dir": str(subs / "alice"), "env": env(subs / "alice"), "command": [PY, "allowlist.py"]},
            {"name": "victim", "dir": str(subs / "victim"), "command": [PY, "victim.py"]}]
    text = json.dumps({"name": "allow", "sandbox": "bwrap", "players": 3, "deals": 1, "seed": seed,
                       "rules": {"contracts": ["2S3"]}, "output": str(out), "bots": bots})
    _repository(source, {"t.yaml": text})
    _repository(repo, {"README": "the tournament's repository\n"})
    git(repo, "worktree", "add", "-q", str(base / "wt"))
    git(base / "wt", "submodule", "add", "-q", str(source), "tour")
    git(base / "wt", "commit", "-q", "-m", "the tournament")
    _repository(subs, {**_probe_files(Path(".")), **_probe_files(Path("alice")),
                       "victim/victim.py": (HOSTILE / "proto.py").read_text() + "\nserve(name='victim')\n",
                       "victim/weights.json": json.dumps({"w": weights})})
    return Layout(base, tfile, out, subs, tuple(found), tuple(hidden), secret, base / "service.sock")


def reports(out: Path) -> dict[str, dict]:
    """Each probe bot's first report."""
    found: dict[str, dict] = {}
    for log in sorted((out / "logs").glob("*.stderr.log")):
        for line in log.read_text().splitlines():
            if line.startswith("ALLOWLIST "):
                found.setdefault(log.name.rsplit("-", 1)[1].split(".")[0], json.loads(line[len("ALLOWLIST "):]))
    return found


def _allowed_tops(base: Path) -> set[str]:
    """What the root of a sandbox may hold: the system, /etc, /proc, /dev,
    the private file systems, and the first folder of the bot's own paths
    (the test's own folder ``base`` among them)."""
    own = [*runtime_paths(), *toolchain_paths(PY), str(REPO), str(base)]
    return ({p.strip("/") for p in SYSTEM_PATHS} | {"etc", "proc", "dev", "tmp", "var", "run", "home"}
            | {p.split("/")[1] for p in own})


def check_report(found: dict, where: Layout) -> None:
    """What a sandboxed probe found: nothing of what is hidden."""
    leaked = {p: r for p, r in found["read"].items() if r in ("secret", "read", "empty") and p != "/root"}
    assert leaked == {}, leaked
    if ROOT:     # mounted for the probe "whole" (read:), unreadable as nobody
        assert found["read"][str(where.root_only)] in ("missing", "error: Permission denied"), found["read"]
    named = [m for m in found["mountinfo"] for h in where.hidden if m == str(h) or m.startswith(f"{h}/")]
    assert named == [], named
    assert not [m for m in found["mountinfo"] if m.startswith(f"{where.base}/")
                and not m.startswith(f"{where.subs}/") and m != str(where.root_only)]
    assert found["unix"] == {str(where.socket): "error: No such file or directory"}
    assert set(found["list"]["/"]) <= _allowed_tops(where.base), found["list"]["/"]
    assert found["list"]["/home"] == ["bot"] and found["identity"]["home"] == "/home/bot"
    assert found["identity"]["home_writable"] and found["identity"]["cap_eff"] == "0000000000000000"
    host_root = set(os.listdir("/root")) if ROOT else set()
    # The interpreter's installation, and the test's own folder, which is
    # under /root/.cache when the repository is under /tmp (a clean clone).
    own = [*runtime_paths(), *toolchain_paths(PY), str(where.base)]
    toolchain = {p.split("/")[2] for p in own if p.startswith("/root/")}
    root_seen = found["list"]["/root"]
    assert isinstance(root_seen, str) or set(root_seen) <= toolchain, (root_seen, host_root)
    assert set(found["list"]["/etc"]) <= {"ld.so.cache", "ld.so.conf", "ld.so.conf.d", "nsswitch.conf", "localtime",
                                          "timezone", "alternatives", "passwd", "group"} | {
        n for n in os.listdir("/etc") if n.startswith("java-")}, found["list"]["/etc"]
    if ROOT:
        assert (found["identity"]["uid"], found["identity"]["gid"], found["identity"]["groups"]) == (65534, 65534, [])


@pytest.mark.long(30)
def test_the_probe_finds_what_it_can_read(visible_dir: Path) -> None:
    """Outside the sandbox the probe finds every secret: it is no blind test."""
    where = layout(visible_dir)
    hidden = [*where.hidden, where.root_only]
    env = {**os.environ, "ALLOWLIST_PROBE": json.dumps(probe(where.base, hidden, where.subs, list(where.secrets)))}
    done = subprocess.run([PY, str(HOSTILE / "allowlist.py"), "--now"], capture_output=True, text=True,
                          env=env, cwd=where.subs, timeout=60, check=True)
    found = json.loads(done.stderr.split("ALLOWLIST ", 1)[1])
    # Not the results (none before a run), nor the worktree's .git (a file naming the repository).
    expect = {str(p) for p in hidden if p not in (where.out, where.base / "wt" / ".git")}
    assert {p for p, r in found["read"].items() if r == "secret"} >= expect, found["read"]


@pytest.mark.long(20)
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_bot_sees_only_the_allow_list(visible_dir: Path) -> None:
    where = layout(visible_dir)
    server = Server(_listening(where.socket))
    try:
        done = subprocess.run([PY, "-m", "arena", "run", str(where.tfile), "--jobs", "1"], capture_output=True,
                              text=True, cwd=REPO, timeout=300)
    finally:
        server.close()
    assert done.returncode == 0, done.stdout + done.stderr
    found = reports(where.out)
    assert set(found) == set(PROBES), found.keys()
    for name in PROBES:
        check_report(found[name], where)
    assert server.connections == 0


def _listening(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    return sock


@pytest.mark.skipif(not ROOT, reason="as arena's own user, bots write what it writes")
def test_a_write_grant_nobody_cannot_write_is_one_line(visible_dir: Path) -> None:
    """As root, bots are nobody: a write: folder only root may write would
    fail the bot at its first write; the run stops first, in one line."""
    cache = visible_dir / "cache"
    cache.mkdir(mode=0o755)
    bot = visible_dir / "bot"
    bot.mkdir()
    shutil.copy(REPO / "bots" / "random_bot.py", bot / "bot.py")
    tfile = visible_dir / "t.yaml"
    tfile.write_text(json.dumps({"name": "w", "players": 2, "out": str(visible_dir / "out"), "bots": [
        {"name": "a", "command": [PY, "bot.py"], "dir": str(bot), "sandbox": {"write": [str(cache)]}},
        {"name": "b", "builtin": "random"}]}))
    done = subprocess.run([PY, "-m", "arena", "run", str(tfile)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"Error: {tfile}:1: bots.a.sandbox.write: {cache} is not writable by uid 65534, the user bots run as "
        f"(chown 65534 {cache}, or chmod o+rwx {cache})"), done.stderr
