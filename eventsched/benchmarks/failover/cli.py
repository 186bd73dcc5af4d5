"""High availability measured as an operator would see it, on a real control plane.

    python -m eventsched.benchmarks.failover [--pods 1000] [--nodes 100]
        [--scenario kill-leader|pg-restart|apiserver-restart|all] [--json]
        [--down SECONDS] [--rate PODS_PER_SECOND] [--qps Q] [--burst B]
        [--server POSTGRESQL_URL] [--keep-logs DIR]

Each scenario gets a fresh control plane (controlplane.py: etcd + kube-apiserver
from $EVENTSCHED_KUBE_BIN), N ready nodes, M pods (schedulerName eventsched; created before
the schedulers start, but in pg-restart) and a fresh PostgreSQL database on --server
(created, `eventsched db upgrade`d, dropped at the end). The schedulers are real `eventsched run`
processes with the default configuration (leader election on the Lease kube-system/eventsched,
15 s / 10 s / 2 s; client QPS 50, burst 100). Bind times are when the benchmark's watch of
bound pods (``spec.nodeName!=``) saw each pod; every replica's /readyz and /metrics are
scraped every 0.25 s.

- kill-leader: two replicas; once the leader has bound a tenth of the pods it gets SIGKILL.
  Failover = first bind by the new leader - kill, and - last bind by the old one.
- pg-restart: one replica, the pods created while it runs (--rate a second); once a third
  is bound, `pg_ctlcluster ... restart` of the local PostgreSQL, or stop, --down seconds,
  start (every session on it ends: do not run it while anything else uses that server).
- apiserver-restart: one replica; once a third is bound, kube-apiserver gets SIGTERM and is
  started again with the same flags (etcd keeps running).

After each: all pods bound, none bound twice (one `bound` event per pod uid, no Binding of
ours refused with 409, the node in the log is the node in the API), every bound pod has its
`bound` event, and the hash chain verifies.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from eventsched.benchmarks.failover.measure import SCENARIOS, measure
from eventsched.benchmarks.failover.run import DEFAULT_SERVER, Settings
from eventsched.logs import configure_logging


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m eventsched.benchmarks.failover", description=__doc__
    )
    parser.add_argument("--pods", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--scenario", choices=[*SCENARIOS, "all"], default="all")
    parser.add_argument(
        "--server",
        default=DEFAULT_SERVER,
        help=f"PostgreSQL to make databases on ({DEFAULT_SERVER})",
    )
    parser.add_argument("--qps", type=float, help="clientConnection.qps (default: eventsched's)")
    parser.add_argument("--burst", type=int, help="clientConnection.burst (default: eventsched's)")
    parser.add_argument(
        "--down",
        type=float,
        default=0.0,
        help="restart scenarios: keep the server stopped this many seconds (default 0: restart)",
    )
    parser.add_argument(
        "--keep-logs", type=Path, metavar="DIR", help="copy the logs to DIR/SCENARIO"
    )
    parser.add_argument(
        "--rate", type=float, default=20.0, help="pg-restart: pods created a second (default 20)"
    )
    parser.add_argument(
        "--kill-apiserver", action="store_true", help="apiserver-restart: SIGKILL, not SIGTERM"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per scenario")
    args = parser.parse_args(argv)
    settings = Settings(
        args.nodes,
        args.pods,
        args.server,
        args.qps,
        args.burst,
        args.down,
        args.keep_logs,
        args.rate,
        args.kill_apiserver,
    )
    configure_logging("console", "warning")  # this process's own (the log's reads): stderr
    # SIGTERM (a `timeout`, a CI's cancel) unwinds like Ctrl-C: the control plane, the
    # replicas and the database are stopped and dropped, not left behind.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    scenarios = SCENARIOS if args.scenario == "all" else (args.scenario,)
    ok = True
    for scenario in scenarios:
        result = measure(scenario, settings)
        ok = ok and result.ok
        if args.json:
            print(json.dumps(result.to_dict()), flush=True)
        else:
            print("\n".join(result.lines()), flush=True)
    return 0 if ok else 1
