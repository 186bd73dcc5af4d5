"""`eventsched bench --extender`: the extender server driven as kube-scheduler drives it.

A generated cluster (`--nodes`, the same for the same seed) on the simulated adapter, the
real `ExtenderScheduler` and HTTP server on a loopback port, the log at `--db`. One
client on one keep-alive connection (kube-scheduler's scheduling loop calls one at a time)
sends, for each pending pod: filter over every node (names, or whole Node objects in the
Nodes form), prioritize over the nodes that passed, and bind to the first with score 10.
Each call is timed from the request written to the answer read, the server's work and
its log append included; p50/p99 per verb and calls/s over the run.
"""

from __future__ import annotations

import http.client
import json
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry

from eventsched.benchmarks.scheduling import log_size
from eventsched.cluster import SimulatedCluster
from eventsched.cluster.generate import generate_manifests
from eventsched.config import default_profile
from eventsched.events import EventStore, upgrade
from eventsched.extenderserver.scheduler import ExtenderScheduler
from eventsched.extenderserver.server import ExtenderServer
from eventsched.metrics import SchedulerMetrics
from eventsched.model import Node, Pod
from eventsched.plugins import full_registry
from eventsched.scheduler import SchedulerOptions

SCHEDULER = "default-scheduler"


@dataclass
class ExtenderResult:
    nodes: int
    pods: int
    form: str
    seconds: float = 0.0
    latencies: dict[str, list[float]] = field(default_factory=dict)
    log_bytes_per_call: float = 0.0

    def calls(self) -> int:
        return sum(len(v) for v in self.latencies.values())

    def percentile(self, verb: str, q: float) -> float:
        values = sorted(self.latencies.get(verb, []))
        if not values:
            return 0.0
        return values[min(len(values) - 1, int(q * len(values)))] * 1000

    def to_dict(self) -> dict[str, Any]:
        return {
            "nodes": self.nodes,
            "pods": self.pods,
            "form": self.form,
            "callsPerSecond": round(self.calls() / self.seconds, 1) if self.seconds else 0,
            "verbs": {
                verb: {
                    "calls": len(values),
                    "p50Ms": round(self.percentile(verb, 0.5), 2),
                    "p99Ms": round(self.percentile(verb, 0.99), 2),
                    "meanMs": round(statistics.fmean(values) * 1000, 2),
                }
                for verb, values in self.latencies.items()
            },
            "logBytesPerCall": round(self.log_bytes_per_call),
        }

    def line(self) -> str:
        verbs = "; ".join(
            f"{verb} p50 {self.percentile(verb, 0.5):.1f} ms p99 {self.percentile(verb, 0.99):.1f} ms"
            for verb in self.latencies
        )
        rate = self.calls() / self.seconds if self.seconds else 0
        return (
            f"{rate:.1f} calls/s ({self.form} form, {self.nodes} nodes, {self.pods} pods): {verbs}; "
            f"{self.log_bytes_per_call:.0f} bytes of log per call"
        )


class _Client:
    def __init__(self, port: int) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def post(self, verb: str, body: bytes) -> tuple[float, Any]:
        began = time.perf_counter()
        self.conn.request("POST", f"/scheduler/{verb}", body, {"Content-Type": "application/json"})
        answer = self.conn.getresponse()
        data = answer.read()
        took = time.perf_counter() - began
        if answer.status != 200:
            raise RuntimeError(f"{verb} answered {answer.status}: {data[:300]!r}")
        return took, json.loads(data)


def run(
    nodes: int,
    pods: int,
    url: str,
    form: str = "NodeNames",
    seed: int = 0,
    on_progress: Callable[[int], None] | None = None,
) -> ExtenderResult:
    manifests = generate_manifests(nodes, pods, seed, SCHEDULER)
    node_objects = [m for m in manifests if m["kind"] == "Node"]
    for version, node in enumerate(node_objects, 1):
        # As kube-scheduler's cache holds them: stored objects, each with its version.
        node["metadata"]["resourceVersion"] = str(version)
    pod_objects = [m for m in manifests if m["kind"] == "Pod"]
    names = [n["metadata"]["name"] for n in node_objects]
    upgrade(url)
    result = ExtenderResult(nodes, len(pod_objects), form)
    with EventStore.connect(url) as store:
        before = log_size(store)
        cluster = SimulatedCluster(
            [Node.from_manifest(n) for n in node_objects],
            [Pod.from_manifest(p) for p in pod_objects],
        )
        metrics = SchedulerMetrics(CollectorRegistry())
        scheduler = ExtenderScheduler(
            store,
            cluster,
            [default_profile(SCHEDULER)],
            full_registry(),
            SchedulerOptions(),
            metrics=metrics,
        )
        server = ExtenderServer("127.0.0.1", 0, lambda: scheduler, metrics.registry, lambda: [])
        stop = threading.Event()
        scheduler.start(stop)
        loop = threading.Thread(target=scheduler.run, args=(stop,), daemon=True)
        loop.start()
        server.start()
        try:
            client = _Client(server.port)
            began = time.perf_counter()
            for done, pod in enumerate(pod_objects, 1):
                _one_pod(client, pod, names, node_objects, form, result)
                if on_progress is not None:
                    on_progress(done)
            result.seconds = time.perf_counter() - began
        finally:
            server.stop()
            stop.set()
            loop.join(30)
            scheduler.stop()
        result.log_bytes_per_call = (log_size(store) - before) / max(result.calls(), 1)
    return result


def _one_pod(
    client: _Client,
    pod: dict[str, Any],
    names: list[str],
    node_objects: list[dict[str, Any]],
    form: str,
    result: ExtenderResult,
) -> None:
    if form == "NodeNames":
        args = {"Pod": pod, "Nodes": None, "NodeNames": names}
    else:
        args = {"Pod": pod, "Nodes": {"metadata": {}, "items": node_objects}, "NodeNames": None}
    took, answer = client.post("filter", json.dumps(args).encode())
    result.latencies.setdefault("filter", []).append(took)
    passed = (
        answer["NodeNames"]
        if form == "NodeNames"
        else [n["metadata"]["name"] for n in (answer["Nodes"] or {}).get("items", [])]
    )
    if not passed:
        return
    took, scores = client.post(
        "prioritize", json.dumps({"Pod": pod, "Nodes": None, "NodeNames": passed}).encode()
    )
    result.latencies.setdefault("prioritize", []).append(took)
    best = max(scores, key=lambda s: s["Score"])["Host"]
    meta = pod["metadata"]
    binding = {
        "PodName": meta["name"],
        "PodNamespace": meta["namespace"],
        "PodUID": meta["uid"],
        "Node": best,
    }
    took, _ = client.post("bind", json.dumps(binding).encode())
    result.latencies.setdefault("bind", []).append(took)
