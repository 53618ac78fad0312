"""Bots that can read each other's files: a warning before a run.

The sandbox hides from a bot the other bots' directories, programs and
scripts, but never a folder that holds what the bot itself runs from: two
bots with one ``dir:`` (or dirs that nest) see each other's files there, all
but their programs and scripts.  An organiser rarely means that.

arena cannot know which files are whose; a bot's own files (its modules, its
opening book, its weights) usually lie beside its program.  So the warning is
for a folder holding a bot's program or script that another sandboxed bot
can read, when it holds a file other than the bots' programs and scripts and
their documentation (README, LICENSE, COPYING: written to be read).  Bots
run from a common tree with each program in a folder of its own (the demo
tournament, from the repository root) are left alone: each program's folder
is hidden from the others.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..process.confine import sandbox
from ..process.confine.sandbox_policy import NONE, SandboxPolicy, View, bot_places, needs, view
from .config.model import TournamentConfig

# Files written to be read by anyone: not a bot's secret.
_DOCUMENTS = ("readme", "license", "licence", "copying")
# How many entries of a folder to look at before giving up (a huge folder).
_MAX_ENTRIES = 20_000


@dataclass(frozen=True)
class _Sight:
    """What bot ``reader`` sees of the folders around it: its own folders,
    and its sandbox's ``View``, from the very mounts the sandbox makes."""

    own_folders: tuple[str, ...]
    view: View

    def hides(self, path: str) -> bool:
        return self.view.hides(path)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


@dataclass(frozen=True)
class SharingBot:
    """One bot program as its sandbox starts it: ``label`` names it in a
    warning ("alice", or a command line for ``arena play``); ``cwd`` None is
    the arena's own working directory."""

    label: str
    argv: tuple[str, ...]
    cwd: str | None
    env: tuple[tuple[str, str], ...]
    policy: SandboxPolicy

    @property
    def workdir(self) -> str:
        return os.path.abspath(self.cwd) if self.cwd is not None else os.getcwd()


def _sight(bot: SharingBot) -> _Sight:
    """The bot's own folders and what its sandbox shows, as the sandbox
    itself works them out (``sandbox.command``)."""
    folders, files = needs(bot.argv, bot.workdir, sandbox.bot_environment(os.environ, dict(bot.env)))
    return _Sight(tuple(folders), view(folders, bot.policy, files))


def _program_folders(bot: SharingBot) -> list[str]:
    """The folders of the programs and scripts a bot's command names by path
    (not shared ones such as /usr/bin, which ``bot_places`` leaves out)."""
    places = bot_places(bot.argv, bot.cwd)
    return [os.path.dirname(p) for p in places if os.path.isfile(p) and os.path.dirname(p) in places]


def _foreign_file(folder: str, reader: _Sight, programs: frozenset[str]) -> str | None:
    """A file in ``folder`` that ``reader`` can read and that is no bot's
    program or script, document, nor inside ``reader``'s own folders below it."""
    seen = 0
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not _skipped(os.path.join(root, d), folder, reader))
        for name in sorted(files):
            seen += 1
            path = os.path.join(root, name)
            if seen > _MAX_ENTRIES:
                return None
            if (path not in programs and not name.lower().startswith(_DOCUMENTS)
                    and not reader.hides(path) and os.path.isfile(path)):
                return path
    return None


def _skipped(path: str, top: str, reader: _Sight) -> bool:
    return reader.hides(path) or any(_within(path, f) and f != top for f in reader.own_folders)


def _exposures(bots: Sequence[SharingBot]) -> Iterator[tuple[SharingBot, SharingBot, str, str]]:
    """(owner, reader, folder, example file): ``reader`` can read a file in
    a folder holding ``owner``'s program."""
    programs = frozenset(p for b in bots for p in bot_places(b.argv, b.cwd) if os.path.isfile(p))
    sights = {b.label: _sight(b) for b in bots}
    for owner in bots:
        for folder in dict.fromkeys(_program_folders(owner)):
            for reader in bots:
                if reader is owner or sights[reader.label].hides(folder):
                    continue
                found = _foreign_file(folder, sights[reader.label], programs)
                if found is not None:
                    yield owner, reader, folder, found


def _beside(reader: SharingBot, folder: str) -> bool:
    """Whether ``folder`` holds ``reader``'s own program, or lies in its folder."""
    return any(_within(folder, f) or _within(f, folder) for f in _program_folders(reader))


def folder_warnings(bots: Sequence[SharingBot], advice: str, programs_only: bool = False) -> list[str]:
    """One line per pair of sandboxed bots (distinct labels) that can read
    each other's files (or one the other's), ending with ``advice``; bots
    without a sandbox read everything anyway (and are warned of that).

    ``programs_only`` (``arena play``): only where the programs themselves
    share a folder, not where a bot sees another's folder because it is
    the working directory they all run in: a student playing from their
    own folder against the shipped bots is not told their bot's files
    are open to the shipped ones."""
    confined = [b for b in bots if b.policy.mode != NONE]
    pairs: dict[frozenset[str], list[tuple[SharingBot, SharingBot, str, str]]] = {}
    for exposure in _exposures(confined):
        if programs_only and not _beside(exposure[1], exposure[2]):
            continue
        pairs.setdefault(frozenset((exposure[0].label, exposure[1].label)), []).append(exposure)
    order = {b.label: i for i, b in enumerate(confined)}
    lines = []
    for found in pairs.values():
        owner, reader, folder, example = found[0]
        first, second = sorted((owner.label, reader.label), key=order.__getitem__)
        if {f[0].label for f in found} == {owner.label, reader.label}:
            who = f"bots {first} and {second} can read each other's files in {folder}"
        else:
            who = (f"bot {reader.label} can read bot {owner.label}'s files in {folder}, the folder of "
                   f"{owner.label}'s program")
        lines.append(f"{who} (such as {os.path.relpath(example, folder)}): the sandbox hides the other "
                     f"bots' programs and scripts, not a folder that holds what a bot runs from; {advice}")
    return lines


def shared_folder_warnings(config: TournamentConfig) -> list[str]:
    """``folder_warnings`` for the bot programs of a tournament; empty
    without a sandbox."""
    if config.sandbox == NONE:
        return []
    bots = [SharingBot(b.name, b.command, os.fspath(b.dir) if b.dir is not None else None, b.env,
                       config.sandbox_policy(b.name))
            for b in config.bots if b.command is not None]
    return folder_warnings(bots, "give each bot a folder of its own (its dir:, with its program in it)")
