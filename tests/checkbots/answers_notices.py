"""Acknowledges every message it gets, notices included: its answer to the
event notices that come just before a request is read as the reply to it
(docs/PROTOCOL.md: a notice is never answered)."""
from common import Session, run


class Acknowledger(Session):
    def lines_for(self, msg, reply):
        if msg.get("type") in ("event", "error", "end"):
            return [{"ok": True}]
        return super().lines_for(msg, reply)


if __name__ == "__main__":
    run(Acknowledger("answers-notices"))
