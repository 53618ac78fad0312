"""Second red-team review of the bubblewrap sandbox (docs/SECURITY.md).

Like tests/test_sandbox_redteam.py: every test starts real hostile bots
(tests/hostile/) under ``arena run`` with ``sandbox: bwrap``.  Each
``xfail(strict=True)`` test is a weakness of the current code: it fails
today and must pass once the weakness is fixed (then drop the mark).  The
reason of each mark names the suggested fix.

The card channels below need no file to be written and no network: they go
through state the kernel keeps on objects every sandbox shares (a read-only
file's inode, the arena's session keyring).  A bot that can use them can
show its hand to a colluding bot at the same table, or to its own next
process when the same duplicate deal is played in another rotation.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from test_sandbox_redteam import PY, arena, bot_dir, faults, tournament


@pytest.fixture
def workdir(visible_dir):
    return visible_dir


def memory_lines(out: Path) -> list[dict]:
    return [json.loads(line[len("MEMORY "):]) for log in sorted((out / "logs").glob("*.stderr.log"))
            for line in log.read_text().splitlines() if line.startswith("MEMORY ")]


def known_hands(out: Path) -> list[tuple[str, int, str]]:
    """(match, claimant seat, claimed seat) for every opponent's whole hand a
    bot knew in a match (a claim equal to what that seat was dealt)."""
    lines = memory_lines(out)
    held = {(r["match"], r["seat"]): r["cards"] for r in lines}
    return sorted({(r["match"], r["seat"], seat) for r in lines
                   for seat, cards in r["claims"].items()
                   if held.get((r["match"], int(seat))) == cards})


def run(tfile: Path, *args: str) -> None:
    done = arena("run", str(tfile), *args)
    assert done.returncode == 0, done.stdout + done.stderr


# ----------------------------------------------- channels between bot processes

def test_two_bots_cannot_show_each_other_their_hands_through_file_locks(workdir):
    shared = os.path.realpath(PY)        # every Python bot can open it
    bots = []
    for name in ("alice", "bob"):
        d = bot_dir(workdir, name, "lockchannel.py")
        bots.append({"name": name, "command": [PY, "lockchannel.py"], "dir": str(d),
                     "env": {"LOCK_FILE": shared}})
    tfile, out = tournament(workdir, bots, deals=1, duplicate=False)
    run(tfile, "--jobs", "1")
    assert memory_lines(out), "the bots did not play"
    # Only claims about the match being played: no earlier process saw these cards.
    assert known_hands(out) == [], "a bot knew its opponent's hand in the same match"


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_live_process_cannot_pass_a_duplicate_deal_to_the_next_rotation(workdir, jobs):
    bots = []
    for name in ("m1", "m2"):      # each locks its own script: no channel between the two
        d = bot_dir(workdir, name, "lockchannel.py")
        bots.append({"name": name, "command": [PY, "lockchannel.py"], "dir": str(d)})
    tfile, out = tournament(workdir, bots, deals=1)
    run(tfile, "--jobs", jobs)
    assert memory_lines(out), "the bot did not play"
    assert known_hands(out) == [], "a bot process knew the opponent's hand of a duplicate deal"


SESSION_WRAPPER = """\
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.syscall(250, 1, None) < 0:      # KEYCTL_JOIN_SESSION_KEYRING (anonymous)
    sys.exit("cannot join a session keyring: " + os.strerror(ctypes.get_errno()))
os.execv(sys.argv[1], sys.argv[1:])
"""


@pytest.mark.skipif(sys.platform != "linux" or os.uname().machine != "x86_64",
                    reason="the hostile bot calls add_key/keyctl by their x86_64 numbers")
def test_the_kernel_keyring_is_not_shared_between_bot_processes(workdir):
    bots = []
    for name in ("k1", "k2"):      # both write their hands; each reads only its own keys
        d = bot_dir(workdir, name, "keyring.py")
        bots.append({"name": name, "command": [PY, "keyring.py"], "dir": str(d),
                     "env": {"KEY_PREFIX": name}})
    tfile, out = tournament(workdir, bots, deals=1)
    wrapper = workdir / "session.py"
    wrapper.write_text(SESSION_WRAPPER)
    # The arena as a login session or container runs it: in a session keyring of its own.
    import subprocess
    done = subprocess.run([PY, str(wrapper), PY, "-m", "arena", "run", str(tfile), "--jobs", "1"],
                          capture_output=True, text=True, timeout=180, cwd=workdir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert memory_lines(out), "the bot did not play"
    assert known_hands(out) == [], "a bot process read the previous rotation's hand from a key"


# ------------------------------------------------------------ resources

def test_memfd_counts_toward_the_memory_limit(workdir):
    d = bot_dir(workdir, "rt", "redteam2.py")
    tfile, out = tournament(workdir, [
        {"name": "rt", "command": [PY, "redteam2.py"], "dir": str(d), "limits": {"memory_mb": 64},
         "env": {"RT_PROBES": "memfd", "RT_MEM_MB": "512", "RT_MEM_HOLD": "1.5"}},
        {"name": "ref", "builtin": "random"}], deals=1, duplicate=False)
    run(tfile, "--jobs", "1")
    report = probe_report_of(out, "rt")
    held = report.get("memfd", {}).get("held_mb", 0)
    assert held < 512 or not report["memfd"].get("alive"), (report, faults(out))


def probe_report_of(out: Path, bot: str) -> dict:
    report: dict = {}
    for log in sorted((out / "logs").glob(f"*-{bot}.stderr.log")):
        for line in log.read_text().splitlines():
            if line.startswith("REDTEAM-PROBE "):
                _, name, value = line.split(" ", 2)
                report.setdefault(name, json.loads(value))
    return report


# ----------------------------------------------------------------- leaks

def test_mountinfo_does_not_name_the_hidden_paths(workdir):
    d = bot_dir(workdir, "rt", "redteam2.py")
    victim = bot_dir(workdir, "victim-secret-name")
    (victim / "victim.py").write_text("import proto\nproto.serve(name='victim')\n")
    tfile, out = tournament(workdir, [
        {"name": "rt", "command": [PY, "redteam2.py"], "dir": str(d),
         "env": {"RT_PROBES": "mountinfo"}},
        {"name": "victim", "command": [PY, "victim.py"], "dir": str(victim)}], deals=1,
        duplicate=False)
    run(tfile, "--jobs", "1")
    seen = probe_report_of(out, "rt")["mountinfo"]
    named = [p for p in seen if p in (str(victim), str(tfile), str(out))]
    assert named == [], named
