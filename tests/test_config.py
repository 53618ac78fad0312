"""The tournament file: every key, defaults, and one-line errors with line and key path."""

from __future__ import annotations

import os
import pickle
import textwrap
from pathlib import Path

import pytest

from arena.players.registry import BUILTIN_PLAYERS
from arena.process import BotSpec, TimeControl
from arena.shanghai.ruleset import Ruleset
from arena.tournament.config.load import load_config
from arena.tournament.config.model import (
    GAUNTLET,
    ROUND_ROBIN,
    BotLimits,
    ConfigError,
    ExecutorSettings,
    FaultSettings,
)
from arena.tournament.executors.cpus import job_count

REPO = Path(__file__).resolve().parent.parent

THREE_BOTS = """\
bots:
  - {name: a, builtin: random}
  - {name: b, builtin: greedy}
  - {name: c, builtin: random}
"""


def write(tmp_path: Path, text: str, name: str = "t.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def error_of(tmp_path: Path, text: str) -> str:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert "\n" not in message
    prefix = f"{path}:"
    assert message.startswith(prefix), message
    return message[len(str(path)):]  # ":line: key: message"


# -- every key -----------------------------------------------------------------------

FULL = """\
name: Spring cup
x-common: &common
  memory_mb: 256
bots:
  - name: alpha
    command: python3 -u "my bot.py" --depth 2
    dir: sub
    env: {DEPTH: "3", THREADS: 1}
    build: make -s
    limits:
      <<: *common
      cpu_seconds: 2.5
      max_line_bytes: 4096
      stderr_max_bytes: 0
  - name: beta
    command: [./beta, --fast]
  - name: gamma
    builtin: greedy
  - name: delta
    builtin: random
  - name: eps
    command: ./eps
players: 3
rules:
  preset: pagat
  buy_penalty: 1
  decks: {3: 3}
  deal_size: 10
time: {startup: 5, per_decision: 0.5, bank: 20}
faults: {max_strikes: 5, strict: true}
format: gauntlet
challengers: [alpha, beta]
deals: 2
duplicate: false
seed: 42
jobs: 3
out: ../results/spring
"""


def test_every_key_is_parsed(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    path = write(tmp_path, FULL)
    config = load_config(path)
    assert config.path == path
    assert config.dir == Path(os.path.abspath(tmp_path))
    assert config.name == "Spring cup"
    assert config.bot_names == ("alpha", "beta", "gamma", "delta", "eps")

    alpha = config.bot("alpha")
    assert alpha.command == ("python3", "-u", "my bot.py", "--depth", "2")
    assert alpha.dir == config.dir / "sub"
    assert dict(alpha.env) == {"DEPTH": "3", "THREADS": "1"}
    assert alpha.build == "make -s"
    assert alpha.limits == BotLimits(memory_mb=256, cpu_seconds=2.5, max_line_bytes=4096, stderr_max_bytes=0)
    assert alpha.line == 5 and not alpha.is_builtin

    beta = config.bot("beta")
    assert beta.command == ("./beta", "--fast") and beta.dir == config.dir
    assert beta.env == () and beta.build is None and beta.limits == BotLimits()
    assert config.bot("gamma").builtin == "greedy" and config.bot("gamma").is_builtin
    assert config.bot("delta").builtin == "random"

    assert config.players == 3
    assert config.rules == Ruleset.from_mapping({"preset": "pagat", "buy_penalty": 1, "decks": {3: 3},
                                                 "deal_size": 10})
    assert config.time == TimeControl(startup_seconds=5, per_decision_seconds=0.5, bank_seconds=20)
    assert config.faults == FaultSettings(max_strikes=5, strict=True)
    assert config.format == GAUNTLET
    assert config.challengers == ("alpha", "beta")
    assert config.field_bots == ("gamma", "delta", "eps")
    assert config.deals == 2 and config.duplicate is False and config.seed == 42
    assert config.jobs == 3 and job_count(config.jobs) == 3
    assert config.output == config.dir.parent / "results" / "spring"
    assert config.line_of("players") == 23 and config.line_of("x-common") is None


def test_bot_spec(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    config = load_config(write(tmp_path, FULL))
    spec = config.bot_spec("alpha")
    assert isinstance(spec, BotSpec)
    assert spec.argv == ("python3", "-u", "my bot.py", "--depth", "2")
    assert Path(spec.cwd) == config.dir / "sub"
    assert spec.env == {"DEPTH": "3", "THREADS": "1"}
    assert (spec.memory_mb, spec.cpu_seconds, spec.max_line_bytes, spec.stderr_max_bytes) == (256, 3, 4096, 0)
    assert config.bot_spec("beta").env is None
    with pytest.raises(ValueError):
        config.bot_spec("gamma")
    assert spec.turn_guard and config.bot("alpha").limits.ponder is False


def test_ponder_lets_a_bot_compute_between_turns_and_old_results_still_resume(tmp_path: Path) -> None:
    text = THREE_BOTS + "  - {name: d, command: ./d, limits: {ponder: true}}\n  - {name: e, command: ./e}\n"
    config = load_config(write(tmp_path, text))
    assert config.bot("d").limits.ponder and not config.bot_spec("d").turn_guard
    assert config.bot_spec("e").turn_guard
    # The stored tournament (compared when resuming) has the key only where it is set.
    bots = {b["name"]: b for b in config.to_mapping()["bots"]}
    assert bots["d"]["limits"]["ponder"] is True and "ponder" not in bots["e"]["limits"]
    assert ":5: bots[3].limits.ponder: expected true or false" in error_of(
        tmp_path, THREE_BOTS + "  - {name: d, command: ./d, limits: {ponder: 1}}\n")


def test_seat_specs_and_fault_policy(tmp_path: Path) -> None:
    match = pytest.importorskip("arena.match")
    (tmp_path / "sub").mkdir()
    config = load_config(write(tmp_path, FULL))
    assert config.seat_spec("gamma") == match.SeatSpec("gamma", player="greedy")
    assert config.seat_spec("alpha") == match.SeatSpec("alpha", bot=config.bot_spec("alpha"))
    assert config.faults.policy() == match.FaultPolicy(max_strikes=5, strict=True)


def test_defaults(tmp_path: Path) -> None:
    text = THREE_BOTS.replace("random}\n", "random}\n", 1) + "  - {name: d, command: ./d}\n"
    config = load_config(write(tmp_path, text, "club.yaml"))
    assert config.name == "club"
    assert config.players == 4
    assert config.rules == Ruleset()
    assert config.time == TimeControl()
    assert config.faults == FaultSettings(max_strikes=3, strict=False)
    assert config.format == ROUND_ROBIN and config.challengers == ()
    assert config.deals == 1 and config.duplicate is True and config.seed is None
    assert config.jobs is None and job_count(config.jobs) >= 1
    assert config.output == config.dir / "arena-results" / "club"
    assert config.bot("d").dir == config.dir
    assert config.bot("d").spec().max_line_bytes == 1024 * 1024


def test_config_is_frozen_and_picklable(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    config = load_config(write(tmp_path, FULL))
    with pytest.raises(AttributeError):
        config.seed = 2  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(config)) == config
    hash(config)


def test_overrides_and_mapping(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, THREE_BOTS + "players: 3\njobs: auto\n"))
    other = config.with_overrides(seed=7, jobs=2, output="somewhere")
    assert (other.seed, other.jobs) == (7, 2)
    assert other.output == Path(os.path.abspath("somewhere"))
    assert config.seed is None
    data = config.to_mapping()
    assert data["players"] == 3 and data["bots"][0] == {"name": "a", "builtin": "random"}
    assert Ruleset.from_mapping(data["rules"]) == config.rules


def test_executor_from_the_file_and_the_command_line(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, THREE_BOTS + "players: 3\nexecutor: {backend: ray, address: 'h:6379', files: shared}\n"))
    assert config.executor == ExecutorSettings("ray", "h:6379", "shared")
    assert "executor" not in config.to_mapping()  # where matches ran changes no result: resuming elsewhere works
    plain = load_config(write(tmp_path, THREE_BOTS + "players: 3\nexecutor: ray\n"))
    assert plain.executor == ExecutorSettings("ray", None, "ship")
    local = load_config(write(tmp_path, THREE_BOTS + "players: 3\n"))
    assert local.executor == ExecutorSettings()
    assert local.with_overrides(address="x:1").executor == ExecutorSettings("ray", "x:1", "ship")
    assert plain.with_overrides(executor="local").executor.backend == "local"
    with pytest.raises(ValueError, match="an address is for the ray executor"):
        local.with_overrides(executor="local", address="x:1")


def test_empty_rules_and_null_bank(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, THREE_BOTS + "players: 3\nrules:\ntime: {bank: null}\njobs:\n"))
    assert config.rules == Ruleset() and config.time.bank_seconds is None and config.jobs is None


