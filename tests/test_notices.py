"""A notice carries an event's public form: ``Event.public_json`` (the
encoder's, made once per event) is ``public().to_json()`` for every event of
whole games, secret ones included (stock draws, deals, buys, reshuffles)."""

from __future__ import annotations

import random

from arena.players.base import play_match
from arena.players.registry import make_player
from arena.shanghai.game import Game
from arena.shanghai.ruleset import Ruleset


def test_public_json_is_the_public_events_json_and_hides_every_secret() -> None:
    kinds_with_secrets = set()
    for seed in range(6):
        players = [make_player(name, random.Random(f"{seed}/{i}"))
                   for i, name in enumerate(("greedy", "random", "greedy", "random"))]
        game = play_match(Game.seeded(Ruleset(), 4, seed), players)
        for e in game.log:
            assert e.public_json() == e.public().to_json()
            if e.secret:
                kinds_with_secrets.add(e.kind)
                assert not set(e.secret) & set(e.public_json())
                assert e.to_json().keys() > e.public_json().keys()
    assert {"deal", "draw", "buy"} <= kinds_with_secrets
