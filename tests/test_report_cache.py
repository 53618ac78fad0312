"""The report's Vega bundle is made once and kept in the user's cache
directory (arena.report.charts): vl-convert takes seconds to make it, and it
depends only on the library versions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("vl_convert", reason="the report extra: pip install '.[report]'")
import vl_convert  # noqa: E402

from arena.report import charts  # noqa: E402


@pytest.fixture
def bundling(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[Any]]:
    """A fresh cache directory, and a record of every real bundling."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    charts.vega_bundle.cache_clear()
    calls: list[Any] = []
    real = vl_convert.javascript_bundle

    def counted(*args: Any, **kwargs: Any) -> str:
        calls.append(kwargs)
        return str(real(*args, **kwargs))

    monkeypatch.setattr(vl_convert, "javascript_bundle", counted)
    yield calls
    charts.vega_bundle.cache_clear()


def _kept() -> list[Path]:
    path = charts.bundle_cache("x")
    assert path is not None
    return sorted(path.parent.glob("vega-bundle-*.js"))


def test_the_bundle_is_made_once_and_then_read_from_the_cache(bundling: list[Any]) -> None:
    first = charts.vega_bundle()
    assert len(bundling) == 1 and "vega" in first and "</script" not in first
    charts.vega_bundle.cache_clear()              # as a new arena process would start
    assert charts.vega_bundle() == first and len(bundling) == 1
    (kept,) = _kept()
    assert vl_convert.__version__ in kept.name and not list(kept.parent.glob(".vega-*"))


def test_a_kept_bundle_cut_short_is_made_again(bundling: list[Any]) -> None:
    whole = charts.vega_bundle()
    (kept,) = _kept()
    kept.write_text(kept.read_text()[: len(whole) // 2])      # a full disk, say
    charts.vega_bundle.cache_clear()
    assert charts.vega_bundle() == whole and len(bundling) == 2
    charts.vega_bundle.cache_clear()
    assert charts.vega_bundle() == whole and len(bundling) == 2   # written whole again


def test_a_cache_that_cannot_be_written_only_costs_time(bundling: list[Any], tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache directory would go")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    first = charts.vega_bundle()
    charts.vega_bundle.cache_clear()
    assert charts.vega_bundle() == first and len(bundling) == 2
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert charts.bundle_cache("b.js") == tmp_path / "home" / ".cache" / "arena" / "b.js"
