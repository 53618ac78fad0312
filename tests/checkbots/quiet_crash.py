"""Its play code raises on a run that ends in an ace; botkit catches the
exception and sends a safe discard, so every reply is legal."""
from common import Session, run


class Fragile(Session):
    def _request(self, msg):
        if msg.get("kind") == "play":
            runs = [m for m in msg["view"]["melds"] if m["kind"] == "run"]
            if any(m["stands_for"][-1] == "A" + m["stands_for"][-1][-1] for m in runs):
                self.player = None      # the bug: the player is gone, botkit's call fails
        return super()._request(msg)


if __name__ == "__main__":
    run(Fragile("quiet-crash"))
