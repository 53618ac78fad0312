"""Tests of the results database (arena.tournament.results.database)."""

from __future__ import annotations

import dataclasses
import json
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from arena.tournament.results.database import (
    DEFAULT_DB_NAME,
    FAULT_KEYS,
    SCHEMA_VERSION,
    ResultStore,
    StoredMatch,
    StoreError,
    resolve_db_path,
)

REPO = Path(__file__).parent.parent

# A deterministic match generator, shared (as source text) with the writer
# process of the SIGKILL test so that the parent can check every stored match
# field by field.
FACTORY = textwrap.dedent('''
    import random
    from arena.tournament.results.database import StoredMatch

    BOTS = ["alpha", "beta", "gamma", "delta", "eps"]

    def make_match(i, players=4, hands=7):
        rng = random.Random(i)
        bots = rng.sample(BOTS, players)
        hand_scores, winners = [], []
        for h in range(hands):
            w = rng.choice([None] + list(range(players)))
            winners.append(w)
            hand_scores.append([0 if s == w else rng.randrange(0, 120) for s in range(players)])
        totals = [sum(row[s] for row in hand_scores) for s in range(players)]
        forfeited = [rng.random() < 0.1 for _ in range(players)]
        key = [(f, t) for f, t in zip(forfeited, totals)]
        places = [1 + sum(1 for k in key if k < mine) for mine in key]
        faults = [{"seat": rng.randrange(players), "kind": rng.choice(["timeout", "crash", "malformed",
                   "wrong_id", "illegal"]), "hand": rng.choice([None, 1 + rng.randrange(hands)]),
                   "decision": rng.randrange(500), "decision_kind": "discard", "detail": f"fault {i}.{k}",
                   "excerpt": rng.choice([None, f'{{"id": {k}, "draw": "pile"}}']), "request_id": 1 + k}
                  for k in range(i % 3)]
        stats = [{"count": rng.randrange(1, 300), "mean": rng.random() / 10, "p95": rng.random() / 5,
                  "max": rng.random(), "timeouts": rng.randrange(2)} for _ in range(players)]
        record = {"events": [{"type": "discard", "seat": k % players, "card": "QH", "n": k}
                             for k in range(300)], "actions": [{"seat": 0, "action": {"n": i}}]}
        return StoredMatch(
            match_id=f"m{i:05d}", schedule_index=i, table=i // 8, rotation=i % 4, deal=(i // 4) % 2,
            seed=1000 + i, bots=bots, totals=totals, places=places, forfeited=forfeited,
            hand_scores=hand_scores, hand_winners=winners, faults=faults, decision_stats=stats,
            stderr_logs=[f"logs/m{i:05d}-{s}.stderr" if s % 2 == 0 else None for s in range(players)],
            record=record, duration_seconds=1.5 + i, started_at="2024-05-01T12:00:00+00:00")
''')
_ns: dict = {}
exec(FACTORY, _ns)
make_match = _ns["make_match"]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "out" / DEFAULT_DB_NAME


def count(path: Path, table: str) -> int:
    with sqlite3.connect(path) as c:
        return c.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


# -- round trip --------------------------------------------------------------------


def test_round_trip(db: Path) -> None:
    ms = [make_match(i) for i in range(6)]
    with ResultStore(db) as store:
        store.init_tournament("demo", '{"bots": ["alpha"], "seed": 7}', seed=7, bots=["zeta"])
        for m in reversed(ms):  # completion order differs from schedule order
            store.add_match(m)
    with ResultStore(db, create=False) as store:
        assert store.tournament()["name"] == "demo"
        assert store.tournament()["config"] == {"bots": ["alpha"], "seed": 7}
        assert store.completed_ids() == {m.match_id for m in ms}
        assert len(store) == 6
        for m in ms:
            assert store.match(m.match_id) == m
            assert store.record(m.match_id) == m.record
        listed = store.matches()
        assert [m.match_id for m in listed] == [m.match_id for m in ms]  # schedule order
        assert listed == [dataclasses.replace(m, record=None) for m in ms]
        gamma = store.matches(bot="gamma")
        assert gamma and all("gamma" in m.bots for m in gamma)
        assert {m.match_id for m in gamma} == {m.match_id for m in ms if "gamma" in m.bots}
        assert store.matches(bot="nobody") == []
        assert "zeta" in store.bots() and "alpha" in store.bots()
        all_faults = store.faults()
        assert len(all_faults) == sum(len(m.faults) for m in ms)
        f = store.faults("m00002")
        assert [{k: x[k] for k in FAULT_KEYS} for x in f] == ms[2].faults
        assert all(x["bot"] == ms[2].bots[x["seat"]] for x in f)
        assert store.verify() == []


