"""Before a tournament's bots start: its seed settled, its bot programs and
builds checked, its sandbox resolved, and what the sandbox must hide made
sure of.  Each problem is a ``TournamentError``: one line, nothing played."""

from __future__ import annotations

import errno
import logging
import os
import secrets
import shlex
import shutil
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from .. import logsetup
from ..process.confine import sandbox
from .config.model import BotConfig, TournamentConfig
from .earlier import runs_file, same_seed_runs
from .results.database import DEFAULT_DB_NAME, ResultStore, StoreError

LOG = logging.getLogger(__name__)

SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".rb", ".pl", ".sh", ".jar", ".php", ".lua")


class TournamentError(Exception):
    """A one-line reason the tournament cannot run (the CLI shows it as is)."""


def db_path(config: TournamentConfig) -> Path:
    return config.output / DEFAULT_DB_NAME


def check_bots(config: TournamentConfig) -> None:
    """Every bot program must exist and be runnable before any bot starts."""
    problems = bot_problems(config)
    if problems:
        raise TournamentError(problems[0][1])


def check_startable(config: TournamentConfig) -> None:
    """``check_bots``; with ``--forfeit-unstartable``, a warning per bot that cannot
    be started instead (each of its seats is then forfeited at start-up)."""
    if not config.forfeit_unstartable:
        check_bots(config)
        return
    for name, problem in bot_problems(config):
        warn(f"{problem}; {name} forfeits every match it sits in (--forfeit-unstartable)")


def start_problems(config: TournamentConfig, rerun: Sequence[str] = ()) -> tuple[list[str], list[str]]:
    """Before a run prints its estimate, or as ``--dry-run``'s check: one line
    per bot whose program cannot start, as (refused, forfeiting): those a
    run stops on, and those that forfeit their matches (``--forfeit-unstartable``,
    except bots ``rerun`` replays).  A bot with a ``build:`` is left to the
    run, which builds it first."""
    built = {bot.name for bot in config.bots if bot.build}
    found = [(name, problem) for name, problem in bot_problems(config) if name not in built]
    refused = [problem for name, problem in found if name in rerun or not config.forfeit_unstartable]
    forfeiting = [f"{problem}; {name} forfeits every match it sits in (--forfeit-unstartable)"
                  for name, problem in found if name not in rerun and config.forfeit_unstartable]
    return refused, forfeiting


def bot_problems(config: TournamentConfig) -> list[tuple[str, str]]:
    """(bot, one line naming it, its line of the file and what to write) for each
    bot whose program cannot be started, in the file's order."""
    return [(bot.name, problem) for bot in config.bots
            if bot.command is not None and (problem := _bot_problem(config, bot)) is not None]


def _bot_problem(config: TournamentConfig, bot: BotConfig) -> str | None:
    assert bot.command is not None
    program = bot.command[0]
    cwd = bot.dir or config.dir
    found = shutil.which(program) if "/" not in program else (
        program if (cwd / program).exists() or Path(program).exists() else None)
    where = f"{config.path}:{bot.line}" if bot.line else str(config.path)
    if found is None:
        spaced = sandbox.spaced_hint(bot.command, str(cwd), key="command: ")
        hint = f"not found; {spaced}" if spaced else \
            sandbox.not_on_path_hint(program, str(cwd))
        return (f"{where}: bots.{bot.name}.command: program {program!r} "
                + (hint if hint else f"not found (command: {shlex.join(bot.command)}, run in {cwd})"))
    # An interpreter's script is the usual typo: check it too.
    for arg in bot.command[1:2]:
        if arg.endswith(SCRIPT_SUFFIXES) and not (cwd / arg).exists():
            return f"{where}: bots.{bot.name}.command: script {arg!r} not found in {cwd}"
    problem = sandbox.preflight(bot.command, str(cwd), sandbox.bot_environment(os.environ, dict(bot.env)))
    if isinstance(problem, FileNotFoundError) and "/" in program and (cwd / program).is_file():
        why = sandbox.crlf_hint(str(cwd / program)) or "its interpreter (#! line) was not found"
        return f"{where}: bots.{bot.name}.command: {program!r} cannot be run: {why}"
    if isinstance(problem, PermissionError):
        return f"{where}: bots.{bot.name}.command: {program!r} is {sandbox.not_executable_hint(program)}"
    if problem is not None and problem.errno == errno.ENOEXEC:
        return f"{where}: bots.{bot.name}.command: {program!r} cannot be run: {sandbox.no_shebang_hint(program)}"
    return _write_problem(config, bot, where)


