"""`eventsched bench`: run one of eventsched.benchmarks, imported only when the command runs."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from typing import TYPE_CHECKING

from eventsched.cli.arguments import count, cpu_list
from eventsched.cli.commands import summary
from eventsched.cli.database import resolve_url
from eventsched.cli.progress import progress_bar
from eventsched.cli.signals import sigterm_unwinds

if TYPE_CHECKING:
    from eventsched.benchmarks.kubebinaries import KubeBinaries
    from eventsched.benchmarks.scheduling import ReplayResult
    from eventsched.framework import Registry


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench",
        help=summary("bench"),
        description="Prints '<N> pods/s' plus events/s and log bytes per pod (with --replay, "
        "also how fast that log replays). Without --db a fresh SQLite file in a temporary "
        "directory is used: a benchmark never writes into the log EVENTSCHED_DATABASE_URL "
        "names, which is append-only.",
    )
    p.add_argument(
        "--nodes", type=count(0), help="default 1000 (500 with --kube, 5000 with --restarts)"
    )
    p.add_argument(
        "--pods", type=count(0), help="default 5000 (3000 with --kube, 10000 with --restarts)"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--replay",
        action="store_true",
        help="then replay the log the run wrote and print decisions/s and events/s folded "
        "(adds about 60%% to the time of a run; exit 1 if an attempt does not reproduce)",
    )
    p.add_argument(
        "--restart-events",
        type=int,
        metavar="N",
        help="instead: grow a log of N events (copies of a real run, spread over --days) and "
        "measure how long a restart takes to rebuild the scheduler's state from it "
        "(grows an empty log, about 25 minutes for 10,000,000 on PostgreSQL here; a log that "
        "already holds N events, as an earlier run left it, is measured again as it is)",
    )
    p.add_argument("--days", type=int, default=30, help="history the --restart-events log spans")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument(
        "--quotas",
        type=count(1),
        metavar="N",
        help="the generated pods spread over N namespaces, each with an ElasticQuota, "
        "scheduled by the default profile with CapacityScheduling "
        "(eventsched/benchmarks/quotas.py)",
    )
    p.add_argument(
        "--numa",
        type=count(1),
        nargs="?",
        const=2,
        metavar="ZONES",
        help="every generated node gets a NodeResourceTopology of ZONES NUMA zones (default 2; "
        "single-numa-node policy, container scope) and every pod is Guaranteed, scheduled by "
        "the default profile with NodeResourceTopologyMatch (eventsched/benchmarks/numa.py)",
    )
    p.add_argument(
        "--workload",
        metavar="NAME",
        help="instead: one of kube-scheduler's scheduler_perf workloads "
        "(eventsched/benchmarks/workloads.py; 'list' names them) at upstream's counts, or "
        "--nodes nodes and --pods measured pods (init pods scaled with them; --nodes 500 "
        "takes upstream's 500Nodes counts); prints upstream's CI threshold next to the "
        "pods/s. With --kube: on a real control plane beside kube-scheduler, each placing "
        "the init pods, then timed on the measured pods (500 nodes by default)",
    )
    ext = p.add_argument_group(
        "--extender: the extender server as kube-scheduler drives it",
        "`eventsched extender` on a generated cluster of --nodes nodes (default 5000) with the "
        "log at --db, called over one keep-alive connection for each of --pods pending pods "
        "(default 200): filter over every node, prioritize over those that passed, bind. "
        "Prints p50/p99 latency per verb and calls/s.",
    )
    ext.add_argument("--extender", action="store_true", help="run this benchmark instead")
    ext.add_argument(
        "--extender-form",
        choices=["NodeNames", "Nodes"],
        default="NodeNames",
        help="node names (kube-scheduler's nodeCacheCapable: true) or whole Node objects",
    )
    kube = p.add_argument_group(
        "--kube: eventsched against kube-scheduler on a real control plane",
        "Starts etcd and kube-apiserver (fresh for every run), creates --nodes ready nodes "
        "and --pods pending pods, then starts the scheduler under test as a separate process "
        "and watches the binds: pods/s from the first bind to the last, CPU seconds of the "
        "scheduler, kube-apiserver and etcd (and PostgreSQL's, machine-wide). Runs alternate "
        "eventsched, kube-scheduler, eventsched, ... Needs kube-apiserver (and kube-scheduler "
        "to compare with; plain or .xz) in $EVENTSCHED_KUBE_BIN or --kube-bin, and etcd on "
        "PATH. With --db, the PostgreSQL database gets a fresh schema per eventsched run.",
    )
    kube.add_argument("--kube", action="store_true", help="run this benchmark instead")
    kube.add_argument(
        "--kube-bin", metavar="DIR", help="directory of kube-apiserver and kube-scheduler"
    )
    kube.add_argument(
        "--kubernetes-version",
        metavar="1.MINOR",
        help="the control plane and kube-scheduler of this version, as tests/reference/build.sh "
        "builds them (1.34, 1.37; 1.28: $EVENTSCHED_KUBE_BIN); eventsched decides as the API "
        "server's version. Default: the binaries of --kube-bin or $EVENTSCHED_KUBE_BIN",
    )
    kube.add_argument("--qps", type=float, default=5000, help="client QPS of both schedulers")
    kube.add_argument("--burst", type=int, default=5000, help="client burst of both schedulers")
    kube.add_argument("--rounds", type=int, default=1, help="runs of each scheduler")
    kube.add_argument(
        "--scheduler-cpus",
        type=cpu_list,
        metavar="LIST",
        help="run each scheduler on these CPUs only (as taskset -c LIST; kube-scheduler's "
        "GOMAXPROCS follows): its rate on 1 core against 2, say; the API server, etcd and "
        "PostgreSQL keep every CPU",
    )
    kube.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="give up a run after this long (default max(120, pods/5); 900 with --restarts)",
    )
    kube.add_argument(
        "--restarts",
        type=count(1),
        metavar="K",
        help="instead: a restart at scale. Each scheduler places --pods pods on --nodes nodes "
        "(not measured), is stopped, and is started again K times on the same cluster and "
        "log, each time with --late new pending pods; prints the seconds (and CPU) from each "
        "start to its first bind of a late pod, and what eventsched appended to its log up "
        "to its first decision (eventsched/benchmarks/kube_restart.py)",
    )
    kube.add_argument(
        "--late", type=count(1), default=10, help="pods created before each restart (default 10)"
    )
    kube.add_argument(
        "--leader-elect",
        action="store_true",
        help="with --restarts: each scheduler elects itself on its Lease before it schedules, "
        "as deployed (leaderElection's defaults; each stop releases the Lease, so each "
        "restart takes it at once)",
    )
    kube.add_argument(
        "--shadow",
        action="store_true",
        help="instead: kube-scheduler places a generated mix (--pods on --nodes) with "
        "`eventsched shadow` beside it; prints both rates, the shadow's lag (p50, p99) and "
        "its agreement (eventsched/benchmarks/kube_shadow.py)",
    )
    kube.add_argument(
        "--percentage-of-nodes-to-score",
        type=count(1),
        metavar="P",
        help="with --shadow: kube-scheduler's percentageOfNodesToScore (default: its adaptive "
        "one; the shadow scores every node either way)",
    )
    kube.add_argument(
        "--pods-first",
        action="store_true",
        help="with --shadow: create the pods before kube-scheduler starts, so that it places "
        "them as fast as it can (default: it runs first, and the pods come as created)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.leader_elect and args.restarts is None:
        return refuse("--leader-elect is for the restart benchmark: add --kube --restarts K")
    if args.restarts is not None and not args.kube:
        return refuse("--restarts restarts a scheduler on a real control plane: add --kube")
    if args.shadow and not args.kube:
        return refuse("--shadow runs beside kube-scheduler on a real control plane: add --kube")
    if args.workload is not None and (not args.kube or args.workload == "list"):
        from eventsched.cli.benchworkload import run_workload

        return run_workload(args)
    if args.kube:
        return run_kube(args)
    if args.extender:
        return run_extender(args)
    args.nodes = 1000 if args.nodes is None else args.nodes
    args.pods = 5000 if args.pods is None else args.pods
    from eventsched.benchmarks import scheduling

    variant = None
    if args.quotas and args.numa:
        return refuse("--quotas and --numa are separate benchmarks: give one of them")
    if args.quotas:
        from eventsched.benchmarks import quotas

        variant = quotas.variant(args.quotas)
    if args.numa:
        from eventsched.benchmarks import numa

        variant = numa.variant(args.numa)
    with tempfile.TemporaryDirectory(prefix="eventsched-bench-") as tmp:
        url = resolve_url(args.db) if args.db else f"sqlite:///{tmp}/bench.db"
        if args.restart_events:
            return run_restart(args, url)
        with progress_bar(args.pods, "bench") as bar:

            def progress(done: int) -> None:
                # update() redraws at most every 0.1 s; a refresh per pod (0.2 ms on a
                # terminal) would be counted in the pods/s measured.
                bar.update(done - bar.n)

            result = scheduling.run(
                args.nodes, args.pods, url, seed=args.seed, on_progress=progress, variant=variant
            )
        if args.replay:
            result.replay = replay_log(url, None if variant is None else variant.registry)
    print(json.dumps(result.to_dict()) if args.json else result.line())
    return 0 if result.replay is None or result.replay.ok else 1


def replay_log(url: str, registry: Registry | None = None) -> ReplayResult:
    """The scheduling benchmark's measure_replay over the log at `url`, with a progress bar."""
    from eventsched.benchmarks.scheduling import measure_replay

    with progress_bar(0, "replaying", unit="event") as bar:

        def replaying(position: int, last: int) -> None:
            bar.total = last
            bar.update(position - bar.n)  # redraws at most every 0.1 s

        return measure_replay(url, on_progress=replaying, registry=registry)


