"""A version's build step (``build:`` in the league file), run in the sandbox before its check.

The stored copy of a version is read-only and is what was handed in, so the
build runs in a writable copy of it, in a temporary folder of the store:
``/bin/sh -c COMMAND`` started as the version's matches start it (the same
``BotSpec``: its author's environment, the league's sandbox, which hides the
results, the register and every other version's folder), with that copy
its working folder and the one folder it may write, and with the build's own
limits (``memory_mb``; ``seconds`` of CPU per process and of wall-clock time
in all, after which it is killed).  Everything it prints, on stdout or
stderr, goes to ``DIR/results/logs/checks/VERSION/build.log``.

What it leaves is stored as any version is (content-addressed, read-only),
and played from then on.  A build that cannot start, fails, or runs over its
time refuses the version: its reasons are what happened and the last lines
the build printed.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import time
from pathlib import Path

from ..process import BotSpec, PipeTransport
from ..process.confine.sandbox import BWRAP, bot_user, resolve
from ..process.errors import BotStartupError
from ..process.transport import TransportSetup
from .config import Build, LeagueConfig, LeagueError
from .register import BUILD_OUTPUT, Version
from .store import STORE, store_version

__all__ = ["BUILD_LOG", "BuildFailed", "build_version"]

BUILD_LOG = "build.log"
TAIL_LINES = 10          # of the build's output, in the reasons of a refusal
POLL_SECONDS = 0.05
STARTUP_SECONDS = 30.0


class BuildFailed(LeagueError):
    """The build refused the version: ``reasons`` as the register keeps them."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__(reasons[0])
        self.reasons = reasons


def build_version(config: LeagueConfig, version: Version, build: Build, spec: BotSpec, log_dir: Path) -> str:
    """Build ``version`` (``spec``: how its matches start it); the digest of what the build left in the store."""
    assert version.digest is not None
    store = config.dir / STORE
    work = Path(tempfile.mkdtemp(prefix=".build-", dir=store))
    try:
        shutil.copytree(store / version.digest, work, dirs_exist_ok=True, copy_function=shutil.copyfile)
        _give(work, spec)
        log = log_dir / BUILD_LOG
        why = _run(build, spec, work, log)
        if why is not None:
            raise BuildFailed([f"build: {why}", *_tail(log)])
        try:
            digest, _ = store_version(config.dir, work)
        except LeagueError as err:
            raise BuildFailed([f"build: what it left cannot be stored: {err}"]) from None
        return digest
    except OSError as exc:
        raise BuildFailed([f"build: cannot prepare its folder: {exc.strerror or exc}"]) from None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _give(work: Path, spec: BotSpec) -> None:
    """Make the copy the build's to write: in the sandbox, an arena running as
    root runs bots as nobody, who must own it."""
    owner = bot_user() if os.geteuid() == 0 and resolve(spec.sandbox.mode).mode == BWRAP else None
    for root, dirs, files in os.walk(work):
        for name in [root, *(os.path.join(root, f) for f in dirs + files)]:
            os.chmod(name, 0o755 if os.path.isdir(name) or os.access(name, os.X_OK) else 0o644)
            if owner is not None:
                os.chown(name, *owner)


def _run(build: Build, spec: BotSpec, work: Path, log: Path) -> str | None:
    """Run the build; None if it succeeded, else what went wrong."""
    policy = spec.sandbox.replace(write=(*spec.sandbox.write, str(work)))
    own = dataclasses.replace(spec, argv=("/bin/sh", "-c", f"exec 1>&2\n{build.command}"), cwd=str(work),
                              memory_mb=build.memory_mb, cpu_seconds=build.seconds, sandbox=policy,
                              turn_guard=False)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.unlink(missing_ok=True)
    transport = PipeTransport(own, TransportSetup(name="build", label="build", stderr_log=log,
                                                  startup_seconds=STARTUP_SECONDS, turns_taken=lambda: 0))
    try:
        transport.start()
    except BotStartupError as err:
        return f"cannot start: {err}"
    try:
        deadline = time.monotonic() + build.seconds
        while transport.alive and time.monotonic() < deadline:
            time.sleep(POLL_SECONDS)
        overran = transport.alive
    finally:
        code = transport.close(None, grace=0.0, term_grace=0.0)
    if overran:
        return f"ran over its {build.seconds:g} s and was stopped: {build.command}"
    if code != 0:
        return f"{build.command}: {transport.exit_description or f'exit status {code}'}"
    return None


def _tail(log: Path) -> list[str]:
    """The last lines the build printed."""
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    lines = [line.rstrip() for line in text.splitlines() if line.strip()]
    return [f"{BUILD_OUTPUT}{line}" for line in lines[-TAIL_LINES:]]
