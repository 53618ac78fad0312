"""``python -m arena`` and the ``arena`` command (``run``): the same.

The first thing either does is to catch SIGINT and SIGTERM, before it
imports the command line (click, the commands, a second or so on a busy
machine): a signal that comes while arena starts, before any command runs,
has nothing to clean up, and ends it as a signal during a command does,
with one line and exit status 130 or 143 (``cli.common``), not with a
traceback or killed by the signal.  Nothing else is imported here.
"""

import signal
import sys

# 128 + the signal, as a shell reports a command the signal stopped (cli.common's).
_STOPPED = {signal.SIGINT: (130, "interrupted"), signal.SIGTERM: (143, "terminated (SIGTERM)")}


def _starting(signum: int, frame: object) -> None:
    """A signal while arena starts: one line, and the exit status."""
    for s in _STOPPED:
        signal.signal(s, signal.SIG_IGN)
    status, line = _STOPPED[signal.Signals(signum)]
    if signum == signal.SIGINT and sys.stderr.isatty():
        sys.stderr.write("\n")          # past the terminal's "^C"
    sys.stderr.write(f"Error: {line}\n")
    raise SystemExit(status)


def run() -> None:
    """The ``arena`` command: catch the stop signals, then import and run it."""
    for s in _STOPPED:
        if signal.getsignal(s) != signal.SIG_IGN:       # nohup, a background job: left ignored
            signal.signal(s, _starting)
    from .cli.app import main  # lazy: the stop signals are caught before the command line loads (issue 32)

    main()


if __name__ == "__main__":
    run()
