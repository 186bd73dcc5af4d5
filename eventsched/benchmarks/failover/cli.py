"""High availability measured as an operator would see it, on a real control plane.

    python -m eventsched.benchmarks.failover [--pods 1000] [--nodes 100]
        [--scenario kill-leader|pg-restart|apiserver-restart|kill-9|disk-full|api-faults|all]
        [--json] [--down SECONDS] [--rate PODS_PER_SECOND] [--qps Q] [--burst B]
        [--lease-duration S] [--kills N] [--seed S] [--fault-seconds S] [--fault-share F]
        [--disk-mib M] [--server POSTGRESQL_URL] [--keep-logs DIR]

Each scenario gets a fresh control plane (controlplane.py: etcd + kube-apiserver
from $EVENTSCHED_KUBE_BIN), N ready nodes, M pods (schedulerName eventsched; created before
the schedulers start, but in pg-restart, disk-full and api-faults) and a fresh PostgreSQL database on --server
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
- kill-9: one replica gets SIGKILL at --kills random moments (--seed) and is started again
  on the same log each time; it ends when every pod is bound.
- disk-full: one replica, its database in a tablespace on a --disk-mib MiB tmpfs (mounted
  for the run: root, local PostgreSQL); the pods arrive as in pg-restart; once a third is
  bound a file fills the tmpfs, removed --down seconds later (default 15).
- api-faults: one replica talks to kube-apiserver through a proxy that, for
  --fault-seconds once a twentieth of the pods is bound, answers --fault-share of the
  requests with 409/410/429/500 as kube-apiserver would; the pods arrive as in pg-restart.

After each: all pods bound, none bound twice (one `bound` event per pod uid, no Binding of
ours refused with 409 but by the proxy, the node in the log is the node in the API), every
bound pod has its `bound` event after its `reserved`, no reservation left open, no pod
pending that fits, and the hash chain verifies.
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
    parser.add_argument(
        "--lease-duration",
        type=int,
        metavar="S",
        help="leaderElection.leaseDuration (renewDeadline 2/3, retryPeriod 1/5 of it; "
        "default: eventsched's 15 / 10 / 2)",
    )
    parser.add_argument("--kills", type=int, default=20, help="kill-9: how many (default 20)")
    parser.add_argument(
        "--seed", type=int, default=1, help="kill-9's moments, api-faults' answers (default 1)"
    )
    parser.add_argument(
        "--fault-seconds", type=float, default=60.0, help="api-faults: for how long (default 60)"
    )
    parser.add_argument(
        "--fault-share",
        type=float,
        default=0.2,
        help="api-faults: share of the requests answered with a fault (default 0.2)",
    )
    parser.add_argument(
        "--disk-mib", type=int, default=64, help="disk-full: the tmpfs' size (default 64)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object per scenario")
    args = parser.parse_args(argv)
    if args.lease_duration is not None and args.lease_duration < 3:
        parser.error("--lease-duration: at least 3 (renewDeadline 2, retryPeriod 1)")
    if not 0.0 <= args.fault_share <= 1.0:
        parser.error("--fault-share: a share from 0 to 1, like 0.2")
    settings = Settings(
        nodes=args.nodes,
        pods=args.pods,
        server=args.server,
        qps=args.qps,
        burst=args.burst,
        down=args.down,
        keep_logs=args.keep_logs,
        rate=args.rate,
        kill_apiserver=args.kill_apiserver,
        lease=args.lease_duration,
        kills=args.kills,
        fault_seconds=args.fault_seconds,
        fault_share=args.fault_share,
        seed=args.seed,
        disk_mib=args.disk_mib,
    )
    configure_logging("console", "warning")  # this process's own (the log's reads): stderr
    # SIGTERM (a `timeout`, a CI's cancel) unwinds like Ctrl-C: the control plane, the
    # replicas and the database are stopped and dropped, not left behind.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    scenarios = SCENARIOS if args.scenario == "all" else (args.scenario,)
    ok = True
    for scenario in scenarios:
        try:
            result = measure(scenario, settings)
        except (PermissionError, ValueError) as e:  # what the scenario cannot do here
            print(f"{parser.prog}: error: --scenario {scenario}: {e}", file=sys.stderr)
            return 2
        ok = ok and result.ok
        if args.json:
            print(json.dumps(result.to_dict()), flush=True)
        else:
            print("\n".join(result.lines()), flush=True)
    return 0 if ok else 1
