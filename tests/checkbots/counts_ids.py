"""Numbers its replies itself, from 1 in every match, instead of echoing the id."""
from common import Session, run


class Counter(Session):
    count = 0

    def lines_for(self, msg, reply):
        if msg.get("type") == "start":
            self.count = 0
        if msg.get("type") == "request" and reply is not None:
            self.count += 1
            reply = {**reply, "id": self.count}
        return super().lines_for(msg, reply)


if __name__ == "__main__":
    run(Counter("counts-ids"))
