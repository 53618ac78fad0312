"""HTML pages from the package's templates (jinja2, autoescaped).

Everything a page needs is inlined: its styles, its script and its data (as
JSON in a ``<script type="application/json">``, escaped by ``tojson`` so a
bot's name or stderr can never close the tag).  A page opens with no network.
"""

from __future__ import annotations

from functools import cache, lru_cache
from importlib import resources
from typing import Any

import jinja2

__all__ = ["render", "asset"]


@cache
def asset(name: str) -> str:
    """A file of arena/report/templates, as text."""
    return (resources.files(__package__) / "templates" / name).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FunctionLoader(asset), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def render(template: str, **context: Any) -> str:
    return _env().get_template(template).render(**context)


def replay_page(data: dict[str, Any]) -> str:
    """The replay viewer of one match, from ``replay.build_replay``'s data."""
    return render("replay.html", data=data, css=asset("cards.css") + asset("replay.css"), js=asset("replay.js"))
