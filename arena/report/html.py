"""HTML pages from the package's templates (jinja2, autoescaped).

Everything a page needs is inlined: its styles, its script and its data (as
JSON in a ``<script type="application/json">``, escaped by ``tojson`` so a
bot's name or stderr can never close the tag).  A page opens with no network.

Text from a results database or a bot (names, match ids, details) may hold
bidi controls: U+202E in a name would reverse the rest of its line; and
other characters a page does not show (ESC, BEL, NEL, a zero-width space),
so two names could look the same.  Every ``{{ value }}`` of a template is
shown with them as visible escapes (``\\u202e``, ``\\x1b``: ``visible``, the
``finalize`` of the environment), the same as the plain outputs show them;
newlines and tabs stay.  Names are also isolated (``<bdi>``, CSS
``unicode-bidi: isolate``) so that a right-to-left name keeps to itself.
The viewer's script does the same to what it puts on the page.

A replay's data is mostly the request lines exactly as each seat got them,
about 1.7 MB for a ten-hand match: it is embedded gzipped and base64-encoded
(about 0.1 MB; base64 cannot close a tag either), and the page unpacks it with
the browser's ``DecompressionStream``.  ``replay_data`` reads it back.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
from functools import cache, lru_cache
from importlib import resources
from typing import Any

import jinja2
import msgspec
from markupsafe import Markup

from ..process.errors import escaped_lines

__all__ = ["visible", "render", "asset", "replay_page", "replay_data"]

def visible(text: str) -> str:
    """``text`` with every character that is not printable but a newline or
    a tab (ESC, NEL, the bidi controls) written as its escape (``\\x1b``,
    ``\\u202e``): shown, not acted on, as ``escaped_lines`` shows a bot's
    stderr on a terminal."""
    return text if text.isprintable() else escaped_lines(text)


def _finalize(value: Any) -> Any:
    # Markup is the templates' own HTML (styles, scripts, links built with visible).
    if isinstance(value, str) and not isinstance(value, Markup):
        return visible(value)
    return value


@cache
def asset(name: str) -> str:
    """A file of arena/report/templates, as text."""
    return (resources.files(__package__) / "templates" / name).read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FunctionLoader(asset), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                              finalize=_finalize)


def render(template: str, **context: Any) -> str:
    return _env().get_template(template).render(**context)


# Measured on the replays of a 60-match round robin (1.2 MB of JSON a match):
# level 6 took 12.8 ms a page for 66 KiB, level 3 4.5 ms for 88 KiB, level 1
# 3.9 ms for 103 KiB; 4 and up switch to zlib's slower lazy matching (7.9 ms).
# A third more bytes in a page for two thirds less of its compression time.
GZIP_LEVEL = 3
_ENCODER = msgspec.json.Encoder()


def replay_page(data: dict[str, Any]) -> str:
    """The replay viewer of one match, from ``replay.build_replay``'s data."""
    # msgspec: the same compact UTF-8 JSON as json.dumps, about 3x faster.
    text = _ENCODER.encode(data)
    packed = base64.b64encode(gzip.compress(text, compresslevel=GZIP_LEVEL, mtime=0)).decode("ascii")
    return render("replay.html", data=data, packed=packed, css=asset("cards.css") + asset("replay.css"),
                  js=asset("replay.js"))


_PACKED = re.compile(r'<script type="application/gzip\+base64" id="replay-data">([A-Za-z0-9+/=]*)</script>')


def replay_data(page: str) -> dict[str, Any]:
    """The data embedded in a replay page (ValueError if it holds none)."""
    found = _PACKED.search(page)
    if found is None:
        raise ValueError("not a replay page of arena: no replay data in it")
    data: dict[str, Any] = json.loads(gzip.decompress(base64.b64decode(found.group(1))))
    return data
