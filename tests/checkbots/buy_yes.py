"""Answers a buy request with "yes" or "no", as text, not a JSON boolean."""
from common import Session, run


class Words(Session):
    def lines_for(self, msg, reply):
        if reply is not None and isinstance(reply.get("buy"), bool):
            reply = {**reply, "buy": "yes" if reply["buy"] else "no"}
        return super().lines_for(msg, reply)


if __name__ == "__main__":
    run(Words("buy-yes"))
