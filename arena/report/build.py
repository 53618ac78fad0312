"""Writing the report's files: the HTML report, the grade book, the replays.

``write_report`` makes, in one directory::

    index.html           the report (or bot-NAME.html for ``--bot``)
    gradebook.csv        one row per bot
    replays/MATCH.html   one replay viewer per stored match

``write_replay`` makes one replay viewer, of a stored match or of an ``arena
play --log`` file.  Errors are ``ReportError``: one line, naming the file.
"""

from __future__ import annotations

import csv
import html as html_lib
import io
import json
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

from markupsafe import Markup

from ..match.spec import fault_place
from ..process.errors import escaped
from ..tournament.results.database import FAULT_KINDS, ResultStore, StoreError, resolve_db_path
from ..tournament.results.hint import with_results_hint
from ..tournament.standings.leaderboard import RATING_UNITS, _level, csv_cell
from .charts import INSTALL_HINT, ChartsUnavailable, ratings_chart, times_chart, vega_bundle
from .data import GRADEBOOK_COLUMNS, Digest, Digests, ReportData, collect, gradebook_rows, stored_replay
from .files import FileUnwritable, ReportError, ReportUnwritable, write_file
from .html import asset, render, replay_page, visible
from .replay import ReplayError, build_replay
from .writers import usable_cpus, write_replays

__all__ = ["ReportError", "ReportUnwritable", "FileUnwritable", "bot_page", "decision_lines", "write_report", "write_replay",
           "replay_of_log", "file_name"]

# Bounds on a play log read for a replay (a log holds one match).
LOG_MAX_BYTES = 64 * 1024 * 1024


def file_name(text: str) -> str:
    """A file name (no directory, no dots in front) for a match id or bot name."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", text).lstrip(".")
    return safe or "_"


def anchor(text: str) -> str:
    return "bot-" + re.sub(r"[^A-Za-z0-9_-]", lambda m: f"_{ord(m.group()):x}", text)


def _colour(share: float | None) -> str:
    """Red (always behind) through white (even) to green (always ahead)."""
    if share is None:
        return "#fff"
    hue = 120 * share
    light = 97 - 32 * abs(share - 0.5) * 2
    return f"hsl({hue:.0f}, 65%, {light:.0f}%)"


def _place_colour(difference: float | None) -> str:
    """A neighbour cell: green when the row's bot placed better (lower) right
    after the column's, red when worse; a whole place either way is the deepest."""
    return _colour(None if difference is None else min(1.0, max(0.0, 0.5 - difference / 2)))


