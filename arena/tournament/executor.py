"""The local executors, where they lived before ``executors/``: kept so that
``from arena.tournament.executor import ...`` goes on working."""

from .executors.local import (  # noqa: F401
                              Executor,
                              MatchFailure,
                              Outcome,
                              ProcessExecutor,
                              SerialExecutor,
                              WorkerError,
                              make_executor,
                              worker_command,
)

__all__ = ["Executor", "SerialExecutor", "ProcessExecutor", "MatchFailure", "Outcome", "WorkerError",
           "make_executor", "worker_command"]
