"""Prints what it is thinking about with print(): to stdout, where the arena
reads its replies."""
from common import Session, run


class Chatty(Session):
    def lines_for(self, msg, reply):
        if msg.get("type") == "request":
            print(f"thinking about request {msg['id']} ({msg['kind']})", flush=True)
        return super().lines_for(msg, reply)


if __name__ == "__main__":
    run(Chatty("debug-stdout"))
