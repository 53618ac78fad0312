"""Writes its plays in the keyed form, but spells the lay-off field
"layoff" (docs/PROTOCOL.md says "lay_off")."""
from common import Session, run


class Typo(Session):
    def lines_for(self, msg, reply):
        if msg.get("type") == "request" and msg.get("kind") == "play" and reply and reply.get("steps"):
            steps = reply.pop("steps")
            downs = [s["go_down"] for s in steps if "go_down" in s]
            if downs:
                reply["go_down"] = downs[0]
            lays = [s["lay_off"] for s in steps if "lay_off" in s]
            if lays:
                reply["layoff"] = lays
            swaps = [s["swap"] for s in steps if "swap" in s]
            if swaps:
                reply["swap"] = swaps
        return super().lines_for(msg, reply)


if __name__ == "__main__":
    run(Typo("layoff-typo"))
