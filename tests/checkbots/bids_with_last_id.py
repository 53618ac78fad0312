"""Wants every card another seat discards: as soon as it sees the discard
it sends a buy, with the id of the last request it got, though nobody asked
(a buy request comes only when the card is offered, if ever)."""
from common import Session, run


class Bidder(Session):
    seat = None
    last_id = 0

    def lines_for(self, msg, reply):
        if msg.get("type") == "start":
            self.seat = msg.get("seat")
        if msg.get("type") == "request":
            self.last_id = msg["id"]
        event = msg.get("event") or {}
        lines = super().lines_for(msg, reply)
        if msg.get("type") == "event" and event.get("type") == "discard" and event.get("seat") != self.seat:
            lines.append({"id": self.last_id, "buy": True})
        return lines


if __name__ == "__main__":
    run(Bidder("bids-with-last-id"))
