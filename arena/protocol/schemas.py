"""The protocol's JSON Schemas (draft 2020-12), shipped in the package.

One self-contained file per message, in ``arena/protocol/schemas/``:
arena -> bot ``start``, ``event``, ``request``, ``error``, ``end``, ``quit``;
bot -> arena ``ready``, ``reply_draw``, ``reply_buy``, ``reply_play`` and
``reply`` (any of the three).  Each file carries its own ``$defs``, so any
validator can use it alone.  The arena itself does not validate with them
(it parses with ``messages``); they are for bot authors and the tests.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

_DIR = "schemas"


def _files() -> Any:
    return resources.files(__package__).joinpath(_DIR)


def schema_names() -> list[str]:
    """The message names that have a schema, sorted."""
    return sorted(p.name[: -len(".json")] for p in _files().iterdir() if p.name.endswith(".json"))


def load_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of message ``name`` (e.g. ``"request"``) as a dict."""
    path = _files().joinpath(f"{name}.json")
    if not path.is_file():
        raise KeyError(f"no schema named {name!r}; known: {', '.join(schema_names())}")
    schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return schema
