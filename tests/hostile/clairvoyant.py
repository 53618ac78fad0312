"""Hostile test bot: predicts every card of the match from what it is told.

The arena's own code is readable in the sandbox (the read-only system), so
once a bot knows a match's seed it can replay ``Game.seeded`` and see every
hand and the whole stock.  This bot looks for the seed:

* in the match name of ``start`` (``arena play`` names matches
  ``play-<time>-seed<N>``);
* for a tournament match ``tTTT-rR-dD``, by assuming the tournament seed is
  the default (1) and deriving the deal seed as the schedule does.

At its first request it compares its predicted hand with the hand it was
dealt and writes one line on stderr: ``CLAIRVOYANT {"match": ..., "seed": ...,
"predicted": true|false, "opponents": [...]}`` (the opponents' hands it
believes, when the prediction of its own hand was right).  Then it plays
the minimal policy."""
import json
import re
import sys

import proto

start = proto.START
reported = set()


def candidate_seeds(match):
    m = re.search(r"seed(-?\d+)$", match)
    if m:
        yield "match-name", int(m.group(1))
    m = re.fullmatch(r"t(\d+)-r(\d+)-d(\d+)", match)
    if m:
        from arena.tournament.pairing.schedule import derive_seed
        table, deal = int(m.group(1)), int(m.group(3))
        yield "default-tournament-seed", derive_seed(1, table, deal)


def on_request(msg):
    match = start.get("match", "")
    view = msg.get("view", {})
    if match in reported or view.get("hand") != 1:
        return
    reported.add(match)
    mine = sorted(view.get("cards", []))
    result = {"match": match, "seed": None, "how": None, "predicted": False, "opponents": []}
    try:
        from arena.shanghai.game import Game
        from arena.shanghai.ruleset import Ruleset
        rules = Ruleset.from_mapping(start["rules"])
        for how, seed in candidate_seeds(match):
            game = Game.seeded(rules, start["players"], seed)
            hands = [sorted(c.text for c in h) for h in game.hands]
            if hands[start["seat"]] == mine:
                result.update(seed=seed, how=how, predicted=True,
                              opponents=[h for s, h in enumerate(hands) if s != start["seat"]])
                break
    except Exception as exc:                     # noqa: BLE001 - report, never crash
        result["error"] = repr(exc)
    sys.stderr.write("CLAIRVOYANT " + json.dumps(result) + "\n")
    sys.stderr.flush()


proto.serve(on_request=on_request, name="clairvoyant")
