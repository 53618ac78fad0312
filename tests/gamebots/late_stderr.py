"""Plays like minimal, but writes on stderr only late, never while deciding:
with --on-end a line on each 'end' (naming the match), with --on-quit a line
on 'quit'.  A bot that prints a summary of its match, or its own statistics
as it exits, does this."""
import sys

import common


def on_message(msg):
    kind = msg.get("type")
    if kind == "end" and "--on-end" in sys.argv:
        sys.stderr.write(f"summary of {msg['match']}: places {msg['places']}\n")
        sys.stderr.flush()
    elif kind == "quit" and "--on-quit" in sys.argv:
        sys.stderr.write("quitting now\n")
        sys.stderr.flush()


common.run(on_message=on_message)
