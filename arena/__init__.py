"""arena: a tournament runner for Shanghai Rummy bots."""

import os

__version__ = "0.1.0"

# One BLAS thread, unless the user says otherwise; set before numpy can load
# OpenBLAS, which reads it then.  The ratings' matrices are 2 x 2 to 7 x 7,
# where more threads gain nothing, and OpenBLAS's idle threads spin-wait
# after each call, on the CPUs the bots and the matches need: a round-robin
# match played after a settling run's first assessment took 0.057-0.074
# CPU-s instead of 0.052-0.053 (benchmarks/rounds_cost.py).  Bots do not
# inherit it (their environment is built apart: sandbox.bot_environment).
for _variable in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")
