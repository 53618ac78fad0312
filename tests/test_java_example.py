"""The Java example bot (examples/java/Bot.java) passes `arena check` in the default sandbox.

Skipped only where no JDK is installed (CI's .ci/run installs none). The bot is compiled
once with javac: `java Bot.java` would compile it again at every start, about two
CPU-seconds each.
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


def test_java_example_passes_every_check_step(tmp_path: Path) -> None:
    classes = tmp_path / "classes"
    subprocess.run(["javac", "-d", str(classes), str(BOT)], check=True, timeout=300)
    # -XX:-UsePerfData: the sandbox refuses flock(), and the JVM then prints a warning on stdout.
    # The sandbox shows the bot its working directory, not the rest of /tmp: a relative class path.
    command = ["java", "-XX:-UsePerfData", "-cp", "classes", "Bot"]
    done = subprocess.run(
        [sys.executable, "-m", "arena", "check", "--json", "--startup", "60", "--time-bank", "30",
         "--log-dir", str(tmp_path / "logs"), "--", *command],
        cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )
    report = json.loads(done.stdout)
    statuses = {step["name"]: step["status"] for step in report["steps"]}
    assert done.returncode == 0, [(step["name"], step["summary"]) for step in report["steps"] if step["status"] != "PASS"]
    assert report["ok"] is True
    # Every step PASSes: none is skipped (it goes down on its first turn), none only warned about.
    assert set(statuses.values()) == {"PASS"}, statuses
    summaries = {step["name"]: step["summary"] for step in report["steps"]}
    assert "went out" in summaries["go out by laying off"]
    assert "laid off" in summaries["lay off: both ends of a run"]
    assert all("went down" in summaries[name] for name in statuses if name.startswith("go down:"))
