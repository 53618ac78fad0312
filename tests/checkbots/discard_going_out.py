"""Always sends a discard: going out by laying off, it keeps the last card
it laid off as its discard as well."""
from common import Session, run


class AlwaysDiscards(Session):
    def lines_for(self, msg, reply):
        if msg.get("type") == "request" and msg.get("kind") == "play" and reply is not None:
            if reply.get("discard") is None:
                last = None
                for step in reply.get("steps") or []:
                    if "lay_off" in step:
                        last = step["lay_off"]["card"]
                    elif "go_down" in step:
                        last = step["go_down"][-1]["cards"][-1]
                reply = {**reply, "discard": last}
        return super().lines_for(msg, reply)


if __name__ == "__main__":
    run(AlwaysDiscards("discard-going-out"))
