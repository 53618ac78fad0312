"""Limits that count what they name (issue 30, point 3; docs/SECURITY.md
"Limits"): System V shared memory, threads under ``processes``, memory
held across processes, and the cgroup backends (v1 here, v2 against a fake
cgroupfs directory: the file names and formats the kernel gives).
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

import pytest

from arena.process import BotCrashed, BotProcess, BotSpec, SandboxPolicy, TimeControl
from arena.process.confine import cgroups, sandbox

HOSTILE = Path(__file__).parent / "hostile"
BOTS = Path(__file__).parent / "bots"

needs_bwrap = pytest.mark.skipif(sandbox.resolve(sandbox.AUTO).mode != sandbox.BWRAP,
                                 reason="bubblewrap does not work here")


def probe(mode: str, **env: str) -> dict:
    """One run of tests/hostile/limits_probe.py with ``memory_mb: 256`` and
    the default ``processes`` limit (128): what it could hold."""
    spec = BotSpec([sys.executable, str(HOSTILE / "limits_probe.py")], memory_mb=256,
                   env=env, sandbox=SandboxPolicy(mode))
    bot = BotProcess(spec, time_control=TimeControl(startup_seconds=30, per_decision_seconds=60))
    bot.start()
    try:
        reply, _elapsed = bot.request({"type": "request", "id": 1})
    finally:
        bot.close(grace=0.5)
    assert isinstance(reply, dict)
    return reply


@needs_bwrap
def test_system_v_memory_and_threads_are_refused_in_the_sandbox() -> None:
    """A bot limited to 256 MB held 1 GiB of System V shared memory, and one
    under the ``processes`` limit held 1,001 threads."""
    got = probe("bwrap")
    assert got["shm"] == {"held_mb": 0, "errno": errno.EPERM}, got
    assert got["msg"] == {"made": False, "errno": errno.EPERM}, got
    assert got["threads"]["started"] < 128, got       # the limit counts its tasks, not only processes


@pytest.mark.skipif(cgroups.backend() is None, reason="no cgroup here: the watchdog counts (and kills)")
def test_threads_are_refused_without_the_sandbox_too() -> None:
    """``sandbox: none``: no seccomp filter (System V memory is then bounded
    by the cgroup's memory limit only), but the same task limit."""
    got = probe("none", SHM_MB="1")
    assert got["threads"]["started"] < 128 and got["threads"]["error"], got


@pytest.mark.parametrize("mode", [pytest.param("bwrap", marks=needs_bwrap), "none"])
def test_memory_held_across_processes_is_stopped(mode: str) -> None:
    """Two processes of 150 MB, each under the 200 MB per-process limit:
    the kernel's limit of the bot's cgroup where there is one."""
    spec = BotSpec([sys.executable, str(BOTS / "memhog_fork.py")], memory_mb=200,
                   sandbox=SandboxPolicy(mode))
    bot = BotProcess(spec, time_control=TimeControl(startup_seconds=30, per_decision_seconds=30))
    bot.start()
    try:
        with pytest.raises(BotCrashed) as err:
            bot.request({"id": 1}, timeout=20)
    finally:
        bot.close(grace=0.2)
    assert "memory limit exceeded" in str(err.value), err.value
    if cgroups.backend() is not None:
        assert "(its cgroup)" in str(err.value), err.value


def test_the_bot_cgroup_is_removed_with_the_bot() -> None:
    spec = BotSpec([sys.executable, str(BOTS / "forker.py")], memory_mb=100,
                   sandbox=SandboxPolicy("none"))
    bot = BotProcess(spec, time_control=TimeControl(startup_seconds=30))
    bot.start()
    group = bot.pipe._cgroup
    try:
        bot.request({"id": 1}, timeout=20)
        if cgroups.backend() is None:
            assert group is None
            return
        assert group is not None and set(group.members()) >= {bot.pid}
    finally:
        bot.close(grace=0.2)
    assert group is not None
    cgroups._retry_left()
    assert not any(os.path.exists(d) for d in group.dirs), group.dirs


# ---------------------------------------------------------------- backends

def fake_v2(root: Path, controllers: str = "cpu memory pids", enabled: str = "") -> Path:
    """A cgroup v2 tree as the kernel shows it: arena's cgroup /user/arena."""
    (root / "proc").mkdir()
    (root / "proc" / "mountinfo").write_text(
        f"30 25 0:26 / {root / 'cg'} rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n")
    (root / "proc" / "cgroup").write_text("0::/user/arena\n")
    own = root / "cg" / "user" / "arena"
    own.mkdir(parents=True)
    (own / "cgroup.controllers").write_text(controllers + "\n")
    (own / "cgroup.subtree_control").write_text(enabled + "\n")
    (own / "cgroup.procs").write_text(f"{os.getpid()}\n")
    return own


def probe_fake(root: Path, **env: str) -> tuple[cgroups.Backend | None, str]:
    return cgroups.probe(str(root / "proc" / "mountinfo"), str(root / "proc" / "cgroup"), env)


def kernel_like_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Writes to the fake tree as the kernel takes them: controllers are
    handed to children only by a cgroup with no process (EBUSY), and a
    process moved into a cgroup leaves the one it was in."""
    real = cgroups._write

    def write(path: str, value: str) -> None:
        folder, name = os.path.split(path)
        if name == "cgroup.subtree_control" and Path(folder, "cgroup.procs").read_text().split():
            raise OSError(errno.EBUSY, "Device or resource busy")
        if name == "cgroup.procs":
            parent = Path(folder).parent / "cgroup.procs"
            left = [p for p in parent.read_text().split() if p != value]
            parent.write_text("".join(f"{p}\n" for p in left))
        real(path, value)
    monkeypatch.setattr(cgroups, "_write", write)


def test_v2_backend_makes_a_bot_cgroup_with_the_limits(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    own = fake_v2(tmp_path)
    kernel_like_writes(monkeypatch)
    found, why = probe_fake(tmp_path)
    assert found is not None and found.kind == "v2", why
    # arena was alone in its cgroup: moved into a leaf, controllers handed down
    assert (own / "arena-main" / "cgroup.procs").read_text() == str(os.getpid())
    assert (own / "cgroup.subtree_control").read_text() == "+memory +pids"
    folder = own / f"arena-{os.getpid()}-probe"
    folder.mkdir()                    # what the kernel makes for a new cgroup
    (folder / "cpu.stat").write_text("usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n")
    group = cgroups.BotCgroup("v2", [str(folder)], str(folder / "cpu.stat"), str(folder), str(folder),
                              256 << 20, 129)
    assert group.cpu_seconds() == pytest.approx(1.5)
    (folder / "memory.events").write_text("low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n")
    (folder / "pids.events").write_text("max 3\n")
    (folder / "cgroup.procs").write_text("")
    assert group.oom_kills() == 1 and group.refused_tasks() == 3
    group.attach(4242)
    assert (folder / "cgroup.procs").read_text() == "4242"


def test_v2_create_writes_memory_max_pids_max_and_no_swap(tmp_path: Path) -> None:
    own = fake_v2(tmp_path, enabled="memory pids")
    found, why = probe_fake(tmp_path)
    assert found is not None, why
    real_mkdir = os.mkdir

    def mkdir(path: str, mode: int = 0o777) -> None:   # the kernel fills a new cgroup's folder
        real_mkdir(path, mode)
        Path(path, "cpu.stat").write_text("usage_usec 0\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(os, "mkdir", mkdir)
        group = found.create(320 << 20, 129)
    folder = Path(group.dirs[0])
    assert folder.parent == own
    assert (folder / "memory.max").read_text() == str(320 << 20)
    assert (folder / "memory.swap.max").read_text() == "0"
    assert (folder / "memory.oom.group").read_text() == "1"
    assert (folder / "pids.max").read_text() == "129"
    assert group.cpu_seconds() == 0.0


def test_v2_without_the_memory_controller_falls_back(tmp_path: Path) -> None:
    """A machine whose cgroup is given no memory controller (a login
    session without delegation): the v1 probe then, and here none."""
    fake_v2(tmp_path, controllers="cpu pids")
    found, why = probe_fake(tmp_path)
    assert found is None
    assert "no memory controller" in why and "no cgroup v1 memory hierarchy" in why, why


def test_v2_a_named_cgroup_is_used_or_nothing(tmp_path: Path) -> None:
    own = fake_v2(tmp_path, enabled="memory pids")
    delegated = own / "delegated"
    delegated.mkdir()
    (delegated / "cgroup.controllers").write_text("memory pids\n")
    (delegated / "cgroup.subtree_control").write_text("memory pids\n")
    found, _why = probe_fake(tmp_path, ARENA_CGROUP=str(delegated))
    assert found is not None and found.bases == {"": str(delegated)}
    found, why = probe_fake(tmp_path, ARENA_CGROUP=str(tmp_path / "nowhere"))
    assert found is None and "nowhere" in why


def test_cgroups_can_be_turned_off(tmp_path: Path) -> None:
    fake_v2(tmp_path)
    assert probe_fake(tmp_path, ARENA_NO_CGROUP="1") == (None, "$ARENA_NO_CGROUP is set")


def test_v1_backend_from_the_controllers_mounts(tmp_path: Path) -> None:
    (tmp_path / "proc").mkdir()
    lines = []
    for n, name in enumerate(("memory", "pids", "cpu,cpuacct")):
        (tmp_path / name).mkdir()
        lines.append(f"{40 + n} 25 0:{30 + n} / {tmp_path / name} rw - cgroup cgroup rw,{name}\n")
    (tmp_path / "proc" / "mountinfo").write_text("".join(lines))
    (tmp_path / "proc" / "cgroup").write_text("4:memory:/jobs/7\n3:pids:/\n2:cpu,cpuacct:/\n")
    (tmp_path / "memory" / "jobs" / "7").mkdir(parents=True)
    found, why = probe_fake(tmp_path)
    assert found is not None and found.kind == "v1", why
    assert found.bases == {"memory": str(tmp_path / "memory" / "jobs" / "7"),
                           "pids": str(tmp_path / "pids"), "cpuacct": str(tmp_path / "cpu,cpuacct")}


def test_this_machine_has_a_backend() -> None:
    """CI runs as root with cgroup v1 (memory, pids, cpuacct): the kernel
    keeps the limits there, and no test of them skips."""
    found = cgroups.backend()
    if os.geteuid() != 0:
        pytest.skip("not root: this machine's cgroups are not arena's to make")
    assert found is not None, cgroups.probe()[1]
    group = found.create(64 << 20, 10)
    try:
        assert group.cpu_seconds() == 0.0 and group.members() == [] and group.oom_kills() == 0
    finally:
        assert group.remove()