def refuse(message: str) -> int:
    print(f"eventsched: error: {message}", file=sys.stderr)
    return 2


def run_extender(args: argparse.Namespace) -> int:
    from eventsched.benchmarks import extender

    nodes = 5000 if args.nodes is None else args.nodes
    pods = 200 if args.pods is None else args.pods
    with tempfile.TemporaryDirectory(prefix="eventsched-bench-") as tmp:
        url = resolve_url(args.db) if args.db else f"sqlite:///{tmp}/bench.db"
        with progress_bar(pods, f"extender ({args.extender_form})") as bar:
            result = extender.run(
                nodes,
                pods,
                url,
                form=args.extender_form,
                seed=args.seed,
                on_progress=lambda done: bar.update(done - bar.n),  # redraws every 0.1 s at most
            )
    print(json.dumps(result.to_dict()) if args.json else result.line())
    return 0


def run_restart(args: argparse.Namespace, url: str) -> int:
    from eventsched.benchmarks import restart

    with progress_bar(args.restart_events, "growing the log", unit="event") as bar:
        result = restart.run(
            url, args.restart_events, days=args.days, on_progress=lambda n: bar.update(n - bar.n)
        )
    print(json.dumps(result.to_dict()) if args.json else result.line())
    return 0


def run_kube(args: argparse.Namespace) -> int:
    if args.restarts is not None and args.rounds != 1:
        return refuse("--restarts K restarts each scheduler K times: not with --rounds")
    from eventsched.cli import benchkube

    workload = None if args.workload is None else benchkube.kube_workload(args.workload)
    if isinstance(workload, str):
        return refuse(workload)
    if workload is not None and (args.restarts is not None or args.shadow):
        return refuse("--workload is its own benchmark: not with --restarts or --shadow")
    if args.scheduler_cpus is not None and (args.restarts is not None or args.shadow):
        return refuse("--scheduler-cpus pins the scheduler of bench --kube [--workload] only")
    binaries = _kube_binaries(args)
    if binaries is None:
        return 2
    if args.restarts is not None:
        return run_kube_restarts(args, binaries)
    if args.shadow:
        from eventsched.cli.benchshadow import run_kube_shadow

        return run_kube_shadow(args, binaries)
    url = resolve_url(args.db) if args.db else None
    if workload is None:
        return benchkube.report(args, benchkube.plain_runs(args, binaries, url))
    return benchkube.report(args, benchkube.workload_runs(args, binaries, url, workload))


