"""An `eventsched extender` in the test: the loop on a thread, the HTTP server on a free
loopback port, and a keep-alive client that sends what kube-scheduler v1.28 sends."""

from __future__ import annotations

import http.client
import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry

from eventsched._httpserver import Security
from eventsched.cluster import SimulatedCluster
from eventsched.config.file import parse_config
from eventsched.events import EventStore
from eventsched.extenderserver.scheduler import ExtenderScheduler
from eventsched.extenderserver.server import ExtenderServer
from eventsched.metrics import SchedulerMetrics
from eventsched.model import Node, Pod
from eventsched.plugins import full_registry
from eventsched.scheduler import SchedulerOptions

SCHEDULER = "default-scheduler"


def node_manifest(name: str, labels: dict[str, str] | None = None, cpu: str = "4") -> dict:
    """A v1.Node as kube-scheduler's NodeList item carries it."""
    return {
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "labels": {"kubernetes.io/hostname": name, **(labels or {})},
        },
        "spec": {},
        "status": {
            "capacity": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
            "allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
        },
    }


def pod_manifest(
    name: str, uid: str | None = None, cpu: str = "500m", annotations: dict | None = None
) -> dict:
    """A pending v1.Pod as kube-scheduler sends it in ExtenderArgs.Pod."""
    return {
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": uid or f"uid-{name}",
            "annotations": annotations or {},
            "creationTimestamp": "2026-11-25T00:00:00Z",
        },
        "spec": {
            "schedulerName": SCHEDULER,
            "containers": [
                {"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}
            ],
        },
        "status": {"phase": "Pending"},
    }


def profile_config(plugins: list[dict] | None = None, args: list[dict] | None = None) -> dict:
    profile: dict[str, Any] = {"schedulerName": SCHEDULER}
    if plugins:
        profile["plugins"] = {"multiPoint": {"enabled": plugins}}
    if args:
        profile["pluginConfig"] = args
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [profile],
    }


@dataclass
class Answer:
    status: int
    body: Any


class Client:
    """One keep-alive connection, as kube-scheduler's HTTP client keeps one; with
    `context`, over HTTPS; with `token`, a bearer token on each request."""

    def __init__(self, port: int, context: ssl.SSLContext | None = None, token: str = "") -> None:
        self.conn = (
            http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            if context is None
            else http.client.HTTPSConnection("127.0.0.1", port, timeout=30, context=context)
        )
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}

    def post(self, path: str, body: Any) -> Answer:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        headers = {"Content-Type": "application/json", **self.headers}
        self.conn.request("POST", path, raw, headers)
        answer = self.conn.getresponse()
        data = answer.read()
        return Answer(answer.status, json.loads(data) if data else None)

    def get(self, path: str) -> tuple[int, str]:
        self.conn.request("GET", path, headers=self.headers)
        answer = self.conn.getresponse()
        return answer.status, answer.read().decode()

    def filter(self, pod: dict, nodes: list[dict], names: bool = True) -> Answer:
        if names:
            args = {"Pod": pod, "Nodes": None, "NodeNames": [n["metadata"]["name"] for n in nodes]}
        else:
            args = {"Pod": pod, "Nodes": {"metadata": {}, "items": nodes}, "NodeNames": None}
        return self.post("/scheduler/filter", args)

    def prioritize(self, pod: dict, names: list[str]) -> Answer:
        return self.post("/scheduler/prioritize", {"Pod": pod, "Nodes": None, "NodeNames": names})

    def bind(self, pod: dict, node: str) -> Answer:
        meta = pod["metadata"]
        return self.post(
            "/scheduler/bind",
            {
                "PodName": meta["name"],
                "PodNamespace": meta["namespace"],
                "PodUID": meta["uid"],
                "Node": node,
            },
        )


@dataclass
class Running:
    scheduler: ExtenderScheduler
    server: ExtenderServer
    cluster: SimulatedCluster
    client: Client


@contextmanager
def running_extender(
    store: EventStore,
    config: dict,
    nodes: list[dict],
    pods: list[dict] = (),  # type: ignore[assignment]
    security: Security | None = None,
) -> Iterator[Running]:
    """With `security`, the server serves HTTPS and `client` brings no client certificate."""
    loaded = parse_config(config, "test", full_registry())
    cluster = SimulatedCluster(
        [Node.from_manifest(n) for n in nodes], [Pod.from_manifest(p) for p in pods]
    )
    metrics = SchedulerMetrics(CollectorRegistry())
    scheduler = ExtenderScheduler(
        store,
        cluster,
        [loaded.profiles[0]],
        full_registry(),
        SchedulerOptions(binder_workers=2),
        metrics=metrics,
    )
    server = ExtenderServer(
        "127.0.0.1",
        0,
        lambda: scheduler,
        metrics.registry,
        lambda: [("ok", True, "")],
        security=security,
    )
    stop = threading.Event()
    assert scheduler.start(stop)
    loop = threading.Thread(target=scheduler.run, args=(stop,), daemon=True)
    loop.start()
    server.start()
    try:
        context = None
        if security is not None:
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE  # the self-signed serving certificate
        yield Running(scheduler, server, cluster, Client(server.port, context))
    finally:
        server.stop()
        stop.set()
        loop.join(timeout=10)
        scheduler.stop()