def _fmt(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _write_into(out: Path, path: Path, text: str) -> None:
    """``write_file``, for a file of the report in ``out``: a directory that
    cannot be written is ``ReportUnwritable``, once, not a warning a replay."""
    try:
        write_file(path, text)
    except ReportError:
        _check_writable(out)
        raise


def _check_writable(out: Path) -> None:
    """``ReportUnwritable`` unless a file can be made in ``out`` (made if need be)."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=out):
            pass
    except OSError as exc:
        raise ReportUnwritable(out, exc.strerror or str(exc)) from None


def _gradebook(data: ReportData) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(GRADEBOOK_COLUMNS)
    # A name with a newline, quoted, would still split the row for a line-by-line reader: escaped;
    # one starting with "=" would run as a formula: guarded.
    w.writerows([csv_cell(v) for v in row] for row in gradebook_rows(data))
    return out.getvalue()


def _visible_bots(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**p, "bot": visible(p["bot"])} for p in points]


def _charts(data: ReportData, warn: Callable[[str], None] | None) -> tuple[dict[str, Any], str]:
    """The charts' specs by element id and Vega's script; none, and one
    warning, without the ``report`` extra: the rest of the page needs neither."""
    try:
        # The names in a chart's labels and tooltips, as everywhere else on the page.
        charts = {"chart-ratings": ratings_chart(_visible_bots(data.history)),
                  "chart-times": times_chart(_visible_bots(data.times))}
        return charts, vega_bundle()
    except ChartsUnavailable as err:
        if warn is not None:
            warn(f"warning: the report has {err}")
        return {}, ""


def _report_html(data: ReportData, *, bot: str | None, replays: bool, gradebook: str | None,
                 replay_dir: str, warn: Callable[[str], None] | None = None,
                 replay_page_of: Callable[[str], str] | None = None) -> str:
    sections = data.bots if bot is None else [s for s in data.bots if s.bot == bot]

    def replay_href(match_id: str, step: int | None = None) -> str:
        page = (replay_page_of(match_id) if replay_page_of is not None
                else f"{replay_dir}/{quote(file_name(match_id))}.html")
        return page + (f"#step={step}" if step is not None else "")

    def link(match_id: str, step: int | None = None) -> Markup:
        shown = html_lib.escape(visible(match_id))
        if not replays:
            return Markup(shown)
        return Markup(f'<a class="replay" href="{html_lib.escape(replay_href(match_id, step))}">{shown}</a>')

    full = bot is None
    charts: dict[str, Any] = {}
    vega = ""
    if full:
        charts, vega = _charts(data, warn)
    title = data.name if full else f"{bot} in {data.name}"
    return render("report.html", data=data, sections=sections, full=full, title=title, charts=charts,
                  vega=vega, hint=INSTALL_HINT, css=asset("cards.css") + asset("report.css"), kinds=FAULT_KINDS,
                  level=_level(data.confidence), unit_text=RATING_UNITS.get(data.rating_unit, data.rating_unit),
                  gradebook=gradebook, replays=replays, replay_href=replay_href, link=link,
                  colour=_colour, place_colour=_place_colour, fmt=_fmt, anchor=anchor, place=fault_place)


def _open(results: str) -> ResultStore:
    try:
        return ResultStore(resolve_db_path(results), readonly=True)
    except StoreError as err:
        raise ReportError(with_results_hint(str(err), results)) from None


def default_out(results: str) -> Path:
    p = Path(results)
    return (p if p.is_dir() else p.parent) / "report"


def write_report(results: str, out: Path | None = None, *, bot: str | None = None, replays: bool = True,
                 rating: str | None = None, progress: Callable[[str], None] | None = None,
                 jobs: int | None = None) -> list[Path]:
    """Write the report of RESULTS into ``out`` (default RESULTS/report); the files written.
    ``jobs``: processes writing the replays (default: the usable CPUs)."""
    out = out or default_out(results)
    store = _open(results)
    try:
        written: list[Path] = []
        replay_dir = "replays"
        digests: dict[str, Digest | None] = {}
        try:
            if replays:
                # The pages first, by worker processes: what the sections read of each match
                # comes back with it, so no record is decoded and no match replayed twice.
                # One bot's page links to its own matches only.
                mine = [m for m in store.matches() if bot is None or bot in m.bots]
                digests = Digests(store, mine)
                shown = [m.match_id for m in mine]
                if shown:
                    _check_writable(out)     # one line for a place it cannot write, not a warning a replay
                written += write_replays(store, [(mid, out / replay_dir / f"{file_name(mid)}.html") for mid in shown],
                                         back="../index.html", workers=usable_cpus() if jobs is None else jobs,
                                         digests=digests, progress=progress)
            data = collect(store, rating, history=bot is None, shown=bot, digests=digests)
        except StoreError as err:
            raise ReportError(str(err)) from None
        if bot is not None and bot not in data.order:
            raise ReportError(f"no bot {bot!r} in {results} (bots: {', '.join(data.order) or 'none'})")
        book = out / "gradebook.csv"
        _write_into(out, book, _gradebook(data))
        written.append(book)
        page = _report_html(data, bot=bot, replays=replays, gradebook=book.name, replay_dir=replay_dir,
                            warn=progress)
        target = out / ("index.html" if bot is None else f"bot-{file_name(bot)}.html")
        _write_into(out, target, page)
        written.append(target)
        return written
    finally:
        store.close()


def bot_page(store: ResultStore, bot: str, replay_page_of: Callable[[str], str]) -> str | None:
    """One bot's diagnostics page, as ``arena report --bot`` writes it, for a
    page served elsewhere (the league's): its matches link to
    ``replay_page_of(match_id)``.  None when ``bot`` played no match of ``store``."""
    if bot not in store.bots():
        return None
    try:
        data = collect(store, history=False, shown=bot)
    except StoreError as err:
        raise ReportError(str(err)) from None
    if bot not in data.order:
        return None
    return _report_html(data, bot=bot, replays=True, gradebook=None, replay_dir="",
                        replay_page_of=replay_page_of)


def write_replay_of_store(store: ResultStore, match_id: str, path: Path, back: str | None = None,
                          cache: dict[str, dict[str, Any]] | None = None, out: Path | None = None) -> Path:
    """The replay of ``match_id`` written to ``path`` (in the report ``out``, if one)."""
    try:
        data = stored_replay(store, match_id, cache, back)
    except StoreError as err:
        raise ReportError(str(err)) from None
    except ReplayError as err:
        raise ReportError(f"{store.path}: match {match_id!r}: {err}") from None
    if cache is not None:
        cache.pop(match_id, None)       # written: not needed again
    if out is None:
        write_file(path, replay_page(data))
    else:
        _write_into(out, path, replay_page(data))
    return path


def replay_of_log(log: Path) -> dict[str, Any]:
    """The viewer's data for an ``arena play --log`` file."""
    try:
        if log.stat().st_size > LOG_MAX_BYTES:
            raise ReportError(f"{log}: larger than {LOG_MAX_BYTES // (1024 * 1024)} MiB; not a match log")
        obj = json.loads(log.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReportError(f"{log}: cannot read ({exc.strerror or exc})") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise ReportError(f"{log}: not a JSON match log ({exc})") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("events"), list) or not isinstance(obj.get("actions"), list):
        raise ReportError(f"{log}: not a match log of `arena play --log` (no events and actions)")
    def listed(key: str) -> list[Any] | None:
        value = obj.get(key)
        return value if isinstance(value, list) else None

    logs = [p if isinstance(p, str) else None for p in listed("stderr_logs") or []]
    try:
        return build_replay(obj, [str(n) for n in listed("players") or []], title=log.stem, stderr_logs=logs,
                            faults=listed("faults"), places=listed("places"))
    except ReplayError as err:
        raise ReportError(f"{log}: {err}") from None


def write_replay(results: str, match_id: str | None, out: Path | None) -> Path:
    """One replay viewer: of a play log (RESULTS is a .json file) or of a stored match."""
    source = Path(results)
    if source.is_file() and source.suffix == ".json":
        data = replay_of_log(source)
        path = out or source.with_suffix(".html")
        write_file(path, replay_page(data))
        return path
    if match_id is None:
        raise ReportError(f"which match of {results}? `arena matches {results}` lists them")
    store = _open(results)
    try:
        known = store.completed_ids()
        if match_id not in known:
            raise ReportError(f"no match {match_id!r} in {results}; `arena matches {results}` lists them")
        path = out or Path(f"{file_name(match_id)}.html")
        return write_replay_of_store(store, match_id, path)
    finally:
        store.close()



def decision_lines(results: str, match_id: str, k: int) -> list[str]:
    """One decision of a stored match in words: seat, kind, time, reply, fault, stderr."""
    store = _open(results)
    try:
        if match_id not in store.completed_ids():
            raise ReportError(f"no match {match_id!r} in {results}; `arena matches {results}` lists them")
        try:
            data = stored_replay(store, match_id)
        except StoreError as err:
            raise ReportError(str(err)) from None
        except ReplayError as err:
            raise ReportError(f"{store.path}: match {match_id!r}: {err}") from None
    finally:
        store.close()
    decisions = data["decisions"]
    if not 0 <= k < len(decisions):
        raise ReportError(f"match {match_id!r} has decisions 0 to {len(decisions) - 1}, not {k}")
    d = decisions[k]
    hand = data["steps"][max(d["step"], 0)]["e"]["hand"]
    took = "" if d["ms"] is None else f" in {d['ms']:.1f} ms"
    sent = "" if d["id"] is None or d["builtin"] else f", request id {d['id']}"
    who = escaped(str(data["names"][d["seat"]]))
    lines = [f"decision {k}: seat {d['seat']} ({who}), {d['kind']} in hand {hand}{sent}{took}",
             f"  action played: {json.dumps(d['reply'], separators=(',', ':'))}"]
    if not d["asked"]:
        lines.append("  not asked: the seat was forfeited, the arena played the fallback")
    for f in data["faults"]:
        if f["decision"] == k:
            # Escaped again: a play log or a database is a file, and may come from elsewhere.
            lines.append(f"  fault: {f['kind']}: {escaped(str(f['detail']))}")
            if f["reply"]:
                lines.append(f"  the bot's reply: {escaped(str(f['reply']))}")
    if d["stderr"]:
        lines.append("  stderr during this decision:")
        lines += [f"    {line}" for line in d["stderr"].splitlines()]
    elif d["builtin"]:
        lines.append("  (a built-in player: no stderr)")
    else:
        lines.append("  nothing on stderr during this decision")
    return lines
