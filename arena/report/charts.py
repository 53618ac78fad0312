"""Charts of the report: Vega-Lite specifications made with Vega-Altair, and
the Vega JavaScript that draws them, inlined from vl-convert-python.

Why these: Altair builds declarative, validated Vega-Lite specs in a few
lines (no drawing code of ours), and vl-convert-python ships Vega, Vega-Lite
and vega-embed as one JavaScript bundle inside its wheel, so the report
carries them inline and opens with no network.  Both are the ``report``
extra (``pip install '.[report]'`` in the checkout): the tournament runner never needs them.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..userdirs import user_dir

__all__ = ["ChartsUnavailable", "bundle_cache", "ratings_chart", "times_chart", "vega_bundle"]

# As the README installs arena: from its checkout (the name "arena" on a
# package index may be another project).
INSTALL_HINT = "install the report extra from the arena checkout: pip install '.[report]'"


class ChartsUnavailable(Exception):
    """The chart libraries are not installed; one line with the fix.  The
    report is written without its charts then (``build.write_report``)."""


def _altair() -> Any:
    try:
        # lazy: optional (the report extra), a missing one is a one-line error; ~0.4 s (tests/test_lean_imports.py REPORTING)
        import altair
    except ImportError as exc:
        raise ChartsUnavailable(f"no charts: Vega-Altair is not installed ({exc}); {INSTALL_HINT}") from None
    return altair


@lru_cache(maxsize=1)
def vega_bundle() -> str:
    """vega, vega-lite and vega-embed as one script, for the Vega-Lite version
    Altair writes.  vl-convert bundles it anew on each call (about 4 CPU-seconds
    here, most of a small report's time), and the result depends only on the two
    versions: it is kept in the user's cache directory (``bundle_cache``)."""
    try:
        # lazy: optional dependency (the report extra); a missing one is a one-line error
        import vl_convert
    except ImportError as exc:
        raise ChartsUnavailable(f"no charts: vl-convert-python is not installed ({exc}); {INSTALL_HINT}") from None
    wanted = ".".join(_altair().SCHEMA_VERSION.lstrip("v").split(".")[:2])
    version = wanted if wanted in vl_convert.get_vegalite_versions() else None
    cache = bundle_cache(f"vega-bundle-{getattr(vl_convert, '__version__', 'unknown')}-{version or 'default'}.js")
    cached = _read_bundle(cache)
    if cached is not None:
        return cached
    # Inside a <script> element: a literal "</script" would end it.
    # Its stubs make the snippet required; None (the default) puts the libraries on window.
    bundle: Callable[..., str] = vl_convert.javascript_bundle
    text = bundle(vl_version=version).replace("</script", "<\\/script")
    _write_bundle(cache, text)
    return text


def bundle_cache(name: str) -> Path | None:
    """Where the bundle ``name`` is kept: ``$XDG_CACHE_HOME/arena`` (an absolute
    path), else ``~/.cache/arena``; None without a home directory."""
    cache = user_dir("XDG_CACHE_HOME", ".cache")
    return cache / name if cache is not None else None


# A kept bundle ends with this line: a file cut short (a full disk) is not one.
_BUNDLE_END = "\n//# arena: complete\n"


def _read_bundle(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None                              # none kept yet, or unreadable: bundle anew
    return text[:-len(_BUNDLE_END)] if text.endswith(_BUNDLE_END) else None


def _write_bundle(path: Path | None, text: str) -> None:
    """Keep ``text`` for the next report; a cache that cannot be written
    only costs the next report the time to bundle again."""
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".vega-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text + _BUNDLE_END)
            os.replace(temp, path)               # whole or not at all, even with reports in parallel
        except BaseException:
            os.unlink(temp)
            raise
    except OSError:
        return


# Vega-Lite's autosize for a chart as wide as its box: the width holds the
# plot, its axes and legend (a phone's too); the height is the plot's own
# (the ratings' 300 px, BOX_STEP a bot of the box plot) plus the rest.
FIT = {"type": "fit-x", "contains": "padding"}
# The box plot's height a bot, Vega-Lite's own step for a discrete axis.  Given
# as a height in pixels, not as a step: with a step in y, any "fit" autosize
# makes Vega-Lite log 'Dropping "fit-y" because spec has discrete height'.
BOX_STEP = 20


def ratings_chart(points: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Each bot's rating (a line) and its mu +- 2 sigma (a band) after the
    first N matches; ``points``: {"matches", "bot", "rating", "low", "high"}.
    N counts matches: its axis has whole numbers only.  The legend is shared
    by the pale bands and the lines: its swatches are drawn opaque, in the
    lines' colour.  The chart is as wide as its box (a phone's too)."""
    alt = _altair()
    data = alt.NamedData(name="ratings")
    x = alt.X("matches:Q", title="matches played (N)",
              axis=alt.Axis(format="d", tickMinStep=1, labelFlush=True))
    colour = alt.Color("bot:N", title="bot", legend=alt.Legend(symbolOpacity=1, orient="bottom", columns=2))
    band = alt.Chart(data).mark_area(opacity=0.15).encode(
        x=x, y=alt.Y("low:Q", title="rating (TrueSkill mu, band: mu \u00b1 2 sigma)"), y2="high:Q", color=colour)
    line = alt.Chart(data).mark_line(point=True).encode(
        x=x, y="rating:Q", color=colour,
        tooltip=["bot:N", "matches:Q", alt.Tooltip("rating:Q", format=".1f")])
    chart = (band + line).properties(width="container", height=300, autosize=FIT)
    return _with_data(chart.to_dict(), "ratings", points)


def times_chart(points: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per bot, the distribution of its decision times (box plot, log scale);
    ``points``: {"bot", "ms"}.  As wide as its box."""
    alt = _altair()
    spec = alt.Chart(alt.NamedData(name="times")).mark_boxplot(extent="min-max").encode(
        y=alt.Y("bot:N", title=None),
        x=alt.X("ms:Q", title="milliseconds per decision (log scale)", scale=alt.Scale(type="log"),
                axis=alt.Axis(labelFlush=True)),
        color=alt.Color("bot:N", legend=None),
    ).properties(width="container", height=BOX_STEP * max(1, len({p["bot"] for p in points})),
                 autosize=FIT).to_dict()
    return _with_data(spec, "times", points)


def _with_data(spec: dict[str, Any], name: str, points: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The values joined after validation: Altair checks inline values one by
    one against the schema, seconds for a few thousand points."""
    spec["datasets"] = {**spec.get("datasets", {}), name: list(points)}
    return spec
