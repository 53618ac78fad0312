"""Explains why it takes the upcard, in a field the protocol does not have."""
from common import Session, run


class Chatty(Session):
    def lines_for(self, msg, reply):
        if reply is not None and reply.get("draw") == "upcard":
            reply = {**reply, "why": "it fits my hand"}
        return super().lines_for(msg, reply)


if __name__ == "__main__":
    run(Chatty("unknown-field"))
