"""Down with two cards, lays off the one that fits and discards the other,
"going out" by discarding its last card."""
from common import Session, is_wild, run


class LastDiscard(Session):
    def lines_for(self, msg, reply):
        if msg.get("type") == "request" and msg.get("kind") == "play" and reply is not None:
            view = msg["view"]
            cards = view["cards"]
            sets = [m["id"] for m in view["melds"] if m["kind"] == "set"]
            if view["down"][view["seat"]] and len(cards) == 2 and sets:
                wild = next((c for c in cards if is_wild(c)), None)
                if wild is not None:
                    other = [c for c in cards if c != wild][0]
                    reply = {"id": msg["id"], "steps": [{"lay_off": {"meld": sets[0], "card": wild}}],
                             "discard": other}
        return super().lines_for(msg, reply)


if __name__ == "__main__":
    run(LastDiscard("discards-last"))