def test_a_faults_line_is_stored_escaped_and_bounded_never_raw(db: Path) -> None:
    """The line a bot wrote, as stored: one line of printable text (an escape
    sequence read back to a terminal could rewrite it), at most ~200 characters."""
    m = make_match(2)
    lines = ["\x1b[2J\r\u202e evil", "x" * 100_000, b'{"id": 3}\x1b']
    m = dataclasses.replace(m, faults=[{**m.faults[0], "excerpt": line} for line in lines])
    with ResultStore(db) as store:
        store.add_match(m)
        stored = [f["excerpt"] for f in store.faults()]
    assert stored == ["\\x1b[2J\\r\\u202e evil", "x" * 200 + "...", '{"id": 3}\\x1b']


def test_a_faults_reason_is_stored_as_one_printable_line(db: Path) -> None:
    """The arena makes reasons printable; the store makes sure (they go back to terminals)."""
    m = make_match(2)
    m = dataclasses.replace(m, faults=[{**m.faults[0], "detail": "bad \x1b[2J\u202e\nline"}])
    with ResultStore(db) as store:
        store.add_match(m)
        assert [f["detail"] for f in store.faults()] == ["bad \\x1b[2J\\u202e\\nline"]


def test_normalisation_and_defaults(db: Path) -> None:
    m = StoredMatch(match_id="x", schedule_index=0, table=0, rotation=0, deal=0, seed=1,
                    bots=("a", "b"), totals=(5, 0), places=(2, 1), forfeited=(0, 0),
                    hand_scores=((5, 0),), hand_winners=(1,),
                    decision_stats=[{"count": 3, "timeouts": 0, "total": 0.3, "mean": 0.1,
                                     "max": 0.2, "p95": 0.2}, {}])
    assert m.stderr_logs == [None, None]
    assert m.decision_stats[0] == {"count": 3, "mean": 0.1, "p95": 0.2, "max": 0.2, "timeouts": 0}
    assert m.decision_stats[1] == {"count": 0, "mean": None, "p95": None, "max": None, "timeouts": 0}
    with ResultStore(db) as store:
        store.add_match(m)
        assert store.match("x") == m
        with pytest.raises(StoreError, match="no stored record"):
            store.record("x")


def test_record_kept_as_file(tmp_path: Path, db: Path) -> None:
    rec = {"events": [{"type": "match_start"}], "actions": []}
    path = tmp_path / "m0.json"
    path.write_text(json.dumps(rec))
    m = dataclasses.replace(make_match(0), record=None, record_path=str(path))
    with ResultStore(db) as store:
        store.add_match(m)
        assert store.record("m00000") == rec
        assert store.match("m00000").record_path == str(path)
        path.unlink()
        with pytest.raises(StoreError, match=str(path)):
            store.record("m00000")


# -- errors --------------------------------------------------------------------------


def one_line(exc: pytest.ExceptionInfo, path: Path) -> str:
    msg = str(exc.value)
    assert "\n" not in msg and str(path) in msg
    return msg


def test_missing_and_corrupt_files(tmp_path: Path) -> None:
    missing = tmp_path / "nope.sqlite"
    with pytest.raises(StoreError) as e:
        ResultStore(missing, create=False)
    assert "no such" in one_line(e, missing)
    assert not missing.exists()

    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"this is not a database at all\n" * 200)
    with pytest.raises(StoreError) as e:
        ResultStore(garbage)
    one_line(e, garbage)

    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"")
    with pytest.raises(StoreError) as e:
        ResultStore(empty, create=False)
    one_line(e, empty)

    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as c:
        c.execute("CREATE TABLE t (x)")
    with pytest.raises(StoreError) as e:
        ResultStore(other)
    assert "not an arena results database" in one_line(e, other)

    newer = tmp_path / "newer.sqlite"
    ResultStore(newer).close()
    with sqlite3.connect(newer) as c:
        c.execute("PRAGMA user_version = 99")
    with pytest.raises(StoreError) as e:
        ResultStore(newer)
    assert "newer" in one_line(e, newer)

    with pytest.raises(StoreError) as e:
        ResultStore(tmp_path)
    one_line(e, tmp_path)
    assert resolve_db_path(tmp_path) == tmp_path / DEFAULT_DB_NAME


