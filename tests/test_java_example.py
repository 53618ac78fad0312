"""The Java example bot (examples/java/Bot.java) passes `arena check` in the default sandbox,
started as a student starts it: `java -cp classes Bot`, no JVM options.

Skipped only where no JDK is installed. The bot is compiled once for the module with
javac: `java Bot.java` would compile it again at every start, about two CPU-seconds each.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BOT = Path(__file__).resolve().parent.parent / "examples" / "java" / "Bot.java"

pytestmark = pytest.mark.skipif(
    shutil.which("java") is None or shutil.which("javac") is None, reason="no JDK (java and javac) on PATH"
)


@pytest.fixture(scope="module")
def java_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding the compiled bot in classes/ (compiled once for the module)."""
    where = tmp_path_factory.mktemp("java")
    subprocess.run(["javac", "-d", str(where / "classes"), str(BOT)], check=True, timeout=300)
    return where


# The sandbox shows the bot its working directory, not the rest of /tmp: a relative class path.
# No -XX:-UsePerfData: the JVM's lock on its perf-data file succeeds in the sandbox (it locks
# nothing there), so it prints no warning on stdout before 'ready'.
PLAIN_JAVA = ["java", "-cp", "classes", "Bot"]


def test_java_example_passes_every_check_step(java_dir: Path, tmp_path: Path) -> None:
    command = PLAIN_JAVA
    done = subprocess.run(
        [sys.executable, "-m", "arena", "check", "--json", "--startup", "60", "--time-bank", "30",
         "--log-dir", str(tmp_path / "logs"), "--", *command],
        cwd=java_dir, capture_output=True, text=True, timeout=600,
    )
    report = json.loads(done.stdout)
    statuses = {step["name"]: step["status"] for step in report["steps"]}
    assert done.returncode == 0, [(step["name"], step["summary"]) for step in report["steps"] if step["status"] != "PASS"]
    assert report["ok"] is True
    assert report["containment"].startswith("bubblewrap sandbox"), report["containment"]
    # Every step PASSes: none is skipped (it goes down on its first turn), none only warned about,
    # but 'turns' may warn: the JVM's compiler threads sometimes finish their work between turns.
    assert set(statuses.values()) == {"PASS"} | ({"WARN"} if statuses["turns"] == "WARN" else set()), statuses
    summaries = {step["name"]: step["summary"] for step in report["steps"]}
    assert "went out" in summaries["go out by laying off"]
    assert "laid off" in summaries["lay off: both ends of a run"]
    assert all("went down" in summaries[name] for name in statuses if name.startswith("go down:"))


def test_a_jvm_refused_its_memory_is_a_crash_at_start_up_with_its_exit_code(java_dir: Path, tmp_path: Path) -> None:
    """The JVM prints its out-of-memory error on stdout, then exits 1: a tournament must say it
    exited (and why it may have), not that its 'ready' was malformed."""
    out = tmp_path / "out"
    tfile = tmp_path / "t.yaml"
    tfile.write_text(json.dumps({
        "name": "jvm-memory", "players": 2, "seed": 1, "deals": 1, "duplicate": False,
        "rules": {"contracts": ["2S3"]}, "output": str(out), "time": {"startup": 60},
        "bots": [{"name": "java", "command": PLAIN_JAVA, "dir": str(java_dir), "limits": {"memory_mb": 48}},
                 {"name": "ref", "builtin": "random"}]}))
    done = subprocess.run([sys.executable, "-m", "arena", "run", str(tfile), "--jobs", "1"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    shown = subprocess.run([sys.executable, "-m", "arena", "show", str(out), "t000-r0-d0", "--json"],
                           capture_output=True, text=True, timeout=120)
    match = json.loads(shown.stdout)
    faults = match["faults"]
    assert [(f["kind"], f["decision"]) for f in faults] == [("crash", None)], faults
    assert match["forfeited"] == [True, False]
    detail = faults[0]["detail"]
    assert detail.startswith("exited with code 1 (memory limit 48 MB)"), detail
    # What the JVM says depends on which of its allocations fails first: its
    # error on stdout, or (seen under load) only a commit_memory warning on stderr.
    assert ("insufficient memory for the Java Runtime Environment" in detail
            or "os::commit_memory" in detail), detail
