"""Fixtures shared by the test modules."""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import time
import uuid
from collections.abc import Generator, Iterator
from pathlib import Path

import lanes
import pytest

REPO = Path(__file__).resolve().parent.parent
# Bots get private, empty file systems here, which would hide a test's files
# for reasons that have nothing to do with what a test checks.
PRIVATE_IN_SANDBOX = ("/tmp", "/var/tmp", "/run", "/dev/shm")


def pytest_configure(config: pytest.Config) -> None:
    # A shell without job control starts a command run in the background
    # (``cmd &``) with SIGINT ignored, and the arenas the tests start would
    # inherit that: every Ctrl-C test then fails.  They need SIGINT as a
    # terminal gives it.  (``timeout`` resets it for its command, so CI,
    # run under it, never saw this.)
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    config.addinivalue_line("markers", "long(seconds): the test's wall time on a quiet 2-core machine, roughly; "
                                       "xdist's workers start with the long ones (tests/lanes.py)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # In an xdist worker (where ``--dist`` always reads "no"); the shares are
    # cut for worksteal, the mode pyproject.toml sets.
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers > 1:
        seconds = [float(mark.args[0]) if (mark := item.get_closest_marker("long")) else 0.0 for item in items]
        items[:] = lanes.deal(items, seconds, workers)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: two workers a CPU, not one.  Measured on 2 cores, the
    suite's tests spent 1,333 s of worker time and 832 CPU-s: they wait on
    bots, Ray and browsers for about 40 % of it, and a second worker per CPU
    plays in those waits.  PYTEST_XDIST_AUTO_NUM_WORKERS still decides."""
    given = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS", "")
    return int(given) if given.isdigit() else 2 * len(os.sched_getaffinity(0))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    """With ``ARENA_TEST_CPU=DIR``: each test's CPU seconds (its worker's and
    its reaped children's: bots, arenas, Ray's daemons once ended) and wall
    seconds, setup to teardown, and its start (epoch seconds), one line each
    in DIR/WORKER.tsv.  On two
    cores CPU, not wall time, is what a faster suite has to cut, and it is
    what a loaded machine does not change (benchmarks/test_cpu.py sums it)."""
    where = os.environ.get("ARENA_TEST_CPU")
    if not where:
        yield
        return
    before, wall, started = _cpu(), time.monotonic(), time.time()     # started: to line the workers up
    yield
    own, kids = (a - b for a, b in zip(_cpu(), before))
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    Path(where).mkdir(parents=True, exist_ok=True)     # a missing DIR was an INTERNALERROR of xdist's
    with open(Path(where) / f"{worker}.tsv", "a", encoding="utf-8") as out:
        out.write(f"{item.nodeid}\t{own:.3f}\t{kids:.3f}\t{time.monotonic() - wall:.3f}\t{started:.3f}\n")


def _cpu() -> tuple[float, float]:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


@pytest.fixture(autouse=True)
def private_run_list(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Each test its own list of runs (arena.tournament.earlier): a run of one
    test with seed 7 is no earlier run of another's, and the user's own list
    is left alone.  Not through ``monkeypatch``: an autouse fixture that
    takes it would keep a test's own patches in place until after the test's
    other fixtures are torn down."""
    state = tmp_path_factory.mktemp("state")
    with _environ("XDG_STATE_HOME", str(state)):
        yield state


@pytest.fixture(autouse=True, scope="session")
def private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One cache directory for the session (the report's Vega bundle,
    arena.report.charts): reports after the first skip the bundling, and the
    user's own cache is left alone."""
    cache = tmp_path_factory.mktemp("cache")
    with _environ("XDG_CACHE_HOME", str(cache)):
        yield cache


@contextlib.contextmanager
def _environ(name: str, value: str) -> Iterator[None]:
    """``name`` set to ``value`` in this process's environment (so in every
    arena a test starts), and as it was afterwards."""
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


def _private(path: Path) -> bool:
    text = str(path.resolve())
    return any(text == p or text.startswith(p + "/") for p in PRIVATE_IN_SANDBOX)


@pytest.fixture
def visible_dir() -> Iterator[Path]:
    """A fresh directory that a sandboxed bot sees as on the host: beside the
    repository, or in the home directory when the repository is under /tmp
    (as a clean clone in CI may be)."""
    candidates = [REPO, Path.home() / ".cache" / "arena-tests"]
    parent = next((c for c in candidates if not _private(c) and os.access(c.parent, os.W_OK)), None)
    if parent is None:
        pytest.fail(f"no writable directory outside {', '.join(PRIVATE_IN_SANDBOX)}")
    parent.mkdir(parents=True, exist_ok=True)
    base = parent / f".sandbox-test-{uuid.uuid4().hex[:12]}"
    base.mkdir()
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)
