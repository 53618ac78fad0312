"""Takes the top of the discard pile when it fits its hand or a set on the
table, reading the view's pile_top and not the request's options: after a
buy, only the stock may be drawn."""
from common import Session, is_wild, rank, run


class PileReader(Session):
    def lines_for(self, msg, reply):
        if msg.get("type") == "request" and msg.get("kind") == "draw":
            view = msg["view"]
            top = view.get("pile_top")
            ranks = {rank(c) for c in view["cards"] if not is_wild(c)}
            ranks |= {m["stands_for"][0] for m in view["melds"] if m["kind"] == "set"}
            if top and not is_wild(top) and rank(top) in ranks:
                reply = {"id": msg["id"], "draw": "upcard"}
        return super().lines_for(msg, reply)


if __name__ == "__main__":
    run(PileReader("upcard-after-buy"))
