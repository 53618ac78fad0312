"""``arena verify RESULTS``: every stored result re-derived from its record.

A published table is only as good as the database behind it, and that
database may have been copied, merged from a cluster, restored from a backup
or edited by hand.  So each stored match is played again by the rules engine
from what was stored, without any bot:

- its deals from its stored seed (``Game.seeded``, as the match was played),
  so the cards follow from the seed and from nothing else;
- its recorded actions, each of which must be legal where it stands;
- then the replay's events must be the record's, the match must be over, and
  its totals, hand scores, hand winners and places (a forfeited seat last)
  must be the stored ones, with a seat forfeited exactly where the record has
  a forfeiting fault.

Also: each match's seed and seats are those the tournament's schedule gives
it (from the stored tournament seed, with ``--rerun``'s new deals; round
robin and gauntlet); SQLite's own integrity and the store's consistency
checks (``ResultStore.verify``).  Each problem is one line naming the match, in
the words of the engine where it refuses an action; ``arena verify``
escapes each line, as everything read back from a results database is.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..match.spec import forfeit_places
from ..shanghai.actions import action_from_json
from ..shanghai.errors import ShanghaiError
from ..shanghai.game import Game
from ..shanghai.ruleset import Ruleset
from .config import GAUNTLET, ROUND_ROBIN, BotConfig, TournamentConfig
from .schedule import ScheduleEntry
from .seating import ROTATE
from .store import ResultStore, StoreError
from .stored import StoredMatch

__all__ = ["Verified", "verify_results", "verify_match"]


@dataclass(frozen=True)
class Verified:
    """What ``verify_results`` went through: matches replayed, and the problems found."""

    matches: int
    problems: tuple[str, ...]


def verify_results(store: ResultStore, progress: Callable[[int, int], None] | None = None) -> Verified:
    """Replay every stored match of ``store`` (see the module); ``progress(done, total)`` after each."""
    problems = [f"database: {p}" for p in store.verify()]
    rules = _tournament_rules(store)
    matches = store.matches()
    problems += _off_schedule(store, matches)
    for done, m in enumerate(matches, 1):
        try:
            record = store.record(m.match_id)
        except StoreError as err:
            problems.append(f"match {m.match_id}: {err}")
        else:
            problems += [f"match {m.match_id}: {p}" for p in verify_match(m, record, rules)]
        if progress is not None:
            progress(done, len(matches))
    return Verified(len(matches), tuple(problems))


def verify_match(m: StoredMatch, record: Mapping[str, Any], rules: Mapping[str, Any] | None = None) -> list[str]:
    """The problems of one stored match against its record (none: it replays to
    its results); ``rules``: the tournament's, which the match must have been dealt under."""
    problems = _other_rules(record, rules)
    try:
        game = _replay(m, record)
    except _Refused as err:
        return [*problems, str(err)]
    return [*problems, *_differences(m, record, game)]


def _other_rules(record: Mapping[str, Any], rules: Mapping[str, Any] | None) -> list[str]:
    """The problem if the record's rules are readable and not the tournament's (``_replay``
    says what is wrong with rules that cannot be read)."""
    events = record.get("events")
    start = events[0] if isinstance(events, list) and events and isinstance(events[0], dict) else {}
    try:
        played = Ruleset.from_mapping(start.get("rules") or {}).to_mapping()
    except (ShanghaiError, TypeError, ValueError, AttributeError):
        return []
    if rules is None or played == rules:
        return []
    differ = sorted(k for k in {*rules, *played} if rules.get(k) != played.get(k))
    return [f"it was played under other rules than the tournament's ({', '.join(differ)})"]


def _off_schedule(store: ResultStore, matches: list[StoredMatch]) -> list[str]:
    """Each stored match that is not the tournament's schedule's: another seed
    (the schedule's follow from the tournament seed, ``schedule.derive_seed``,
    and ``redeal`` after a ``--rerun``) or other bots in its seats.  Only for
    a schedule fixed in advance (round robin, gauntlet); rounds are decided as
    they are played (``settle:``, Swiss), and are not checked here."""
    schedule = _stored_schedule(store)
    if schedule is None:
        return []
    problems = []
    for m in matches:
        entry = schedule.get(m.match_id)
        if entry is None:
            problems.append(f"match {m.match_id}: not in the tournament's schedule")
        elif entry.seed != m.seed:
            problems.append(f"match {m.match_id}: stored with seed {m.seed}; the tournament's seed deals it "
                            f"from {entry.seed}")
        elif list(entry.seats) != list(m.bots):
            problems.append(f"match {m.match_id}: stored with {', '.join(m.bots)} in its seats; the schedule "
                            f"seats {', '.join(entry.seats)}")
    return problems


