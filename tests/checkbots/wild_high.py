"""Lays its wild cards off at the high end of a run: "a wild can go
anywhere".  Not above a high ace, though."""
from common import Session, is_wild, run


class HighWilds(Session):
    def lines_for(self, msg, reply):
        if msg.get("type") == "request" and msg.get("kind") == "play" and reply is not None:
            runs = [m["id"] for m in msg["view"]["melds"] if m["kind"] == "run"]
            for step in reply.get("steps") or []:
                lay = step.get("lay_off")
                if lay and runs and is_wild(lay["card"]):
                    lay.update(meld=runs[0], end="high")
        return super().lines_for(msg, reply)


if __name__ == "__main__":
    run(HighWilds("wild-high"))
