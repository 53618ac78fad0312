"""Lays its cards off before it goes down, in the same turn: "I go down in
this turn anyway"."""
from common import Session, run


class Eager(Session):
    def lines_for(self, msg, reply):
        if msg.get("type") == "request" and msg.get("kind") == "play" and reply and reply.get("steps"):
            steps = reply["steps"]
            reply["steps"] = [s for s in steps if "lay_off" in s] + [s for s in steps if "lay_off" not in s]
        return super().lines_for(msg, reply)


if __name__ == "__main__":
    run(Eager("lays-off-first"))