def _stored_schedule(store: ResultStore) -> dict[str, ScheduleEntry] | None:
    """The schedule of the stored tournament, by match id (None: played in rounds, or not readable)."""
    from .schedule import iter_schedule, redeal
    from .setaside import times_set_aside

    tournament = store.tournament()
    try:
        c, seed = (tournament or {})["config"], (tournament or {})["seed"]
        if c.get("settle") is not None or c["format"] not in (ROUND_ROBIN, GAUNTLET) or not isinstance(seed, int):
            return None
        config = TournamentConfig(Path(store.path), Path(store.path).parent, str(c["name"]),
                                  tuple(BotConfig(str(b["name"]), builtin="stored") for b in c["bots"]),
                                  players=int(c["players"]), format=c["format"],
                                  challengers=tuple(c.get("challengers") or ()), deals=int(c["deals"]),
                                  duplicate=bool(c.get("duplicate", True)),
                                  # results stored before 'seating' existed were seated by rotation
                                  seating=str(c.get("seating", ROTATE)), seed=seed)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    entries = redeal(list(iter_schedule(config)), times_set_aside(Path(store.path)), seed)
    return {e.match_id: e for e in entries}


def _tournament_rules(store: ResultStore) -> dict[str, Any] | None:
    """The stored tournament's rules, as a match's record gives them (None: not stored)."""
    tournament = store.tournament()
    try:
        return Ruleset.from_mapping((tournament or {})["config"]["rules"]).to_mapping()
    except (KeyError, TypeError, ValueError, ShanghaiError):
        return None


class _Refused(Exception):
    """The record cannot be replayed at all; the message says where."""


def _replay(m: StoredMatch, record: Mapping[str, Any]) -> Game:
    events, actions = record.get("events"), record.get("actions")
    if not isinstance(events, list) or not events or not isinstance(actions, list):
        raise _Refused("the record has no events or no actions")
    start = events[0]
    if not isinstance(start, dict) or start.get("type") != "match_start":
        raise _Refused("the record does not start with a match_start event")
    if start.get("players") != len(m.bots) or start.get("seed") != m.seed:
        raise _Refused(f"the record is of a match of {start.get('players')} seats dealt from seed "
                       f"{start.get('seed')}, the stored one of {len(m.bots)} seats from seed {m.seed}")
    try:
        game = Game.seeded(Ruleset.from_mapping(start.get("rules") or {}), len(m.bots), m.seed)
    except (ShanghaiError, TypeError, ValueError) as exc:
        raise _Refused(f"its rules cannot be read ({exc})") from None
    for k, entry in enumerate(actions):
        try:
            seat = entry["seat"]
            game.apply(action_from_json(entry["action"]), seat=seat)
        except (KeyError, TypeError) as exc:
            raise _Refused(f"action {k} is not an action ({type(exc).__name__}: {exc})") from None
        except ShanghaiError as exc:
            raise _Refused(f"action {k} (seat {entry.get('seat')}) is refused by the rules: {exc}") from None
    return game


def _differences(m: StoredMatch, record: Mapping[str, Any], game: Game) -> Iterator[str]:
    if not game.over:
        yield f"the match is not over after its {len(game.actions)} recorded actions"
    replayed = json.loads(json.dumps([e.to_json() for e in game.log]))
    recorded = record["events"]
    if replayed != recorded:
        at = next((i for i, (a, b) in enumerate(zip(replayed, recorded)) if a != b), min(len(replayed), len(recorded)))
        yield (f"its recorded events differ from the replay's from event {at} "
               f"({_kind(recorded, at)} recorded, {_kind(replayed, at)} replayed)")
    forfeited = _forfeits(record, len(m.bots))
    stored = {"totals": m.totals, "hand scores": m.hand_scores, "hand winners": m.hand_winners,
              "forfeited seats": m.forfeited, "places": m.places}
    derived = {"totals": list(game.totals), "hand scores": [list(h) for h in game.hand_scores],
               "hand winners": list(game.winners), "forfeited seats": forfeited,
               "places": forfeit_places(list(game.totals), forfeited)}
    for what, value in stored.items():
        if _plain(value) != _plain(derived[what]):
            yield f"stored {what} {_plain(value)}, the replay gives {_plain(derived[what])}"


def _forfeits(record: Mapping[str, Any], seats: int) -> list[bool]:
    """Per seat: whether the record has a fault that forfeited it."""
    out = [False] * seats
    for f in record.get("faults") or []:
        seat = f.get("seat") if isinstance(f, dict) else None
        if isinstance(seat, int) and 0 <= seat < seats and f.get("forfeit"):
            out[seat] = True
    return out


def _kind(events: list[Any], i: int) -> str:
    if i >= len(events):
        return "nothing"
    e = events[i]
    return repr(e.get("type")) if isinstance(e, dict) else "not an event"


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value))
