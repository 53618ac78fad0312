"""A readable hand-by-hand account of a match, rendered from its event log.

Works on the JSON form of events so that a stored match renders the same way
as a live one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from tabulate import tabulate

from .shanghai.ruleset import parse_contract


def _who(seat: int | None, names: Sequence[str]) -> str:
    if seat is None:
        return "nobody"
    return f"seat {seat} ({names[seat]})" if seat < len(names) else f"seat {seat}"


def _meld_text(m: dict[str, Any]) -> str:
    cards = " ".join(m["cards"])
    if m["kind"] == "set":
        return f"[{m['id']}] set of {m['stands_for'][0]}s: {cards}"
    return f"[{m['id']}] run {m['stands_for'][0]}-{m['stands_for'][-1]}: {cards}"


def render_account(events: Iterable[dict[str, Any]], names: Sequence[str], verbose: bool = False) -> list[str]:
    """Lines describing the match. ``verbose`` adds every draw and discard."""
    lines: list[str] = []
    hands_total = 0
    turns = 0
    buys = 0
    for e in events:
        kind = e["type"]
        seat = e.get("seat")
        who = _who(seat, names)
        if kind == "match_start":
            hands_total = len(e["rules"]["contracts"])
            lines.append(f"Match: {e['players']} players, ruleset {e['rules']['preset']}, seed {e.get('seed')}")
        elif kind == "deal":
            turns = buys = 0
            contract = parse_contract(e["contract"]).describe()
            lines.append("")
            lines.append(
                f"Hand {e['hand']} of {hands_total}: {contract}; dealer {_who(e['dealer'], names)}; "
                f"{e['deal_size']} cards each; upcard {e['upcard']}"
            )
        elif kind == "draw":
            if verbose:
                src = f"takes the upcard {e['card']}" if e["source"] == "upcard" else "draws from the stock"
                lines.append(f"  {who} {src}")
        elif kind == "decline":
            if verbose:
                lines.append(f"  {who} passes on {e['card']}")
        elif kind == "buy":
            buys += 1
            lines.append(f"  {who} buys {e['card']} (+{e['penalty']} from the stock, {e['buys_left']} buys left)")
        elif kind == "go_down":
            lines.append(f"  turn {turns + 1}: {who} goes down: " + "; ".join(_meld_text(m) for m in e["melds"]))
        elif kind == "lay_off":
            end = f" ({e['end']} end)" if e.get("end") else ""
            lines.append(f"  {who} lays off {e['card']} on meld {e['meld']}{end}")
        elif kind == "swap":
            lines.append(f"  {who} swaps {e['card']} into meld {e['meld']} and takes {e['took']}")
        elif kind == "discard":
            turns += 1
            if verbose:
                lines.append(f"  {who} discards {e['card']}")
        elif kind == "go_out":
            lines.append(f"  {who} goes out")
        elif kind == "reshuffle":
            lines.append(f"  the stock is empty: {e['cards']} discards are shuffled into a new stock")
        elif kind == "hand_end":
            reason = {
                "out": f"{_who(seat, names)} went out",
                "stock": "the stock ran out: no winner",
                "turn_cap": "the turn cap was reached: no winner",
            }[e["reason"]]
            lines.append(f"  Hand {e['hand']} over after {turns} turns and {buys} buys: {reason}.")
            lines.append("  Scores: " + ", ".join(f"{names[i] if i < len(names) else i} {s}" for i, s in enumerate(e["scores"])))
    return lines


def final_table(events: Sequence[dict[str, Any]], names: Sequence[str], fmt: str = "simple",
                places: Sequence[int] | None = None) -> str:
    """The match table: each seat's score per hand, its total and its place.

    ``places`` overrides the places of the record (the match runner ranks
    forfeited seats last).
    """
    per_hand = [e["scores"] for e in events if e["type"] == "hand_end"]
    end = next((e for e in events if e["type"] == "match_end"), None)
    players = len(names)
    totals = end["totals"] if end else [sum(h[s] for h in per_hand) for s in range(players)]
    if places is None:
        places = end["places"] if end else [1 + sum(1 for u in totals if u < t) for t in totals]
    rows = []
    for s in range(players):
        rows.append([places[s], s, names[s], *[h[s] for h in per_hand], totals[s]])
    rows.sort(key=lambda r: (r[0], r[1]))
    headers = ["place", "seat", "player", *[f"h{i + 1}" for i in range(len(per_hand))], "total"]
    return tabulate(rows, headers=headers, tablefmt=fmt)
