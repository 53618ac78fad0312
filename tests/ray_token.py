"""A Ray head with token authentication, for tests/test_ray.py, run inside a
private network namespace.

    python tests/ray_token.py TOURNAMENT OUT REPORT

Starts a head of one CPU whose token authentication is on (``RAY_AUTH_MODE``
and ``RAY_AUTH_TOKEN`` in its environment), then runs ``arena run TOURNAMENT
--address ... --out OUT`` from a machine without the token (no ``RAY_AUTH_*``
variables, and a home without ``~/.ray/auth_token``).  It writes REPORT
(JSON): the run's exit status and stderr, whether OUT exists, the address.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

DEADLINE = 240.0


def main(tournament: str, out: str, report_path: str) -> None:
    os.environ["RAY_AUTH_MODE"] = "token"
    os.environ["RAY_AUTH_TOKEN"] = "0123456789abcdef" * 2
    from ray.cluster_utils import Cluster  # lazy: after the variables, which Ray reads as it loads

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    report: dict[str, object] = {"address": cluster.address}
    try:
        with tempfile.TemporaryDirectory() as home:
            env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
            env["HOME"] = home
            run = subprocess.run([sys.executable, "-m", "arena", "run", tournament, "--address", cluster.address,
                                  "--out", out], capture_output=True, text=True, timeout=DEADLINE, env=env)
        report.update(exit=run.returncode, stderr=run.stderr[-4000:], out_exists=Path(out).exists())
    finally:
        cluster.shutdown()
        Path(report_path).write_text(json.dumps(report), encoding="utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:4])
