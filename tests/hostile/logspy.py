"""Hostile test bot: reads the other bots' stderr logs while the match is
played.  Many bots print their hand on stderr to debug; the arena writes
that, live, into one log file per bot per match, all in one directory.

It writes its own dealt hand on stderr as a debugging bot would, and at each
request of hand 1 looks through the ``*.stderr.log`` files under LOGSPY_DIR
(default ``.``, its working directory, where ``arena play`` writes its log
its working directory) for the hands other seats wrote there for the same
match.  Like memory.py, each report is a line on stderr:
``MEMORY {"match": ..., "seat": ..., "cards": [...], "claims": {seat: cards}}``
(``cards``: its dealt hand; ``claims``: the hands it read in the logs)."""
import glob
import json
import os
import sys

import proto

start = proto.START
dealt = {}              # match -> its cards at its first request of hand 1
claimed = {}            # match -> {seat: cards} read so far


def read_logs(match, seat):
    found = {}
    for path in glob.glob(os.path.join(os.environ.get("LOGSPY_DIR", "."), "**",
                                       "*.stderr.log"), recursive=True):
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = f.read(1 << 20).splitlines()
        except OSError:
            continue
        for line in lines:
            if not line.startswith("MEMORY "):
                continue
            try:
                other = json.loads(line[len("MEMORY "):])
            except ValueError:
                continue
            if other.get("match") == match and other.get("seat") != seat:
                found[str(other["seat"])] = other["cards"]
    return found


def on_request(msg):
    match = start.get("match", "")
    view = msg.get("view", {})
    if view.get("hand") != 1:
        return
    seat = start.get("seat")
    first = match not in dealt
    dealt.setdefault(match, sorted(view.get("cards", [])))
    claims = read_logs(match, seat)
    if first or claims != claimed.get(match, {}):
        claimed[match] = claims
        sys.stderr.write("MEMORY " + json.dumps({"match": match, "seat": seat,
                                                 "cards": dealt[match], "claims": claims}) + "\n")
        sys.stderr.flush()


proto.serve(on_request=on_request, name="logspy")
