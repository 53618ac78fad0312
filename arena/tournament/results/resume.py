"""How the configuration stored with results is compared with a file's,
for a resume: canonical JSON, settings renamed or added since results were
stored (compared so that older results still resume), and what the
sandbox mode resolved to where the stored matches were played."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ...words import plural
from ..config.diff import differences


def canonical_json(config: str | Mapping[str, Any]) -> str:
    value = json.loads(config) if isinstance(config, (str, bytes)) else config
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# Settings that older versions stored under another name (section, old, new):
# read under today's, so that their results still resume and show as today's.
RENAMED_SETTINGS = (("time", "per_move", "per_decision"),)


# Settings stored since a later version: a stored configuration without one
# was stored before it existed, and is compared without it (its value then
# is not known), so that its results still resume.  ``ADDED_BOT_SETTINGS``
# are a bot program's (its ``sandbox`` grants), compared so bot by bot.
ADDED_SETTINGS = ("sandbox",)
ADDED_BOT_SETTINGS = ("sandbox",)

# Not a setting of the file but a fact of the run, stored with its
# configuration: what the file's sandbox mode resolved to where its matches
# were played (``auto`` is bubblewrap on one machine, nothing on another).
# Compared by ``settle_sandbox``, never as a changed key.
RESOLVED_SANDBOX = "sandbox_resolved"
AUTO_SANDBOX = "auto"       # the mode that resolves differently by machine (process.confine.sandbox.AUTO)
RESOLVED_MODES = ("bwrap", "none")      # what a mode resolves to (process.confine.sandbox.BWRAP, NONE)


def without_unstored(stored: Any, config: str) -> str:
    """``config`` (canonical JSON) without the ``ADDED_SETTINGS`` (and each
    bot's ``ADDED_BOT_SETTINGS``) that ``stored`` lacks, and with its sandbox
    mode as stored when the two mean the same (``_same_sandbox``)."""
    if not isinstance(stored, dict):
        return config
    given = json.loads(config)
    if not isinstance(given, dict):
        return config
    given = {k: v for k, v in given.items() if k in stored or k not in ADDED_SETTINGS}
    stored_bots = {b.get("name"): b for b in stored.get("bots") or () if isinstance(b, dict)}
    if isinstance(given.get("bots"), list):
        given["bots"] = [_bot_without_unstored(stored_bots.get(b.get("name")), b) if isinstance(b, dict) else b
                         for b in given["bots"]]
    if _same_sandbox(stored, given.get("sandbox")):
        given["sandbox"] = stored["sandbox"]
    return canonical_json(given)


def _bot_without_unstored(stored: Any, given: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(stored, dict) or "command" not in stored:
        return given       # a bot added, or a built-in player: compared as it is
    return {k: v for k, v in given.items() if k in stored or k not in ADDED_BOT_SETTINGS}


def _same_sandbox(stored: dict[str, Any], given: Any) -> bool:
    """Whether the file's mode ``given`` means what the stored one meant:
    ``auto`` that resolved to bwrap, and ``bwrap``, are one sandbox (so an
    organiser can name the mode the stored matches ran under); whether
    ``auto`` resolves here as it did there is ``settle_sandbox``'s to check."""
    resolved = stored.get(RESOLVED_SANDBOX)
    if resolved not in RESOLVED_MODES:
        return False
    return stored.get("sandbox") in (AUTO_SANDBOX, resolved) and given in (AUTO_SANDBOX, resolved)


def current_config(config: Any) -> Any:
    """A stored configuration with the old names of ``RENAMED_SETTINGS`` replaced."""
    if not isinstance(config, dict):
        return config
    out = dict(config)
    for section, old, new in RENAMED_SETTINGS:
        part = out.get(section)
        if isinstance(part, dict) and old in part and new not in part:
            out[section] = {(new if k == old else k): v for k, v in part.items()}
    return out


def seating_differences(stored: str, given: str) -> list[str]:
    """``differences`` of two stored configurations, each read with the
    seating it was played with: absent is ``rotate`` (it is stored only when
    not, so that results stored before the key existed compare equal)."""
    old, new = json.loads(stored), json.loads(given)
    for side in (old, new):
        if isinstance(side, dict):
            side.setdefault("seating", "rotate")
    return differences(old, new)


def config_changes(stored: str, given: str, shown: int = 2) -> str:
    """`` (key: was X, now Y; ...)``: what differs, the first few."""
    found = seating_differences(stored, given)
    if not found:
        return ""
    more = f"; and {plural(len(found) - shown, 'more difference')}" if len(found) > shown else ""
    return f" ({'; '.join(found[:shown])}{more})"
