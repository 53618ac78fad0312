"""What changed between two tournament configurations (their JSON forms):
the stored results refuse a changed file, and an organiser who fixed a typo
in a bot's command needs to see which key it was."""

from __future__ import annotations

import json
from typing import Any

SHOWN_CHARS = 60


def differences(old: Any, new: Any, path: str = "") -> list[str]:
    """``key.path: was X, now Y`` for each value that differs, in key order.
    A list of named entries (the bots) is compared by name."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for key in [*old, *(k for k in new if k not in old)]:
            where = f"{path}.{key}" if path else str(key)
            if key not in new:
                out.append(f"{where}: was {_shown(old[key])}, now not given")
            elif key not in old:
                out.append(f"{where}: now {_shown(new[key])}, not given before")
            else:
                out += differences(old[key], new[key], where)
        return out
    if isinstance(old, list) and isinstance(new, list) and old != new:
        names_old, names_new = _names(old), _names(new)
        if names_old is not None and names_old == names_new:
            return [d for name, a, b in zip(names_old, old, new) for d in differences(a, b, f"{path}.{name}")]
        if names_old is not None and names_new is not None and len(names_old) != len(names_new):
            return _named_changes(old, new, names_old, names_new, path)
        if len(old) == len(new) and all(isinstance(a, (dict, list)) for a in old):
            return [d for i, (a, b) in enumerate(zip(old, new)) for d in differences(a, b, f"{path}[{i}]")]
    return [] if old == new else [f"{path}: was {_shown(old)}, now {_shown(new)}"]


def _named_changes(old: list[Any], new: list[Any], names_old: list[str], names_new: list[str],
                   path: str) -> list[str]:
    """A bot added or removed: by name (the whole lists, cut at SHOWN_CHARS,
    would share their first characters and show nothing), then what changed
    in the bots both hold."""
    out = [f"{path}: {name} added" for name in names_new if name not in names_old]
    out += [f"{path}: {name} removed" for name in names_old if name not in names_new]
    by_name = dict(zip(names_new, new))
    for name, entry in zip(names_old, old):
        if name in by_name:
            out += differences(entry, by_name[name], f"{path}.{name}")
    kept_old = [n for n in names_old if n in by_name]
    if kept_old != [n for n in names_new if n in names_old]:
        out.append(f"{path}: order changed")
    return out


def _names(entries: list[Any]) -> list[str] | None:
    if all(isinstance(e, dict) and isinstance(e.get("name"), str) for e in entries):
        return [e["name"] for e in entries]
    return None


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SHOWN_CHARS else text[:SHOWN_CHARS] + "..."
