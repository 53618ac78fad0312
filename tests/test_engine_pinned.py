"""Seeded matches give the same results, events and views as before the speed work.

The values were computed on main (commit 6a15c2c) before issue 9's engine
changes.  Speed work on the engine and the reference players must change no
decision and no event: a changed score, event count or record hash here means
a behaviour change, not a speed-up.
"""

from __future__ import annotations

import hashlib
import json
import random

import pytest

from arena.players import play_match
from arena.players.registry import make_player
from arena.shanghai.game import Game
from arena.shanghai.ruleset import Ruleset

# preset, seats, players (cycled over the seats), seed, totals, events, actions, record hash
PINNED = [
    ('shanghai', 4, 'random', 1, [355, 230, 325, 355], 1750, 1415, '66a33b1402f71e22'),
    ('shanghai', 4, 'random', 7, [250, 580, 250, 315], 1543, 1245, 'e0293ad9aea01c63'),
    ('shanghai', 4, 'random', 42, [220, 260, 250, 355], 1557, 1258, '2777811bafe3573c'),
    ('shanghai', 4, 'greedy', 1, [145, 310, 375, 340], 1295, 1251, 'd207aee60b453666'),
    ('shanghai', 4, 'greedy', 7, [140, 175, 385, 275], 1177, 1176, '58c8e6de8e3d1856'),
    ('shanghai', 4, 'greedy', 42, [210, 25, 60, 255], 1770, 1677, 'e3188f90ba5ac30f'),
    ('shanghai', 8, 'random', 1, [475, 640, 680, 670, 695, 865, 440, 445], 1538, 1239, '7195ef0a1497f878'),
    ('shanghai', 8, 'random', 7, [400, 290, 405, 465, 790, 470, 335, 600], 2066, 1582, '01d61f46ec373981'),
    ('shanghai', 8, 'random', 42, [525, 725, 440, 530, 430, 605, 625, 405], 2023, 1582, 'c13e3b8a9a7cd704'),
    ('shanghai', 5, 'greedy/random/passive', 1, [250, 545, 970, 140, 185], 923, 870, '164b0eb23559959b'),
    ('shanghai', 5, 'greedy/random/passive', 7, [230, 420, 1020, 80, 375], 1036, 977, '0561d4533dbf062e'),
    ('shanghai', 5, 'greedy/random/passive', 42, [305, 600, 1120, 140, 600], 913, 845, '4961e930e286b427'),
    ('shanghai', 3, 'greedy', 1, [235, 245, 150], 1577, 1440, '5153bd521ee5a6ba'),
    ('shanghai', 3, 'greedy', 7, [525, 255, 290], 775, 663, 'c43c44193c5a71b1'),
    ('shanghai', 3, 'greedy', 42, [450, 175, 220], 1230, 1103, '00aa50afc17feeaa'),
    ('pagat', 4, 'random', 1, [560, 450, 410, 315], 2590, 2186, 'bcaf7c507bc72682'),
    ('pagat', 4, 'random', 7, [520, 445, 390, 470], 2265, 1913, '0d019958226b68bc'),
    ('pagat', 4, 'random', 42, [585, 570, 475, 235], 2325, 1940, '906d4d7196c9d277'),
    ('pagat', 4, 'greedy', 1, [455, 460, 370, 475], 2107, 2142, 'd3dffb282c12d436'),
    ('pagat', 4, 'greedy', 7, [325, 470, 455, 425], 1216, 1237, 'eba970c2ec8c855c'),
    ('pagat', 4, 'greedy', 42, [180, 230, 360, 670], 1752, 1771, 'c70ab4cd35abf1e8'),
    ('pagat', 8, 'random', 1, [1025, 865, 975, 700, 755, 990, 520, 495], 2390, 1920, '78b30a1db3b24d38'),
    ('pagat', 8, 'random', 7, [745, 460, 830, 1040, 895, 735, 960, 805], 3075, 2533, 'f86c12ed62451ac0'),
    ('pagat', 8, 'random', 42, [860, 425, 445, 440, 575, 595, 285, 650], 3104, 2515, 'cfc25326a8897668'),
    ('pagat', 5, 'greedy/random/passive', 1, [290, 760, 1025, 370, 520], 1501, 1540, '1420c178accaaf5c'),
    ('pagat', 5, 'greedy/random/passive', 7, [475, 935, 1050, 20, 810], 1621, 1703, '91c4b09f662c1dde'),
    ('pagat', 5, 'greedy/random/passive', 42, [265, 610, 1140, 365, 815], 1695, 1836, '6de06551b4b87303'),
    ('pagat', 3, 'greedy', 1, [455, 530, 230], 1614, 1491, '6e022c2530b1d1cf'),
    ('pagat', 3, 'greedy', 7, [570, 450, 195], 1218, 1123, '2cdeabe40977296b'),
    ('pagat', 3, 'greedy', 42, [745, 565, 340], 2250, 2140, 'fe1d3a120e09ad6e'),
]


def _record_hash(game: Game) -> str:
    text = json.dumps(game.to_record(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@pytest.mark.parametrize("preset,seats,kinds,seed,totals,events,actions,digest", PINNED)
def test_seeded_match_unchanged(preset: str, seats: int, kinds: str, seed: int, totals: list[int],
                                events: int, actions: int, digest: str) -> None:
    names = kinds.split("/")
    game = Game.seeded(Ruleset.preset(preset), seats, seed)
    players = [make_player(names[i % len(names)], random.Random(f"{seed}/{i}")) for i in range(seats)]
    play_match(game, players)
    assert (list(game.totals), len(game.log), len(game.actions)) == (totals, events, actions)
    assert _record_hash(game) == digest


@pytest.mark.parametrize("preset,seed,decisions,digest", [
    ("shanghai", 3, 965, "2fd86a51191e39a5"),
    ("pagat", 5, 1270, "6f66a793ab9c005c"),
])
def test_views_unchanged(preset: str, seed: int, decisions: int, digest: str) -> None:
    """Every view a deciding seat gets, as JSON, is what it was (history included)."""
    game = Game.seeded(Ruleset.preset(preset), 4, seed)
    players = [make_player(("greedy", "random")[i % 2], random.Random(f"{seed}/{i}")) for i in range(4)]
    h = hashlib.sha256()
    n = 0
    while (d := game.decision()) is not None:
        view = game.view(d.seat)
        h.update(json.dumps(view.to_json(), sort_keys=True).encode())
        n += 1
        p = players[d.seat]
        game.apply({"draw": p.draw, "buy": p.buy, "play": p.play}[d.kind](view), d.seat)
    assert (n, h.hexdigest()[:16]) == (decisions, digest)