def test_unknown_match(db: Path) -> None:
    with ResultStore(db) as store:
        with pytest.raises(StoreError) as e:
            store.match("m99")
        assert "m99" in one_line(e, db)
        with pytest.raises(StoreError):
            store.record("m99")


def test_tournament_config_must_match(db: Path) -> None:
    with ResultStore(db) as store:
        store.init_tournament("t", {"a": 1, "b": [1, 2]}, seed=3)
        store.add_match(make_match(1))
        store.init_tournament("t", '{"b": [1, 2],   "a": 1}', seed=3)  # same config, other spelling
        for args in (("t", {"a": 2, "b": [1, 2]}, 3), ("u", {"a": 1, "b": [1, 2]}, 3),
                     ("t", {"a": 1, "b": [1, 2]}, 4)):
            with pytest.raises(StoreError) as e:
                store.init_tournament(*args)
            assert "refusing to mix" in one_line(e, db)
    with ResultStore(db) as store:
        assert store.tournament()["config"] == {"a": 1, "b": [1, 2]}
        assert store.tournament()["seed"] == 3


def test_a_database_that_holds_no_result_is_taken_over_by_a_corrected_file(db: Path) -> None:
    """A run that stopped before storing anything (a bot's script not found)
    leaves the tournament's row behind; the corrected file must not be refused
    for 'mixing' with it, nor keep the old file's bots."""
    with ResultStore(db) as store:
        store.init_tournament("t", {"dir": "/tmp"}, seed=3, bots=["old"])
        store.check_tournament("u", {"dir": "/work"}, seed=4)
        store.init_tournament("u", {"dir": "/work"}, seed=4, bots=["new"])
        assert store.tournament()["name"] == "u"
        assert store.tournament()["config"] == {"dir": "/work"}
        assert store.tournament()["seed"] == 4
        assert store.bots() == ["new"]
        store.add_failure(failure(1))    # a failed match is a result to keep apart
        for args in (("t", {"dir": "/tmp"}, 3), ("u", {"dir": "/tmp"}, 4)):
            with pytest.raises(StoreError) as e:
                store.check_tournament(*args)
            assert "refusing to mix" in one_line(e, db)
            with pytest.raises(StoreError) as e:
                store.init_tournament(*args)
            assert "refusing to mix" in one_line(e, db)
        assert store.tournament()["config"] == {"dir": "/work"}


def test_results_stored_under_a_setting_s_old_name_still_resume(db: Path) -> None:
    with ResultStore(db) as store:
        store.init_tournament("t", {}, seed=3)
        store.add_match(make_match(1))
    with sqlite3.connect(db) as conn:   # as stored before time.per_move became time.per_decision
        conn.execute("""UPDATE tournament SET config = '{"time":{"bank":null,"per_move":1,"startup":10}}'""")
    conn.close()
    with ResultStore(db) as store:
        store.init_tournament("t", {"time": {"startup": 10, "per_decision": 1, "bank": None}}, seed=3)
        assert store.tournament()["config"] == {"time": {"startup": 10, "per_decision": 1, "bank": None}}
        with pytest.raises(StoreError) as e:
            store.init_tournament("t", {"time": {"startup": 10, "per_decision": 2, "bank": None}}, seed=3)
        assert "(time.per_decision: was 1, now 2)" in one_line(e, db)


def test_duplicate_match_is_refused(db: Path) -> None:
    with ResultStore(db) as store:
        store.add_match(make_match(1))
        with pytest.raises(StoreError, match="already stored"):
            store.add_match(make_match(1))
        with pytest.raises(StoreError, match="schedule index 1 is already taken by match 'm00001'"):
            store.add_match(dataclasses.replace(make_match(1), match_id="other"))
        assert store.match("m00001") == make_match(1)
        assert store.completed_ids() == {"m00001"}
        assert store.verify() == []


