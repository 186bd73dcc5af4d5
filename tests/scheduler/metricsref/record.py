"""Record a kube-scheduler's metric families from a real scrape (run by hand).

    python -m tests.scheduler.metricsref.record [--kube-bin DIR]
    python -m tests.scheduler.metricsref.record --kube-bin ~/.cache/eventsched/reference/v1.37.2

One etcd + kube-apiserver and kube-scheduler (from --kube-bin, /work/shared/kube by
default) with its default profile; two 2-cpu nodes, 30 small pods (so that the 10% of
cycles that sample plugin durations are surely met), a pod that fits nowhere (an
unschedulable pod and a preemption attempt) and a high-priority pod that preempts one
(victims). Writes kube-scheduler-<its version>.json next to this file: each family's type,
HELP, label names and buckets as the scrape shows them (families.py), and the families
the scrape cannot show because nothing observed them (`source_only`, read off the version's
pkg/scheduler/metrics/metrics.go).
"""

from __future__ import annotations

import argparse
import json
import ssl
import sys
import urllib.request
from pathlib import Path
from typing import Any

from eventsched.benchmarks.controlplane import ControlPlane
from tests.differential.builders import node, pod
from tests.differential.kubeapi import KubeApi, wait_for
from tests.differential.record import (
    DEFAULT_BIN,
    kube_scheduler,
    scheduler_binaries,
    scheduler_config,
)
from tests.scheduler.metricsref.families import families

REFERENCE = Path(__file__).with_name("kube-scheduler-v1.28.0.json")


def reference(version: str) -> Path:
    """The recorded families of kube-scheduler `version` ("v1.37.2")."""
    return Path(__file__).with_name(f"kube-scheduler-{version}.json")


PODS = 30
#: The whole scrape, for reading the label values (not committed).
RAW = Path("/tmp/kube-scheduler.metrics")
BUCKETS_1MS_X2_15 = [0.001 * 2**i for i in range(15)] + [float("inf")]
#: Observed only after a preemption, and in the sampled cycles (flushed once a second).
AWAITED = ("scheduler_preemption_victims", "scheduler_plugin_execution_duration_seconds")
#: Registered by kube-scheduler but observed only when a Permit plugin makes a pod wait
#: (none of the default plugins does), so no scrape of the default profile shows it; read
#: off pkg/scheduler/metrics/metrics.go (ALPHA to 1.35, BETA from 1.36).
def source_only(version: str) -> dict[str, dict[str, Any]]:
    minor = int(version.lstrip("v").split(".")[1])
    return {
        "scheduler_permit_wait_duration_seconds": {
            "type": "histogram",
            "help": f"[{'BETA' if minor >= 36 else 'ALPHA'}] Duration of waiting on permit.",
            "labels": ["result"],
            "buckets": BUCKETS_1MS_X2_15,
        },
    }


def scrape(metrics_url: str) -> str:
    context = ssl._create_unverified_context()  # loopback, kube-scheduler's in-memory cert
    with urllib.request.urlopen(metrics_url, context=context, timeout=5) as response:
        return str(response.read().decode())


def workload(api: KubeApi, cp: ControlPlane) -> None:
    cp.make_ready_nodes([node("node-0", cpu="2"), node("node-1", cpu="2")])
    api.create(
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": "high"},
            "value": 1000,
        }
    )
    for i in range(PODS):
        api.create({"apiVersion": "v1", "kind": "Pod", **pod(f"small-{i}", cpu="100m")})
    api.create({"apiVersion": "v1", "kind": "Pod", **pod("big", cpu="16")})
    api.create({"apiVersion": "v1", "kind": "Pod", **pod("filler", cpu="900m")})
    high = pod("high", cpu="1500m", priorityClassName="high")
    api.create({"apiVersion": "v1", "kind": "Pod", **high})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.scheduler.metricsref.record")
    parser.add_argument("--kube-bin", default=DEFAULT_BIN)
    args = parser.parse_args(argv)
    found = scheduler_binaries(args.kube_bin)
    if found is None:
        return 2
    binaries, version = found
    with ControlPlane(binaries) as cp:
        api = KubeApi(cp.url, cp.admin_token, str(cp.ca_file))
        config = scheduler_config(cp.workdir / "scheduler.json", cp.kubeconfig(), [], True)
        with kube_scheduler(cp, binaries, config, cp.workdir / "scheduler.log") as url:
            workload(api, cp)
            wait_for(
                lambda: all(f"{name}_bucket" in scrape(url) for name in AWAITED),
                60,
                f"{AWAITED} in the scrape",
                every=0.5,
            )
            text = scrape(url)
    RAW.write_text(text)
    recorded = families(text)
    source = source_only(version.split()[-1])
    missing = [name for name in source if name in recorded]
    if missing:
        print(f"now in the scrape, drop from source_only: {missing}", file=sys.stderr)
    document = {"scheduler": version, "families": {**source, **recorded}}
    written = reference(version.split()[-1])
    written.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    print(f"wrote {written.name}")
    print(f"{len(recorded)} families from the scrape, {len(source)} from the source")
    print(f"(the whole scrape: {RAW})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