def _write_problem(config: TournamentConfig, bot: BotConfig, where: str) -> str | None:
    """A ``write:`` folder the sandboxed bot's user cannot write (nobody's, when arena runs as root)."""
    if config.sandbox == sandbox.NONE:
        return None
    for path in bot.sandbox.write:
        if path.is_dir() and not sandbox.usable(str(path), os.W_OK | os.X_OK):
            uid = sandbox.bot_user()[0]
            return (f"{where}: bots.{bot.name}.sandbox.write: {path} is not writable by uid {uid}, the user "
                    f"bots run as (chown {uid} {path}, or chmod o+rwx {path})")
    return None


def warn(message: str) -> None:
    LOG.warning("%s", message)


def settle_seed(config: TournamentConfig) -> TournamentConfig:
    """The file's seed; without one, the seed stored by an earlier run of this
    tournament, else a new random 63-bit one.  Bots see their match names,
    from which with the seed every deal follows, so the seed must not be
    guessable: a fixed default would tell every bot every hand."""
    if config.seed is not None:
        return config
    path = db_path(config)
    if path.exists():
        try:
            store = ResultStore(path, readonly=True)      # --dry-run reads it too: never migrated here
        except StoreError:
            store = None
        if store is not None:
            try:
                stored = store.tournament()
            finally:
                store.close()
            if stored is not None and isinstance(stored.get("seed"), int):
                return config.with_overrides(seed=stored["seed"])
    return config.with_overrides(seed=secrets.randbits(63))


#: Seeds below this (in size) a bot can find by trying them one by one until
#: one deals its own first hand (about 0.2 ms a try), or look up in a table
#: made beforehand: then it knows every hand and the stock's order.
GUESSABLE_SEED = 2 ** 32


def warn_guessable_seed(config: TournamentConfig, warn: Callable[[str], None] = warn) -> None:
    """Warn, before bot programs play, that the run's seed is small enough to
    guess (``GUESSABLE_SEED``).  A seed arena draws itself is 63 bits."""
    assert config.seed is not None
    if abs(config.seed) >= GUESSABLE_SEED or not any(bot.command for bot in config.bots):
        return
    warn(f"seed {config.seed} is small: a bot can find it by trying seeds until one deals its own hand, and then "
         f"know every hand; for a competition leave 'seed' out (arena draws a 63-bit one and stores it) or give "
         f"a large random one (python3 -c 'import secrets; print(secrets.randbits(63))')")


def hide_machine_state(config: TournamentConfig) -> TournamentConfig:
    """``config`` with what this machine holds that its bots must not see,
    beyond what the file names: the version-control folders of the repository
    holding the tournament file (their history holds the seed, from which
    every deal follows), arena's own log (``--log-file``: at -vv every hand as
    it is dealt) and the list of runs (it names every run's results and file).
    Found here, at the run's set-up, so that the config stays a value of
    its file; adding them twice changes nothing."""
    found = _repositories(config.path.absolute().parent)
    for path in (logsetup.log_file(), runs_file()):
        if path is not None:
            found.append(Path(path))
    new = tuple(p for p in found if p not in config.also_hidden)
    return replace(config, also_hidden=(*config.also_hidden, *new)) if new else config


def _repositories(start: Path) -> list[Path]:
    """The version-control directories of the repository holding ``start``."""
    for folder in (start, *start.parents):
        found = [folder / name for name in (".git", ".hg", ".svn") if (folder / name).exists()]
        if found:
            return found
    return []