def test_inconsistent_match_is_refused(db: Path) -> None:
    m = make_match(1)
    with ResultStore(db) as store:
        for bad in (dataclasses.replace(m, bots=["a", "a", "b", "c"]),
                    dataclasses.replace(m, places=[1, 2]),
                    dataclasses.replace(m, hand_winners=m.hand_winners[:-1]),
                    dataclasses.replace(m, hand_winners=[7] * m.hands),
                    dataclasses.replace(m, faults=[{"seat": 9, "kind": "crash"}])):
            with pytest.raises(StoreError, match="m00001"):
                store.add_match(bad)
        assert store.completed_ids() == set()


# -- atomicity ---------------------------------------------------------------------


@pytest.mark.parametrize("breakage", ["fault_kind", "hand_score", "unbindable"])
def test_failed_add_stores_nothing(db: Path, breakage: str) -> None:
    good = make_match(0)
    m = make_match(2)  # two faults, several hands
    m = dataclasses.replace(m, bots=["newbot", *m.bots[1:]])
    if breakage == "fault_kind":  # fails at the last insert (CHECK constraint)
        m = dataclasses.replace(m, faults=[m.faults[0], {**m.faults[1], "kind": "bogus"}])
    elif breakage == "hand_score":  # fails after the match and seat rows
        scores = [list(r) for r in m.hand_scores]
        scores[-1][-1] = "lots"
        m = dataclasses.replace(m, hand_scores=scores)
    else:  # a value sqlite3 cannot bind, in the last fault
        m = dataclasses.replace(m, faults=[m.faults[0], {**m.faults[1], "detail": object()}])
    with ResultStore(db) as store:
        store.add_match(good)
        with pytest.raises(StoreError) as e:
            store.add_match(m)
        assert "m00002" in one_line(e, db)
        assert store.completed_ids() == {"m00000"}
        assert "newbot" not in store.bots()
        store.add_match(make_match(3))  # the connection is usable afterwards
        assert store.completed_ids() == {"m00000", "m00003"}
        assert store.verify() == []
    assert count(db, "seats") == 8
    assert count(db, "hand_scores") == 2 * 7 * 4
    assert count(db, "faults") == len(good.faults) + len(make_match(3).faults)
    assert count(db, "matches") == 2


# -- durability and resume -----------------------------------------------------------------

WRITER = FACTORY + textwrap.dedent('''
    import sys
    from arena.tournament.results.database import ResultStore
    store = ResultStore(sys.argv[1])
    store.init_tournament("kill", {"n": 1}, seed=5)
    done = store.completed_ids()
    i = written = 0
    while True:
        m = make_match(i)
        if m.match_id not in done:
            store.add_match(m)
            written += 1
            if written == 3:
                print("writing", flush=True)
        i += 1
''')


def test_sigkill_while_writing_then_resume(tmp_path: Path) -> None:
    db = tmp_path / DEFAULT_DB_NAME
    rng = random.Random(1)
    previous = 0
    for _round in range(3):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(db)], stdout=subprocess.PIPE,
                                cwd=REPO, text=True)
        try:
            assert proc.stdout.readline().strip() == "writing"
            time.sleep(rng.uniform(0.05, 0.25))
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            proc.stdout.close()
        with sqlite3.connect(db) as c:
            assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        with ResultStore(db, create=False) as store:
            assert store.verify() == []
            ids = store.completed_ids()
            # one writer in schedule order: a prefix, grown by each run (resume)
            assert ids == {f"m{i:05d}" for i in range(len(ids))}
            assert len(ids) >= previous + 3
            previous = len(ids)
            for m in store.matches():
                assert m == dataclasses.replace(make_match(m.schedule_index), record=None)
            for i in rng.sample(range(len(ids)), 5) + [len(ids) - 1]:
                assert store.match(f"m{i:05d}") == make_match(i)


# -- failed matches (arena-side errors) ------------------------------------------------

from arena.tournament.results.database import FailedMatch  # noqa: E402


def failure(i: int, reason: str = "ZeroDivisionError: division by zero") -> FailedMatch:
    m = make_match(i)
    return FailedMatch(m.match_id, m.schedule_index, tuple(m.bots), reason, log_path="logs/errors.log")


