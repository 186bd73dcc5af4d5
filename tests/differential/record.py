"""Record kube-scheduler's answers to the generated scenarios (run by hand).

    python -m tests.differential.record [--kubernetes-version V] [--family F ...] [--limit N]
                                        [--preemption]

Without --kubernetes-version: kube-scheduler v1.28 from --kube-bin (/work/shared/kube), into
answers/<family>.json. With it (1.34, 1.37): the reference binaries of that version
(`kubebinaries.reference_binaries`, built by tests/reference/build.sh), into
answers/v<V>/<family>.json; the ablations are of the plugins that version has (its default
profile has no in-tree volume limits: a profile disabling one would be refused).

One etcd + kube-apiserver (eventsched/benchmarks/controlplane.py) and one kube-scheduler serve the
whole run. kube-scheduler runs the default profile with DefaultPreemption disabled (or
enabled with --preemption, into answers/preemption/), plus one profile per plugin set some
scenario is ablated by ("without.<plugins>": the default with those plugins disabled), at
-v=10 so its log holds every plugin's weighted score per node and each node's total.

Per scenario: namespaces, extra objects, ready nodes and assigned pods are created; the
scheduler's cache is waited for (its cache-size metric shows exactly
the scenario's nodes and pods, and a probe pod that fits nowhere reports every node without
the not-ready taint the API server adds, i.e. each node's last update seen); the pending
pod is created under each ablation profile and then under default-scheduler, each time
until it is bound or has a FailedScheduling Event and PodScheduled=False; everything is
then deleted and the cache waited for until empty. Objects other than nodes and pods
(namespaces' labels, Services, volumes) have no such signal: they are created first, before
the nodes, whose wait is far longer than an informer's delivery.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from eventsched.benchmarks.controlplane import ControlPlane
from eventsched.benchmarks.kubebinaries import KubeBinaries, kube_binaries, reference_binaries
from eventsched.benchmarks.processes import free_port, spawn_logged
from tests.differential.generate import FAMILIES, generate
from tests.differential.kubeapi import KubeApi, cache_size, wait_for
from tests.differential.kubelog import LogReader
from tests.differential.recorder import Recorder
from tests.differential.scenario import (
    LEGACY_VERSION,
    UPSTREAM_DEFAULTS,
    ablation_sets,
    answers_dir,
    dump_family,
    family_path,
    profile_name,
    uses,
)

DEFAULT_BIN = "/work/shared/kube"


def scheduler_config(
    path: Path, kubeconfig: Path, ablations: list[frozenset[str]], preemption: bool
) -> Path:
    base = [] if preemption else [{"name": "DefaultPreemption"}]
    profiles = [
        {"schedulerName": "default-scheduler", "plugins": {"multiPoint": {"disabled": base}}}
    ]
    for plugins in ablations:
        disabled = base + [{"name": p} for p in sorted(plugins)]
        profiles.append(
            {
                "schedulerName": profile_name(plugins),
                "plugins": {"multiPoint": {"disabled": disabled}},
            }
        )
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "clientConnection": {"kubeconfig": str(kubeconfig), "qps": 500, "burst": 1000},
        "leaderElection": {"leaderElect": False},
        "profiles": profiles,
    }
    path.write_text(json.dumps(config, indent=2) + "\n")  # JSON is YAML
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.differential.record")
    parser.add_argument("--family", action="append", choices=sorted(FAMILIES))
    parser.add_argument("--limit", type=int, default=None, help="first N scenarios per family")
    parser.add_argument("--preemption", action="store_true", help="keep DefaultPreemption")
    parser.add_argument("--kube-bin", default=None, help=f"default: {DEFAULT_BIN} (v1.28)")
    parser.add_argument(
        "--kubernetes-version",
        choices=sorted(UPSTREAM_DEFAULTS),
        default=None,
        help="record this version's reference kube-scheduler into answers/v<V>/",
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="directory (default: the version's answers/)"
    )
    args = parser.parse_args(argv)
    # SIGTERM unwinds like Ctrl-C: the control plane's context stops etcd, kube-apiserver
    # and kube-scheduler instead of leaving them running.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    kube_version = args.kubernetes_version or LEGACY_VERSION
    families = args.family or list(FAMILIES)
    scenarios = {f: generate(f)[: args.limit] for f in families}
    ablations = sorted(
        {a for ss in scenarios.values() for s in ss for a in ablation_sets(uses(s, kube_version))},
        key=lambda a: (len(a), sorted(a)),
    )
    found = version_binaries(args.kubernetes_version, args.kube_bin)
    if found is None:
        return 2
    binaries, version = found
    answers = answers_dir(kube_version)
    out = args.out or (answers / "preemption" if args.preemption else answers)
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    timings: dict[str, float] = {}
    with recording(
        binaries,
        lambda path, kubeconfig: scheduler_config(path, kubeconfig, ablations, args.preemption),
        "kube-scheduler-differential.log",
        lambda cp, api, log, url: Recorder(cp, api, log, url, kube_version),
    ) as recorder:
        for family, items in scenarios.items():
            began = time.monotonic()
            recorded = []
            for s in items:
                recorded.append(recorder.record_or_report(s))
                answer = recorded[-1]["answer"] or {}
                print(f"{s['id']}: {answer.get('node') or answer.get('message')}", flush=True)
            timings[family] = time.monotonic() - began
            document = {
                "family": family,
                "kubeScheduler": version,
                "kubernetesVersion": kube_version,
                "profile": "default-scheduler: kube-scheduler's v1 default plugins"
                + ("" if args.preemption else ", DefaultPreemption disabled"),
                "preemption": args.preemption,
                "ablations": "each scenario's pending pod also scheduled by profiles "
                "'without.<plugins>' (the same, those plugins disabled at multiPoint), "
                "for every non-empty set of at most two plugins it uses (more: each, and all)",
                "scenarios": recorded,
            }
            family_path(family, out).write_text(dump_family(document))
    total = time.monotonic() - started
    for family, seconds in timings.items():
        print(f"{family:15} {len(scenarios[family]):4} scenarios {seconds:7.1f} s")
    print(
        f"{'total':15} {sum(len(v) for v in scenarios.values()):4} scenarios {total:7.1f} s (with start-up)"
    )
    return 0


def version_binaries(
    kubernetes_version: str | None, kube_bin: str | None
) -> tuple[KubeBinaries, str] | None:
    """The binaries to record with: `kube_bin` (v1.28's /work/shared/kube by default), or
    the reference binaries of `kubernetes_version`, checked to be of that version."""
    version = kubernetes_version or LEGACY_VERSION
    if version == LEGACY_VERSION or kube_bin is not None:
        found = scheduler_binaries(kube_bin or DEFAULT_BIN)
    else:
        binaries = reference_binaries(version)
        if binaries is None or binaries.scheduler is None:
            print(
                f"no reference binaries of Kubernetes {version} "
                "(tests/reference/build.sh builds them), or no etcd",
                file=sys.stderr,
            )
            return None
        found = binaries, _scheduler_version(binaries)
    if found is not None and found[0].minor != version:
        print(f"{found[0].apiserver} is {found[0].version}, not {version}", file=sys.stderr)
        return None
    return found


def scheduler_binaries(kube_bin: str) -> tuple[KubeBinaries, str] | None:
    """The binaries in `kube_bin` and kube-scheduler's `--version`; None (said on stderr)
    without kube-apiserver, kube-scheduler or etcd."""
    binaries = kube_binaries(kube_bin)
    if binaries is None or binaries.scheduler is None:
        print(f"no kube-apiserver/kube-scheduler in {kube_bin}, or no etcd", file=sys.stderr)
        return None
    return binaries, _scheduler_version(binaries)


def _scheduler_version(binaries: KubeBinaries) -> str:
    """What kube-scheduler `--version` prints ("Kubernetes v1.37.2")."""
    assert binaries.scheduler is not None
    return subprocess.run(
        [str(binaries.scheduler), "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()


R = TypeVar("R", bound=Recorder)


@contextmanager
def recording(
    binaries: KubeBinaries,
    write_config: Callable[[Path, Path], Path],
    log_name: str,
    make: Callable[[ControlPlane, KubeApi, LogReader, str], R],
) -> Iterator[R]:
    """A control plane and kube-scheduler (its config written by `write_config(path,
    kubeconfig)`, its -v=10 log named `log_name`) for the block, and a recorder on them."""
    with ControlPlane(binaries) as cp:
        config = write_config(cp.workdir / "scheduler.json", cp.kubeconfig())
        log_path = cp.workdir / log_name
        with kube_scheduler(cp, binaries, config, log_path) as metrics_url:
            api = KubeApi(cp.url, cp.admin_token, str(cp.ca_file))
            yield make(cp, api, LogReader(log_path), metrics_url)


@contextmanager
def kube_scheduler(
    cp: ControlPlane, binaries: KubeBinaries, config: Path, log_path: Path
) -> Iterator[str]:
    """kube-scheduler on the control plane (-v=10, its log at `log_path`) until the block
    ends; yields its metrics URL once the metrics answer."""
    assert binaries.scheduler is not None
    port = free_port()
    proc = spawn_logged(
        [
            str(binaries.scheduler),
            f"--config={config}",
            f"--secure-port={port}",
            "--bind-address=127.0.0.1",
            f"--client-ca-file={cp.client_ca_file}",
            f"--requestheader-client-ca-file={cp.client_ca_file}",
            "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics",
            "--authentication-skip-lookup",
            "-v=10",
        ],
        log_path,
    )
    try:
        metrics_url = f"https://127.0.0.1:{port}/metrics"
        wait_for(lambda: _answers(metrics_url), 60, "kube-scheduler's metrics", every=0.2)
        yield metrics_url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _answers(url: str) -> bool:
    try:
        return "nodes" in cache_size(url)
    except OSError:
        return False


if __name__ == "__main__":
    raise SystemExit(main())
