"""Authors' tokens for submissions over HTTP, kept in the league file as hashes.

A token is 256 random bits (``secrets.token_urlsafe(32)``), shown once, when
it is made; the file keeps only ``sha256:`` and the hex of its SHA-256.  A
plain hash is enough here, unlike for a password: nobody can guess 256 random
bits, so a slow hash (scrypt) would only slow every request down.  A token
is compared through its hash with ``hmac.compare_digest``, against every
author's, so neither the time taken nor an early exit tells which author, or
how much of a hash, matched.

``set_token`` edits the league file as text, at the author's entry the YAML
composer found, so its comments and layout stay as the organiser wrote them;
the file is read back before it replaces the old one, and written whole
(a temporary file renamed into place).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import tempfile
from pathlib import Path

from yaml.nodes import MappingNode, Node, ScalarNode

from ..tournament.config.bounded import read_text
from ..tournament.config.model import ConfigError
from ..tournament.config.reader import compose
from .config import LeagueConfig, LeagueError, read_league

__all__ = ["author_of", "new_token", "set_token", "token_hash"]

PREFIX = "sha256:"


def new_token() -> str:
    """A fresh token: 256 random bits, URL-safe (43 characters)."""
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return PREFIX + hashlib.sha256(token.encode("utf-8")).hexdigest()


def author_of(config: LeagueConfig, token: str) -> str | None:
    """The author whose token this is, or None."""
    given = token_hash(token).encode("ascii")
    found = None
    for author, stored in config.tokens:
        if hmac.compare_digest(given, stored.encode("ascii")) and found is None:
            found = author
    return found


def set_token(config: LeagueConfig, author: str) -> str:
    """A new token for ``author``, its hash written under the author in the
    league file (replacing any earlier one); the token."""
    entry = config.author(author)
    if entry.builtin is not None:
        raise LeagueError(f"{config.path}:{entry.line}: authors: {author} is the house player "
                          f"'builtin: {entry.builtin}'; nothing of theirs is handed in")
    shown = os.fspath(config.path)
    text = read_text(shown, "a YAML file")
    token = new_token()
    edited = _with_token(text, _author_node(compose(shown, text), author), token_hash(token))
    folder = config.path.parent
    handle, temporary = tempfile.mkstemp(prefix=".league-", suffix=".yaml", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(edited)
        os.chmod(temporary, config.path.stat().st_mode & 0o777)
        try:
            read_league(Path(temporary))
        except ConfigError as err:      # not expected: the edit is one key; say so rather than write it
            raise LeagueError(f"{shown}: cannot add the token: the edited file would not load ({err})") from None
        os.replace(temporary, config.path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return token


def _author_node(root: Node | None, author: str) -> MappingNode:
    """The author's entry in the composed file (the file was read as a league before: it has one)."""
    assert isinstance(root, MappingNode)
    for key, value in root.value:
        if isinstance(key, ScalarNode) and key.value == "authors":
            for item in value.value:
                for k, v in item.value:
                    if isinstance(k, ScalarNode) and k.value == "name" and v.value == author:
                        return item
    raise LeagueError(f"no author {author!r} in the league file")


def _with_token(text: str, entry: MappingNode, hashed: str) -> str:
    """``text`` with the entry's ``token`` set to ``hashed``: the value replaced
    if it has one, else a key added just after its name."""
    for key, value in entry.value:
        if isinstance(key, ScalarNode) and key.value == "token":
            return text[:value.start_mark.index] + hashed + text[value.end_mark.index:]
    name_key, name_value = next((k, v) for k, v in entry.value if k.value == "name")
    at = name_value.end_mark.index
    if entry.flow_style:
        added = f", token: {hashed}"
    else:
        added = f"\n{' ' * name_key.start_mark.column}token: {hashed}"
    return text[:at] + added + text[at:]
