"""Process layer: run bot programs and exchange JSON lines with them.

Knows nothing about any game: it moves JSON objects, one per line, over a
bot's stdin/stdout, measures how long the bot takes, enforces time, memory
and CPU limits, and makes sure no bot process outlives its ``BotProcess``.

Modules: ``bot`` (BotProcess: a transport, its stats and time bank),
``transport`` (the Transport interface and PipeTransport, the real process),
``spawn`` (starting it: environment, sandbox, limits), ``exchange`` (awaiting
replies over a transport's events), ``request`` (a request's allowance and
the time bank), ``exits`` (reaping, exit messages, cleanup), ``interrupts``
(signals while a bot runs), ``errors`` (typed failures), ``streams``
(reading stdout, line splitting), ``stderr`` (reading stderr into its bounded
log) and ``stats`` (decision times).  A bot's confinement is the subpackage
``confine``, which imports nothing from here: ``spec`` (BotSpec,
TimeControl), ``limits`` (rlimits, memory watchdog), ``cgroups`` (a bot's
cgroup: kernel-kept memory and task limits, its CPU counter), ``turns`` (time
between turns, the off-turn CPU guard), ``procfs`` (a bot's processes read
from /proc, signals to its group), ``affinity`` (CPU pinning), ``sandbox``
(the bubblewrap sandbox every bot runs in where it works), ``sandbox_policy``
(its allow-list of mounts) and ``seccomp`` (its system-call filter).  The
strict, bounded decoder of every line a bot writes is ``arena.jsonline``.
Every line in and out is logged at DEBUG level on the ``arena.process`` logger.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..jsonline import DEFAULT_LIMITS, JSONLimits, JSONLineError, decode_object
    from .bot import QUIT_MESSAGE, BotProcess
    from .confine.procfs import group_members, kill_group
    from .confine.sandbox import Containment, SandboxPolicy, SandboxUnavailable
    from .confine.spec import BotSpec, TimeControl
    from .errors import BotCrashed, BotFailure, BotMalformed, BotStartupError, BotTimeout, describe_exit
    from .stats import DecisionStats
    from .streams import LineSplitter
    from .transport import PipeTransport, Transport, TransportFactory, TransportSetup

__all__ = [
    "QUIT_MESSAGE", "BotProcess", "BotSpec", "TimeControl", "DecisionStats",
    "BotFailure", "BotTimeout", "BotCrashed", "BotMalformed", "BotStartupError",
    "describe_exit", "group_members", "kill_group", "LineSplitter",
    "Containment", "SandboxPolicy", "SandboxUnavailable",
    "decode_object", "JSONLimits", "JSONLineError", "DEFAULT_LIMITS",
    "PipeTransport", "Transport", "TransportFactory", "TransportSetup",
]

# Where each name lives (PEP 562: loaded on first use).  A process that only
# describes bots (a tournament's parent: ``BotSpec``, ``TimeControl``, the
# sandbox mode) must not load what runs them (threads, ctypes, rlimits).
_MODULE_OF = {
    "DEFAULT_LIMITS": "..jsonline", "JSONLimits": "..jsonline", "JSONLineError": "..jsonline",
    "decode_object": "..jsonline", "QUIT_MESSAGE": ".bot", "BotProcess": ".bot", "BotFailure": ".errors",
    "BotTimeout": ".errors", "BotCrashed": ".errors", "BotMalformed": ".errors", "BotStartupError": ".errors",
    "describe_exit": ".errors", "group_members": ".confine.procfs", "kill_group": ".confine.procfs",
    "Containment": ".confine.sandbox", "SandboxPolicy": ".confine.sandbox",
    "SandboxUnavailable": ".confine.sandbox",
    "BotSpec": ".confine.spec", "TimeControl": ".confine.spec", "DecisionStats": ".stats", "LineSplitter": ".streams",
    "PipeTransport": ".transport", "Transport": ".transport", "TransportFactory": ".transport",
    "TransportSetup": ".transport",
}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value
