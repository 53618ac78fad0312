"""A version's life: handed in (``submit``), checked (``check_waiting``), playing, retired.

``submit`` copies the author's folder into the store and registers the copy
as the author's next version.  ``check_waiting`` runs ``arena check``'s
scenarios (``arena.check.check_bot``) on every version not yet checked, in
the sandbox and with the time control its matches will have: a version that
fails any step is refused, with the steps it failed as its reasons, and is
never played; one that passes plays, and its author's older versions retire.
House players (``builtin:`` authors) are registered as playing, unchecked.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from pathlib import Path

from ..tournament.config.model import BotConfig, TournamentConfig
from .config import LeagueConfig, LeagueError
from .register import PLAYING, RETIRED, SUBMITTED, Register, Version
from .store import STORE, store_version

__all__ = ["check_waiting", "league_tournament", "register_house", "submit", "version_bot"]

LOG = logging.getLogger(__name__)


def submit(config: LeagueConfig, author: str, source: Path, command: tuple[str, ...] | None = None) -> Version:
    """Store ``source`` as ``author``'s next version (not yet checked)."""
    entry = config.author(author)
    if entry.builtin is not None:
        raise LeagueError(f"{config.path}:{entry.line}: authors: {author} is the house player "
                          f"'builtin: {entry.builtin}'; nothing of theirs is handed in")
    digest, _ = store_version(config.dir, source)
    with Register(config.dir) as register:
        return register.add_version(author, digest, command or entry.command)


def register_house(config: LeagueConfig, register: Register) -> None:
    """Each builtin author of the file has its one version, playing."""
    known = {v.author for v in register.versions()}
    for author in config.authors:
        if author.builtin is not None and author.name not in known:
            register.add_version(author.name, None, None, builtin=author.builtin, status=PLAYING)


def version_bot(config: LeagueConfig, version: Version) -> BotConfig:
    """The version as a tournament's bot: its author's entry, named after the
    version, run in its own folder of the store with the command it was handed in with."""
    if version.builtin is not None:
        return BotConfig(name=version.name, builtin=version.builtin)
    try:
        entry = config.author(version.author)
    except LeagueError:      # an author since taken out of the file: their versions still play as handed in
        entry = BotConfig(name=version.author)
    assert version.played is not None
    return dataclasses.replace(entry, name=version.name, command=version.command, builtin=None,
                               dir=config.dir / STORE / version.played)


def league_tournament(config: LeagueConfig, versions: list[Version]) -> TournamentConfig:
    """The league as a tournament of ``versions``: every stored version's folder
    is hidden from every other version's sandbox (``sandbox_policy``), and the
    register, and what a built version was built from, are hidden from all."""
    bots = tuple(version_bot(config, v) for v in versions)
    played = {v.played for v in versions}
    sources = sorted({v.digest for v in versions if v.built and v.digest and v.digest not in played})
    hidden = (config.dir / "league.sqlite", *(config.dir / STORE / d for d in sources))
    return dataclasses.replace(config.tournament(bots), also_hidden=hidden)


def check_waiting(config: LeagueConfig, register: Register, sandbox_mode: str | None = None,
                  echo: Callable[[str], None] = LOG.info) -> list[Version]:
    """Check every submitted version, oldest first; the versions checked, as they are now."""
    # lazy: the checker runs matches in this process (the match runner, the engine): only when there is one to check
    from ..check import FAIL, check_bot

    done = []
    for version in register.versions(SUBMITTED):
        log_dir = config.results / "logs" / "checks" / version.name
        log_dir.mkdir(parents=True, exist_ok=True)
        failed = _built(config, register, version, sandbox_mode, log_dir)
        if not failed:
            everyone = [v for v in register.versions() if v.builtin is None]
            spec = league_tournament(config, everyone).bot_spec(version.name, sandbox_mode)
            report = check_bot(spec, time_control=config.time, log_dir=str(log_dir))
            failed = [f"{s.name}: {s.summary}" for s in report.steps if s.status == FAIL]
        if failed:
            register.refuse(version.name, failed)
            echo(f"{version.name} refused: " + (failed[0] if failed[0].startswith("build: ") else
                                                f"it failed {len(failed)} step(s) of arena check"))
        else:
            retired = register.admit(version.name)
            now = register.version(version.name)
            if now.status == RETIRED:
                echo(f"{version.name} passed its check, but a newer version of {version.author} plays already")
            else:
                echo(f"{version.name} passed its check and plays" +
                     (f"; retired {', '.join(retired)}" if retired else ""))
        done.append(register.version(version.name))
    return done


def _built(config: LeagueConfig, register: Register, version: Version, sandbox_mode: str | None,
           log_dir: Path) -> list[str]:
    """Run the version's build step, if its author has one: the reasons it
    refuses the version (none: built, and what it left is recorded to be played)."""
    build = config.build_of(version.author)
    if build is None or version.digest is None:
        return []
    # lazy: a build starts a process (the process layer), which only a league with builds needs
    from .build import BuildFailed, build_version

    everyone = [v for v in register.versions() if v.builtin is None]
    spec = league_tournament(config, everyone).bot_spec(version.name, sandbox_mode)
    try:
        built = build_version(config, version, build, spec, log_dir)
    except BuildFailed as failed:
        return failed.reasons
    register.set_built(version.name, built)
    return []
