"""Bids for every card another seat buys, as if buying were an auction: an
extra buy line after its next reply, though nobody asked."""
from common import Session, run


class Bidder(Session):
    seat = None
    bid = False

    def lines_for(self, msg, reply):
        if msg.get("type") == "start":
            self.seat = msg.get("seat")
        event = msg.get("event") or {}
        if msg.get("type") == "event" and event.get("type") == "buy" and event.get("seat") != self.seat:
            self.bid = True
        lines = super().lines_for(msg, reply)
        if msg.get("type") == "request" and self.bid:
            self.bid = False
            lines.append({"buy": True})
        return lines


if __name__ == "__main__":
    run(Bidder("unasked-buy"))