def _kube_binaries(args: argparse.Namespace) -> KubeBinaries | None:
    """The binaries `--kube-bin` (or $EVENTSCHED_KUBE_BIN) names, else those of
    `--kubernetes-version`'s reference build; None, having said why, when there are none."""
    from eventsched.benchmarks.kubebinaries import kube_binaries, reference_binaries

    if args.kubernetes_version and not args.kube_bin:
        from eventsched.config.featuregates import parse_version

        minor = parse_version(args.kubernetes_version)
        binaries = reference_binaries(minor)
        if binaries is None:
            print(
                f"eventsched: error: bench --kube --kubernetes-version {minor} needs that "
                f"version's binaries: run tests/reference/build.sh {minor} in a checkout "
                "(or give --kube-bin DIR), and etcd on PATH",
                file=sys.stderr,
            )
        return binaries
    binaries = kube_binaries(args.kube_bin)
    if binaries is None:
        print(
            "eventsched: error: bench --kube needs kube-apiserver (and kube-scheduler, plain "
            "or .xz) in the directory named by EVENTSCHED_KUBE_BIN or --kube-bin DIR, and etcd "
            "on PATH (Debian/Ubuntu: apt-get install etcd-server)",
            file=sys.stderr,
        )
    return binaries


def run_kube_restarts(args: argparse.Namespace, binaries: KubeBinaries) -> int:
    """`bench --kube --restarts K`: the restart benchmark for each scheduler in turn."""
    from eventsched.benchmarks import kube_restart
    from eventsched.benchmarks.kuberesults import EVENTSCHED, KUBE_SCHEDULER

    nodes = 5000 if args.nodes is None else args.nodes
    pods = 10000 if args.pods is None else args.pods
    url = resolve_url(args.db) if args.db else None
    schedulers = [EVENTSCHED] + ([KUBE_SCHEDULER] if binaries.scheduler else [])
    results: list[kube_restart.RestartResult] = []
    with sigterm_unwinds():
        for scheduler in schedulers:
            with progress_bar(pods, f"{scheduler}: placing") as bar:
                result = kube_restart.measure(
                    binaries, scheduler, nodes, pods,
                    late=args.late,
                    db_url=url,
                    timeout=900.0 if args.timeout is None else args.timeout,
                    restarts=args.restarts,
                    on_progress=lambda bound: bar.update(bound - bar.n),
                    qps=args.qps,
                    burst=args.burst,
                    leader_elect=args.leader_elect,
                )  # fmt: skip
            results.append(result)
            if not args.json:
                print(result.line(), flush=True)
    if args.json:
        runs = [r.to_dict() for r in results]
        print(json.dumps({"nodes": nodes, "pods": pods, "late": args.late, "runs": runs}))
    return 1 if any(r.error for r in results) else 0