def test_failure_is_kept_apart_and_replaced_by_a_later_result(db: Path) -> None:
    with ResultStore(db) as store:
        store.add_match(make_match(0))
        first = store.add_failure(failure(1, "RuntimeError: boom\nsecond line"))
        assert first.reason == "RuntimeError: boom second line" and first.attempts == 1
        again = store.add_failure(failure(1, "KeyError: 'x'"))
        assert again.attempts == 2 and again.reason == "KeyError: 'x'"
        assert [f.match_id for f in store.failures()] == ["m00001"]
        assert store.failures(bot=make_match(1).bots[0])[0].bots == tuple(make_match(1).bots)
        assert store.failures(bot="nobody") == []
        # a failed match is not complete: the runner plays it again
        assert store.completed_ids() == {"m00000"} and len(store) == 1
        assert [m.match_id for m in store.matches()] == ["m00000"]
        store.add_match(make_match(1))
        assert store.failures() == []
        assert store.completed_ids() == {"m00000", "m00001"}
        with pytest.raises(StoreError, match="already stored"):
            store.add_failure(failure(1))
        assert store.verify() == []


def test_version_1_database_opens_and_keeps_every_result(db: Path) -> None:
    ms = [make_match(i) for i in range(3)]
    with ResultStore(db) as store:
        store.init_tournament("old", {"n": 1}, seed=1)
        for m in ms:
            store.add_match(m)
    # What arena wrote before failed matches existed: the same tables minus that one
    # (and minus the fault columns of version 3 and the seat column of version 4).
    with sqlite3.connect(db) as c:
        c.execute("DROP TABLE failed_matches")
        c.execute("ALTER TABLE seats DROP COLUMN off_turn_cpu")
        c.execute("ALTER TABLE faults DROP COLUMN excerpt")
        c.execute("ALTER TABLE faults DROP COLUMN request_id")
        c.execute("PRAGMA user_version = 1")
    c.close()
    # Its faults read back without what version 3 added.
    ms = [dataclasses.replace(m, faults=[{**f, "excerpt": None, "request_id": None} for f in m.faults])
          for m in ms]
    with ResultStore(db, create=False) as store:
        assert store.matches() == [dataclasses.replace(m, record=None) for m in ms]
        assert store.match("m00002") == ms[2]
        assert store.failures() == []
        store.add_failure(failure(3))
        assert store.verify() == []
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    c.close()


def test_a_database_another_program_locks_is_one_line_and_loses_nothing(db: Path) -> None:
    """An organiser's sqlite3 shell left in a write transaction: the run's
    writes wait out the busy timeout, then raised sqlite3's own error, a
    traceback of `arena run` at its start or in the middle of the run."""
    with ResultStore(db) as store:
        store.init_tournament("t", {"a": 1}, seed=3)
        store.add_match(make_match(0))
        store.add_failure(failure(1))
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with ResultStore(db) as store:
            store._conn.execute("PRAGMA busy_timeout = 50")   # not the 30 s an arena run waits
            for write in (lambda: store.init_tournament("t", {"a": 1}, seed=3),
                          lambda: store.add_match(make_match(2)),
                          lambda: store.add_failure(failure(3))):
                with pytest.raises(StoreError) as e:
                    write()
                assert "locked" in one_line(e, db) and "another program" in str(e.value)
            assert len(store) == 1
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with ResultStore(db) as store:
        store.init_tournament("t", {"a": 1}, seed=3)
        assert store.completed_ids() == {"m00000"} and [f.match_id for f in store.failures()] == ["m00001"]


def test_a_record_reads_back_with_the_values_it_was_stored_with(db: Path) -> None:
    """Records are stored as msgspec's JSON (a twelfth of json.dumps's CPU):
    what a reader decodes is what was stored, for the values json.dumps
    writes otherwise (exponents, tiny and large floats, non-ASCII names,
    nested lists, large integers)."""
    m = make_match(3)
    record = {"events": [{"type": "match_start", "players": ["Zoë", "名前", "\u202e x"], "n": 2 ** 62}],
              "actions": [{"seat": 1, "action": {"kind": "discard", "card": "10♥"}}],
              "trace": [[1e-05, 2.5e-07, 1e+16, 1.2345678901234568e+17, 0.1, -0.0, 0.0, 3.0]]}
    with ResultStore(db) as store:
        store.add_match(dataclasses.replace(m, record=record))
        back = store.record(m.match_id)
    assert back == record
    assert json.dumps(back, sort_keys=True) == json.dumps(record, sort_keys=True)