def test_the_keys_are_spelt_as_the_command_line_and_their_old_names_still_work(tmp_path: Path) -> None:
    new = load_config(write(tmp_path, THREE_BOTS + "players: 3\ntime: {per_decision: 2.5}\nout: res\n"))
    old = load_config(write(tmp_path, THREE_BOTS + "players: 3\ntime: {per_move: 2.5}\noutput: res\n"))
    assert new.time.per_decision_seconds == 2.5 and new.output == new.dir / "res"
    assert (old.time, old.output, old.line_of("out")) == (new.time, new.output, 7)
    # stored with the results (and compared on resuming) under the current name, however the file spells it
    assert old.to_mapping() == new.to_mapping() and new.to_mapping()["time"]["per_decision"] == 2.5
    assert "per_move" not in repr(new.to_mapping())
    # a "<<" merge may still override a key in the same spelling
    merged = THREE_BOTS + "players: 3\nx-t: &t {per_move: 1}\ntime: {<<: *t, per_move: 3}\n"
    assert load_config(write(tmp_path, merged)).time.per_decision_seconds == 3


def test_shipped_tournaments_load() -> None:
    demo = load_config(REPO / "tournaments" / "demo.yaml")
    assert demo.name == "demo"
    assert {"greedy", "random", "js"} <= set(demo.bot_names)
    assert demo.bot("greedy").command == ("python3", "bots/greedy_bot.py")
    assert demo.bot("random").command == ("python3", "bots/random_bot.py")
    assert demo.bot("js").command == ("node", "bots/js/bot.js")
    assert demo.bot("greedy").dir == REPO

    example = load_config(REPO / "tournaments" / "example.yaml")
    text = (REPO / "tournaments" / "example.yaml").read_text()
    keys = ["name", "bots", "command", "builtin", "dir", "env", "build", "limits", "memory_mb",
            "cpu_seconds", "max_line_bytes", "stderr_max_bytes", "ponder", "players", "rules", "preset", "time",
            "startup", "per_decision", "bank", "faults", "max_strikes", "strict", "format", "challengers",
            "deals", "duplicate", "seed", "jobs", "out"]
    keys += list(Ruleset().to_mapping())
    for key in keys:
        assert f"{key}:" in text, key
    assert example.rules == Ruleset()
    # the old names only as comments
    for old in ("per_move", "output"):
        assert f"{old}:" not in text and f"{old}:" not in (REPO / "tournaments" / "demo.yaml").read_text()


