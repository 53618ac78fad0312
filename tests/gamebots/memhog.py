"""On its first request, allocates (and touches) 10 MB blocks without end."""
import common


def hog(msg):
    hoard = []
    while True:
        hoard.append(b"\x01" * (10 << 20))


common.run(on_request=hog)
