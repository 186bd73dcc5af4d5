"""The recorder's access to kube-apiserver and to kube-scheduler's metrics: plain HTTPS.

kube-apiserver is verified against the control plane's CA with the admin token;
kube-scheduler's metrics endpoint serves a self-signed certificate it made in memory, on
loopback, so that one request is not verified.
"""

from __future__ import annotations

import json
import re
import ssl
import time
import urllib.request
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import quote

import urllib3

T = TypeVar("T")

JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"
GRACE_0 = {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0}

#: kind -> (API prefix, plural, namespaced)
KINDS: dict[str, tuple[str, str, bool]] = {
    "Namespace": ("/api/v1", "namespaces", False),
    "Pod": ("/api/v1", "pods", True),
    "Node": ("/api/v1", "nodes", False),
    "Service": ("/api/v1", "services", True),
    "PersistentVolume": ("/api/v1", "persistentvolumes", False),
    "PersistentVolumeClaim": ("/api/v1", "persistentvolumeclaims", True),
    "ReplicaSet": ("/apis/apps/v1", "replicasets", True),
    "StatefulSet": ("/apis/apps/v1", "statefulsets", True),
    "ReplicationController": ("/api/v1", "replicationcontrollers", True),
    "PriorityClass": ("/apis/scheduling.k8s.io/v1", "priorityclasses", False),
    "RuntimeClass": ("/apis/node.k8s.io/v1", "runtimeclasses", False),
    "StorageClass": ("/apis/storage.k8s.io/v1", "storageclasses", False),
    "CSINode": ("/apis/storage.k8s.io/v1", "csinodes", False),
    "CSIDriver": ("/apis/storage.k8s.io/v1", "csidrivers", False),
    "PodDisruptionBudget": ("/apis/policy/v1", "poddisruptionbudgets", True),
    # scheduler-plugins' custom resources (deploy/crds applied first).
    "ElasticQuota": ("/apis/scheduling.x-k8s.io/v1alpha1", "elasticquotas", True),
    "NodeResourceTopology": (
        "/apis/topology.node.k8s.io/v1alpha2",
        "noderesourcetopologies",
        False,
    ),
}
#: Kinds whose `status` the recorder writes through the status subresource after creating
#: (a PodDisruptionBudget's: no disruption controller runs beside the recorded scheduler).
WITH_STATUS = ("PersistentVolume", "PersistentVolumeClaim", "PodDisruptionBudget")


class ApiError(RuntimeError):
    def __init__(self, method: str, path: str, status: int, body: Any) -> None:
        super().__init__(f"{method} {path}: HTTP {status}: {body}")
        self.status = status


class KubeApi:
    def __init__(self, url: str, token: str, ca_file: str) -> None:
        self.url = url
        self.http = urllib3.PoolManager(
            maxsize=16, cert_reqs="CERT_REQUIRED", ca_certs=ca_file, timeout=urllib3.Timeout(30)
        )
        self.headers = {"Authorization": f"Bearer {token}"}

    def request(
        self, method: str, path: str, body: Any = None, content_type: str = JSON
    ) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        headers = {**self.headers, "Content-Type": content_type, "Accept": JSON}
        response = self.http.request(method, self.url + path, body=data, headers=headers)
        text = response.data.decode() or "null"
        return response.status, json.loads(text)

    def call(self, method: str, path: str, body: Any = None, content_type: str = JSON) -> Any:
        status, answer = self.request(method, path, body, content_type)
        if status >= 400:
            raise ApiError(method, path, status, answer)
        return answer

    @staticmethod
    def path(kind: str, namespace: str | None = None, name: str | None = None) -> str:
        prefix, plural, namespaced = KINDS[kind]
        path = prefix
        if namespaced:
            path += f"/namespaces/{namespace or 'default'}"
        path += f"/{plural}"
        if name is not None:
            path += f"/{quote(name)}"
        return path

    def create(self, manifest: dict[str, Any]) -> Any:
        """Create the object; its `status` (kinds in WITH_STATUS) goes through /status."""
        kind = manifest["kind"]
        meta = manifest["metadata"]
        body = {k: v for k, v in manifest.items() if k != "status"}
        created = self.call("POST", self.path(kind, meta.get("namespace")), body)
        if kind in WITH_STATUS and manifest.get("status"):
            created["status"] = manifest["status"]
            path = self.path(kind, meta.get("namespace"), meta["name"]) + "/status"
            created = self.call("PUT", path, created)
        return created

    def delete_now(self, kind: str, name: str, namespace: str | None = None) -> Any:
        """Delete with grace period 0 and drop finalizers no controller here would remove
        (pvc-protection, pv-protection); None when absent."""
        path = self.path(kind, namespace, name)
        status, body = self.request("DELETE", path, GRACE_0)
        if status == 404:
            return None
        if status >= 400:
            raise ApiError("DELETE", path, status, body)
        status, current = self.request("GET", path)
        if status == 200 and current["metadata"].get("finalizers"):
            self.request("PATCH", path, {"metadata": {"finalizers": None}}, MERGE_PATCH)
        return body

    def gone(self, kind: str, name: str, namespace: str | None = None) -> bool:
        status, _ = self.request("GET", self.path(kind, namespace, name))
        return status == 404


def wait_for(
    predicate: Callable[[], T | None], timeout: float, what: str, every: float = 0.02
) -> T:
    """Poll until `predicate()` is truthy; TimeoutError naming `what` otherwise."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout}s")
        time.sleep(every)


#: v1.28's `scheduler_scheduler_cache_size` (pkg/scheduler/metrics/metrics.go: subsystem
#: `scheduler`, `Name: "scheduler_cache_size"`) is `scheduler_cache_size` in v1.34 and v1.37
#: (`Name: "cache_size"`).
_CACHE_SIZE = re.compile(r'^scheduler_(?:scheduler_)?cache_size\{type="(\w+)"\} (\d+)', re.M)


def cache_size(metrics_url: str) -> dict[str, int]:
    """kube-scheduler's cache size by type (nodes, pods, assumed_pods), under either name;
    the cache refreshes these once a second (cleanupAssumedPods)."""
    context = ssl._create_unverified_context()  # loopback, kube-scheduler's in-memory cert
    with urllib.request.urlopen(metrics_url, context=context, timeout=5) as response:
        return cache_size_in(response.read().decode())


def cache_size_in(metrics: str) -> dict[str, int]:
    """The cache size by type in a metrics page (either name)."""
    return {kind: int(n) for kind, n in _CACHE_SIZE.findall(metrics)}


_PENDING = re.compile(r'^scheduler_pending_pods\{queue="(\w+)"\} (\d+)', re.M)


def pending_pods(metrics_url: str) -> dict[str, int]:
    """kube-scheduler's `scheduler_pending_pods` by queue (active, backoff, unschedulable,
    gated), as the queue counts them on each move."""
    context = ssl._create_unverified_context()  # loopback, kube-scheduler's in-memory cert
    with urllib.request.urlopen(metrics_url, context=context, timeout=5) as response:
        text = response.read().decode()
    return {queue: int(n) for queue, n in _PENDING.findall(text)}
