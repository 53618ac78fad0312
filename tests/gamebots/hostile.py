"""Sends one hostile line, by kind (argv[1]), where argv[2] says: in the
'ready' answer, or in every reply ('reply', the default).  'crlf' is the
friendly exception: ordinary lines ended by CR LF.

    hostile.py hugeint ready      {"type":"ready","name":"hostile","n":999...9}  (5000 digits)
    hostile.py hugeint            {"id":999...9,"draw":"stock"}                  (as the id)
"""
import json
import sys

import common

HUGE = "9" * 5000
KINDS = {
    # (the reply line from a good reply's JSON text, the ready line)
    "hugeint": (lambda good, i: good.replace(f'"id": {i}', f'"id": {HUGE}'),
                lambda good: good[:-1] + f', "n": {HUGE}}}'),
    "hugefield": (lambda good, i: good[:-1] + f', "n": {HUGE}}}', None),
    "nan": (lambda good, i: good[:-1] + ', "n": NaN}', lambda good: good[:-1] + ', "n": NaN}'),
    "overflow": (lambda good, i: good.replace(f'"id": {i}', '"id": 1e400'), None),
    "deep": (lambda good, i: "[" * 50000 + "]" * 50000, lambda good: '{"type": "ready", "name": ' + "[" * 50000),
    "dupkey": (lambda good, i: good[:-1] + f', "id": {i}}}', lambda good: good[:-1] + ', "name": "twice"}'),
    "bom": (lambda good, i: "\ufeff" + good, lambda good: "\ufeff" + good),
    "floatid": (lambda good, i: good.replace(f'"id": {i}', f'"id": {i}.0'), None),
    "crlf": (lambda good, i: good + "\r", lambda good: good + "\r"),
    "extra": (lambda good, i: good[:-1] + ', "extra": 1}', lambda good: good[:-1] + ', "extra": 1}'),
    # a name that turns the rest of its line right to left (U+202E, raw in the JSON text)
    "bidiname": (None, lambda good: good.replace('"hostile"', '"hos\u202etile"')),
    "longname": (None, lambda good: good.replace('"hostile"', '"' + "x" * 10240 + '"')),
}


def emit(text):
    sys.stdout.buffer.write(text.encode("utf-8") + b"\n")
    sys.stdout.flush()


kind = sys.argv[1]
where = sys.argv[2] if len(sys.argv) > 2 else "reply"
make_reply, make_ready = KINDS[kind]


def on_start(msg):
    good = json.dumps(common.ready(msg, "hostile"))
    emit(make_ready(good) if where == "ready" else good)


def on_request(msg):
    good = json.dumps(common.minimal_reply(msg))
    emit(make_reply(good, msg["id"]) if where == "reply" else good)


common.run(on_request=on_request, on_start=on_start)