# -- mistakes: one line, file:line: key.path: what was expected ------------------------

CASES = {
    "unknown top-level key": (
        THREE_BOTS + "playerz: 3\n",
        ":5: playerz: unknown key (did you mean 'players'?)"),
    "unknown key without a close match": (
        THREE_BOTS + "colour: red\n",
        ":5: colour: unknown key; expected one of: name, bots, players, rules, time, faults, format, "
        "challengers, deals, settle, rating, duplicate, seating, seed, jobs, affinity, anonymous, out, sandbox, executor"),
    "affinity that is not a boolean": (
        THREE_BOTS + "players: 3\naffinity: sometimes\n",
        ":6: affinity: expected true or false, got 'sometimes'"),
    "rating that is not hands or matches": (
        THREE_BOTS + "players: 3\nrating: games\n",
        ":6: rating: expected 'hands' (each hand is a ranked game) or 'matches' (each match is one), "
        "got 'games'"),
    "unknown bot key": (
        "bots:\n  - name: a\n    builtin: random\n  - name: b\n    comand: ./b\n",
        ":5: bots[1].comand: unknown key (did you mean 'command'?)"),
    "unknown limits key": (
        "bots:\n  - name: a\n    command: ./a\n    limits:\n      memory: 100\n  - {name: b, builtin: random}\n",
        ":5: bots[0].limits.memory: unknown key (did you mean 'memory_mb'?)"),
    "unknown time key": (
        THREE_BOTS + "players: 3\ntime:\n  per_mov: 2\n",
        ":7: time.per_mov: unknown key (did you mean 'per_decision'?)"),
    "a key and its old name both given": (
        THREE_BOTS + "players: 3\ntime:\n  per_decision: 1\n  per_move: 2\n",
        ":8: time.per_move: 'per_move' is the old name of 'per_decision', and both are given (the other on "
        "line 7); give it once, as 'per_decision'"),
    "a key's old name and the key both given": (
        THREE_BOTS + "players: 3\nout: a\noutput: a\n",
        ":7: output: 'output' is the old name of 'out', and both are given (the other on line 6); "
        "give it once, as 'out'"),
    "a key's old name, then the key": (
        THREE_BOTS + "players: 3\ntime: {per_move: 1, per_decision: 1}\n",
        ":6: time.per_decision: 'per_move' is the old name of 'per_decision', and both are given (the other "
        "on line 6); give it once, as 'per_decision'"),
    "a value under a key's old name": (
        THREE_BOTS + "players: 3\ntime:\n  per_move: 0\n",
        ":7: time.per_move: expected a number of seconds, more than 0 and at most 600, got 0"),
    "unknown faults key": (
        THREE_BOTS + "players: 3\nfaults: {strikes: 2}\n",
        ":6: faults.strikes: unknown key (did you mean 'max_strikes'?)"),
    "unknown rules setting": (
        THREE_BOTS + "players: 3\nrules:\n  wild_deuce: false\n",
        ":7: rules.wild_deuce: unknown key (did you mean 'wild_deuces'?)"),
    "duplicate key": (
        THREE_BOTS + "players: 3\nseed: 1\nseed: 2\n",
        ":7: seed: duplicate key (first given on line 6)"),
    "command of the wrong type": (
        "bots:\n  - {name: a, builtin: random}\n  - {name: b, builtin: random}\n  - name: c\n    command: 42\n",
        ":5: bots[2].command: expected a string or a list of strings, got 42"),
    "command list with a mapping": (
        "bots:\n  - {name: a, builtin: random}\n  - name: b\n    command:\n      - ./b\n      - {x: 1}\n",
        ":6: bots[1].command[1]: expected a string, got a mapping"),
    "empty command": (
        "bots:\n  - {name: a, builtin: random}\n  - name: b\n    command: ''\n",
        ":4: bots[1].command: expected a string or a list of strings naming a program, got an empty command"),
    "unbalanced quote": (
        "bots:\n  - {name: a, builtin: random}\n  - name: b\n    command: python3 'bot.py\n",
        ":4: bots[1].command: cannot split the command into words: No closing quotation"),
    "players not a number": (
        THREE_BOTS + "players: four\n",
        ":5: players: expected a number of players per table, got 'four'"),
    "bool is not a number": (
        THREE_BOTS + "players: 3\ndeals: true\n",
        ":6: deals: expected a number of deals per table, got true"),
    "bots not a list": (
        "bots: {a: 1}\n",
        ":1: bots: expected a list of bots (each a mapping with name and command), got a mapping"),
    "a single bot": (
        "bots:\n  - {name: a, builtin: random}\n",
        ":2: bots: expected at least 2 bots, got 1"),
    "bot not a mapping": (
        "bots:\n  - {name: a, builtin: random}\n  - ./b\n",
        ":3: bots[1]: expected a bot (a mapping with name and command), got './b'"),
    "missing bots": (
        "name: x\nplayers: 3\n",
        ":1: bots: missing; a mapping of tournament settings (name, bots, ...) needs 'bots'"),
    "missing bot name": (
        "bots:\n  - {name: a, builtin: random}\n  - command: ./b\n",
        ":3: bots[1].name: missing; a bot (a mapping with name and command) needs 'name'"),
    "missing command": (
        "bots:\n  - {name: a, builtin: random}\n  - name: b\n    dir: .\n",
        ":3: bots[1].command: missing; a bot needs 'command' (the program to run) or 'builtin' ({builtins})"),
    "bad bot name": (
        "bots:\n  - {name: a, builtin: random}\n  - {name: my bot, builtin: random}\n",
        ":3: bots[1].name: expected a bot name of 1-40 letters, digits, '_', '.', '+' or '-' "
        "(starting with a letter or digit), got 'my bot'"),
    "number as bot name": (
        "bots:\n  - {name: a, builtin: random}\n  - {name: 7, builtin: random}\n",
        ":3: bots[1].name: expected a bot name (a string), got 7"),
    "duplicate bot name": (
        "bots:\n  - name: a\n    builtin: random\n  - name: b\n    builtin: random\n  - name: a\n    builtin: greedy\n",
        ":6: bots[2].name: duplicate bot name 'a' (already used on line 2); expected a unique name"),
    "unknown builtin": (
        "bots:\n  - {name: a, builtin: random}\n  - {name: b, builtin: smart}\n",
        ":3: bots[1].builtin: expected a built-in player ({builtins}), got 'smart'"),
    "builtin and command": (
        "bots:\n  - {name: a, builtin: random}\n  - name: b\n    command: ./b\n    builtin: greedy\n",
        ":5: bots[1].builtin: give either 'command' (a program) or 'builtin' (an in-process player), not both"),
    "limits on a builtin": (
        "bots:\n  - {name: a, builtin: random}\n  - name: b\n    builtin: greedy\n    limits: {memory_mb: 64}\n",
        ":5: bots[1].limits: not used with 'builtin' (a built-in player runs inside the arena); "
        "remove it or give a 'command'"),
    "missing directory": (
        "bots:\n  - {name: a, builtin: random}\n  - name: b\n    command: ./b\n    dir: nowhere\n",
        ":5: bots[1].dir: expected an existing directory, but {dir}/nowhere is not one"),
    "env value not a string": (
        "bots:\n  - {name: a, builtin: random}\n  - name: b\n    command: ./b\n    env:\n      DEBUG: [1]\n",
        ":6: bots[1].env.DEBUG: expected a string (quote it), got a list"),
    "duplicate env variable": (
        "bots:\n  - {name: a, builtin: random}\n  - name: b\n    command: ./b\n    env:\n      X: a\n      X: b\n",
        ":7: bots[1].env.X: duplicate key"),
    "memory too small": (
        "bots:\n  - {name: a, builtin: random}\n  - name: b\n    command: ./b\n    limits: {memory_mb: 0}\n",
        ":5: bots[1].limits.memory_mb: expected a number of megabytes 16..1048576, got 0"),
    "bad rules value": (
        THREE_BOTS + "players: 3\nrules:\n  preset: pagat\n  buy_penalty: 9\n",
        ":8: rules.buy_penalty: 9 is out of range 0..5"),
    "bad preset": (
        THREE_BOTS + "players: 3\nrules: {preset: classic}\n",
        ":6: rules.preset: unknown preset 'classic'; choose one of ['pagat', 'shanghai']"),
    "bad contract in a list": (
        THREE_BOTS + "players: 3\nrules:\n  contracts:\n    - 2S3\n    - S3+Q4\n",
        ":9: rules.contracts[1]: cannot read contract term 'Q4' in 'S3+Q4': "
        "write e.g. S3 (set of 3), R4 (run of 4), 2S3 (two sets of 3)"),
    "bad decks entry": (
        THREE_BOTS + "players: 3\nrules:\n  decks:\n    3: 2\n    5: 0\n",
        ":9: rules.decks.5: 0 is out of range 1..8"),
    "rules not a mapping": (
        THREE_BOTS + "players: 3\nrules: pagat\n",
        ":6: rules: expected a mapping of rule settings (preset and overrides), got 'pagat'"),
    "cards do not fit the table": (
        THREE_BOTS + "players: 3\nrules:\n  decks: 1\n  deal_size: 20\n",
        ":8: rules.deal_size: hand 1: 3 players x 20 cards do not fit in 1 deck(s) of 54 "
        "with an upcard and a stock card left"),
    "players out of range": (
        THREE_BOTS + "players: 9\n",
        ":5: players: expected a number of players per table 2..8, got 9"),
    "players more than bots": (
        THREE_BOTS + "\nplayers: 4\n",
        ":6: players: 4 players per table but only 3 bots; expected at most 3 (set 'players' or add bots)"),
    "default players more than bots": (
        THREE_BOTS,
        ":1: players: 4 players per table (the default) but only 3 bots; expected at most 3 "
        "(set 'players' or add bots)"),
    "time not positive": (
        THREE_BOTS + "players: 3\ntime:\n  per_move: 0\n",
        ":7: time.per_move: expected a number of seconds, more than 0 and at most 600, got 0"),
    "time as text": (
        THREE_BOTS + "players: 3\ntime: {startup: 10s}\n",
        ":6: time.startup: expected a number of seconds, got '10s'"),
    "strict not a bool": (
        THREE_BOTS + "players: 3\nfaults:\n  strict: maybe\n",
        ":7: faults.strict: expected true or false, got 'maybe'"),
    "bad format": (
        THREE_BOTS + "players: 3\nformat: gauntlett\n",
        ":6: format: expected the tournament's format, 'round_robin', 'gauntlet' or 'swiss', got 'gauntlett' "
        "(did you mean 'gauntlet'?)"),
    "an output format as the tournament's": (
        THREE_BOTS + "players: 3\nformat: json\n",
        ":6: format: expected the tournament's format, 'round_robin', 'gauntlet' or 'swiss', got 'json' "
        "(the output's format is not set here: arena run --format)"),
    "gauntlet without challengers": (
        THREE_BOTS + "players: 3\nformat: gauntlet\n",
        ":6: challengers: missing; format: gauntlet needs 'challengers', a list of bot names"),
    "unknown challenger": (
        THREE_BOTS + "players: 2\nformat: gauntlet\nchallengers:\n  - a\n  - bb\n",
        ":9: challengers[1]: unknown bot 'bb' (did you mean 'b'?)"),
    "challengers in a round robin": (
        THREE_BOTS + "players: 3\nchallengers: [a]\n",
        ":6: challengers: only used with 'format: gauntlet' (this tournament is a round robin)"),
    "every bot a challenger": (
        THREE_BOTS + "players: 2\nformat: gauntlet\nchallengers: [a, b, c]\n",
        ":7: challengers: every bot is a challenger; expected at least one bot left as the field"),
    "field too small for the table": (
        THREE_BOTS + "players: 3\nformat: gauntlet\nchallengers: [a, b]\n",
        ":5: players: 3 players per table needs 2 field bots besides each challenger, but the field "
        "(bots that are not challengers) has 1; expected at most 2 players"),
    "jobs zero": (
        THREE_BOTS + "players: 3\njobs: 0\n",
        ":6: jobs: expected a number of parallel matches 1..1024, got 0"),
    "jobs text": (
        THREE_BOTS + "players: 3\njobs: many\n",
        ":6: jobs: expected a number of parallel matches or 'auto', got 'many'"),
    "seed not a whole number": (
        THREE_BOTS + "players: 3\nseed: 1.5\n",
        ":6: seed: expected a whole number, got 1.5"),
    "broken YAML": (
        THREE_BOTS + "players: 3\ntime: {startup: 5\n",
        ":7: not valid YAML: expected ',' or '}', but got '<stream end>' (while parsing a flow mapping, line 6)"),
    "bad indentation": (
        "bots:\n  - name: a\n    builtin: random\n   - name: b\n",
        ":4: not valid YAML: expected <block end>, but found '<block sequence start>' "
        "(while parsing a block collection, line 2); check the indentation of this line against the "
        "lines above it"),
    "tab indentation": (
        "bots:\n\t- name: a\n",
        ":2: not valid YAML: found character '\\t' that cannot start any token "
        "(while scanning for the next token); indent with spaces: YAML does not allow tabs there"),
    "two documents": (
        THREE_BOTS + "---\nplayers: 3\n",
        ":5: not valid YAML: expected a single document in the stream, but found another document"),
    "unsafe tag": (
        THREE_BOTS + "players: 3\nseed: !!python/object:os.system x\n",
        ":6: not valid YAML: could not determine a constructor for the tag "
        "'tag:yaml.org,2002:python/object:os.system'"),
    "unknown executor": (
        THREE_BOTS + "players: 3\nexecutor: spark\n",
        ":6: executor: expected 'local' or 'ray', got 'spark'"),
    "executor files not a mode": (
        THREE_BOTS + "players: 3\nexecutor: {backend: ray, files: nfs}\n",
        ":6: executor.files: expected 'ship' (Ray copies the tournament's directory to every node) or "
        "'shared' (the same paths on every node), got 'nfs'"),
    "executor address for local": (
        THREE_BOTS + "players: 3\nexecutor: {backend: local, address: 'head:6379'}\n",
        ":6: executor: address and files are for 'backend: ray'"),
    "executor without backend": (
        THREE_BOTS + "players: 3\nexecutor: {address: 'head:6379'}\n",
        ":6: executor.backend: missing; 'local', 'ray' or a mapping (backend, address, files) needs 'backend'"),
    "empty file": (
        "",
        ":1: the file is empty; expected a mapping of tournament settings with at least 'bots'"),
    "top level a list": (
        "- a\n- b\n",
        ":1: expected a mapping of tournament settings (name, bots, ...), got a list"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_mistakes_give_one_line(tmp_path: Path, case: str) -> None:
    text, expected = CASES[case]
    names = [repr(n) for n in BUILTIN_PLAYERS]
    builtins = f"{', '.join(names[:-1])} or {names[-1]}"  # 'random', 'greedy' or ...
    expected = expected.replace("{dir}", os.path.abspath(tmp_path)).replace("{builtins}", builtins)
    assert error_of(tmp_path, text) == expected


def test_error_attributes(tmp_path: Path) -> None:
    path = write(tmp_path, THREE_BOTS + "players: 3\nrules: {buy_penalty: -1}\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    err = info.value
    assert (err.file, err.line, err.key) == (str(path), 6, "rules.buy_penalty")
    assert str(err) == f"{path}:6: rules.buy_penalty: -1 is out of range 0..5"


def test_missing_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as info:
        load_config("x.yaml")
    assert str(info.value) == "x.yaml: no such file"
    assert (info.value.line, info.value.key) == (None, None)
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path / "nope.yaml")
    assert str(info.value) == f"{tmp_path / 'nope.yaml'}: no such file"


def test_directory_instead_of_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    assert str(info.value) == f"{tmp_path}: is a directory, expected a YAML file"


def test_relative_path_is_shown_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "tournaments").mkdir()
    text = "bots:\n  - {name: a, builtin: random}\n  - {name: b, builtin: random}\n  - name: c\n    command: 42\n"
    (tmp_path / "tournaments" / "x.yaml").write_text(text)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as info:
        load_config("tournaments/x.yaml")
    assert str(info.value) == "tournaments/x.yaml:5: bots[2].command: expected a string or a list of strings, got 42"


def test_x_keys_and_merges(tmp_path: Path) -> None:
    text = """\
    x-bot: &py
      command: python3 bot.py
      limits: {memory_mb: 128}
    x-env: &env {MODE: slow, LEVEL: "1"}
    bots:
      - {<<: *py, name: one}
      - <<: *py
        name: two
        env: {<<: *env, MODE: fast}
    players: 2
    """
    config = load_config(write(tmp_path, text))
    assert config.bot("one").command == config.bot("two").command == ("python3", "bot.py")
    assert config.bot("two").limits.memory_mb == 128
    assert dict(config.bot("two").env) == {"MODE": "fast", "LEVEL": "1"}


def test_schedule_far_too_large(tmp_path: Path) -> None:
    bots = "".join(f"  - {{name: b{i}, builtin: random}}\n" for i in range(30))
    path = write(tmp_path, "bots:\n" + bots + "players: 6\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}:32: players: a round robin of 30 bots with 6 players per table is 593,775 tables")
    assert "3,562,650 matches" in message and "gauntlet" in message and "fewer bots" in message
    assert load_config(path, max_matches=None).players == 6


def test_a_bot_may_not_write_the_root_directory(tmp_path):
    """Bound writable, / is the host's whole file system: the sandbox's own
    /proc, /tmp and /run would be replaced by the host's."""
    message = error_of(tmp_path, """
        bots:
          - name: a
            command: python3 a.py
            sandbox: {write: [/]}
          - {name: b, builtin: random}
        """)
    assert message.startswith(":5: bots[0].sandbox.write[0]:"), message
    assert "not /" in message
    from arena.process import SandboxPolicy
    with pytest.raises(ValueError, match="cannot be /"):
        SandboxPolicy(write=("/",))