def hide_earlier_runs(config: TournamentConfig, sandbox_mode: str, echo: Callable[[str], None]) -> TournamentConfig:
    """The results and tournament file of each earlier run with this run's
    seed, hidden from its sandboxed bots (``earlier``), and the organiser
    told so in one line."""
    assert config.seed is not None
    if sandbox_mode != sandbox.BWRAP or not any(bot.command for bot in config.bots):
        return config
    runs = same_seed_runs(config.seed, config.output)
    if not runs:
        return config
    own_file = config.path.absolute()
    named = [f"{run.output}" + ("" if run.tournament_file == own_file else f" (and {run.tournament_file})")
             for run in runs]
    shown = ", ".join(named[:2]) + (f" and {len(named) - 2} more" if len(named) > 2 else "")
    which = "an earlier run with this seed, which holds" if len(runs) == 1 else \
        f"{len(runs)} earlier runs with this seed, which hold"
    echo(f"hiding from the bots {which} this run's deals: {shown}")
    hidden = tuple(p for run in runs for p in (run.output, run.tournament_file))
    return replace(config, also_hidden=(*config.also_hidden, *hidden))


def hold_to_sandbox(config: TournamentConfig, store: ResultStore, record: bool = True) -> None:
    """Refuse (StoreError) to play into ``store`` under another sandbox than
    its stored matches were played under, and (``record``) store the one
    this run plays under if none is: ``auto`` resolves by machine.  Only
    bot programs are sandboxed: a field of built-in players has none to hold."""
    if not any(bot.command for bot in config.bots):
        return
    try:
        mode = sandbox.resolve(config.sandbox).mode
    except sandbox.SandboxUnavailable as exc:
        raise TournamentError(f"{config.path}: sandbox: {exc}") from None
    store.settle_sandbox(config.sandbox, mode, record=record)


def prepare_sandbox(config: TournamentConfig, warn: Callable[[str], None] = warn) -> str:
    """Resolve the file's sandbox mode once, here, so workers need not probe;
    with bot programs to sandbox, build the seccomp filter too (workers forked
    from here inherit both); make the scratch directories.  Returns the mode
    bots run under."""
    programs = any(bot.command for bot in config.bots)
    try:
        containment = (sandbox.prepare if programs else sandbox.resolve)(config.sandbox)
    except sandbox.SandboxUnavailable as exc:
        raise TournamentError(f"{config.path}: sandbox: {exc}") from None
    if containment.warning:
        warn(containment.warning)
    if containment.mode == sandbox.BWRAP:
        check_results_hidden(config)
    for bot in config.bots:
        if bot.sandbox.scratch:
            config.scratch_dir(bot.name).mkdir(mode=0o700, parents=True, exist_ok=True)
    return containment.mode


def check_results_hidden(config: TournamentConfig) -> None:
    """The sandbox hides the results directory (the seed, every stored match,
    the other bots' stderr logs as they are written) from every bot, but
    never a directory holding what a bot needs (its own directory, program or
    script): a bot living inside ``out`` would see it all."""
    for bot in config.bots:
        if bot.command is None:
            continue
        cwd = os.fspath(bot.dir or config.dir)
        env = sandbox.bot_environment(os.environ, dict(bot.env))
        inside = sandbox.exposed(os.fspath(config.output), bot.command, cwd, env)
        if inside is not None:
            line = config.line_of("out")
            where = f"{config.path}:{line}" if line else str(config.path)
            raise TournamentError(
                f"{where}: out: the results directory {config.output} holds {inside}, which "
                f"bot {bot.name} runs from, so the sandbox cannot hide the results (the seed, "
                f"every stored match, the other bots' logs) from it; put the results elsewhere")


def run_builds(config: TournamentConfig, echo: Callable[[str], None]) -> None:
    """Run each bot's build command once, in its directory; stop at the first failure."""
    for bot in config.bots:
        if not bot.build:
            continue
        cwd = bot.dir or config.dir
        echo(f"building {bot.name}: {bot.build}")
        proc = subprocess.run(bot.build, shell=True, cwd=cwd, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            raise TournamentError(
                f"bots.{bot.name}.build: '{bot.build}' failed with exit code {proc.returncode}: {tail[0]}"
            )
