"""A bot's confinement: what it may use, what the kernel enforces and what
the watchdog watches.

Modules: ``spec`` (BotSpec, TimeControl: what to run and the limits it runs
under), ``limits`` (rlimits, the memory watchdog), ``cgroups`` (a bot's
cgroup: kernel-kept memory and task limits, its CPU counter), ``turns`` (time
between turns, the off-turn CPU guard), ``procfs`` (a bot's processes read
from /proc, signals to its group), ``affinity`` (CPU pinning), ``sandbox``
(the bubblewrap sandbox every bot runs in where it works),
``sandbox_policy`` (its allow-list of mounts) and ``seccomp`` (its
system-call filter).

Nothing here talks to a bot or imports the rest of ``arena.process``, which
builds on it.  This file imports nothing: a process that only describes bots
(``spec``) must not load what confines them.
"""
