"""Swaps a natural card it holds for the wild it stands for whenever a run
on the table lets it, down or not: "a joker is always worth taking".  A
player who is not down may swap only in the turn it goes down."""
from common import Session, is_wild, run


class Swapper(Session):
    def lines_for(self, msg, reply):
        if msg.get("type") == "request" and msg.get("kind") == "play" and reply is not None:
            view = msg["view"]
            steps = reply.get("steps") or []
            if not view["down"][view["seat"]] and not any("go_down" in s for s in steps):
                reply = self._with_swap(view, reply)
        return super().lines_for(msg, reply)

    def _with_swap(self, view, reply):
        hand = list(view["cards"])
        for meld in view["melds"]:
            if meld["kind"] != "run":
                continue
            for card, stands in zip(meld["cards"], meld["stands_for"]):
                if is_wild(card) and stands in hand:
                    hand.remove(stands)
                    discard = reply.get("discard")
                    if discard == stands or discard not in hand:
                        discard = hand[-1]
                    step = {"swap": {"meld": meld["id"], "card": stands}}
                    return {"id": reply["id"], "steps": [*(reply.get("steps") or []), step], "discard": discard}
        return reply


if __name__ == "__main__":
    run(Swapper("swap-not-down"))
