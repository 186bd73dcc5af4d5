"""A real kube-apiserver behind the emulator's test-control API, and the emulator with the same extras.

`RealApiServer` wraps a started `eventsched.benchmarks.controlplane.ControlPlane`
(etcd + kube-apiserver v1.28, TLS, token auth, RBAC) and offers the methods
of `tests.kube.apiserver.ApiServer` that a real server can do, over plain
HTTPS with the admin token: `create`, `get`, `list`, `update`, `patch`,
`delete`, `wait_for`, `url`. Kind names are the emulator's ("pods",
"nodes", "leases", "events" = events.k8s.io/v1, "core_events" = v1).

What a real server does differently, and how the facade bridges it:

- Pods are created without status (the server sets `phase: Pending`): a
  status given to `create` is written afterwards through `pods/status`.
- No kubelet: a Node created here gets its status through `nodes/status`
  (Ready, allocatable as given) and loses the `node.kubernetes.io/not-ready`
  taint the server adds, as a kubelet's first heartbeat would have it.
- No controller manager: `reset()` deletes every pod (grace period 0),
  every node, the Events of the namespaces used and the Leases in
  `eventsched`, so one control plane serves every test of a session.
- `update`/`patch` write the main resource and, when the object or patch
  has a status, the status subresource, which is what the emulator's
  unconditional test writes do in one step. What the real server refuses
  (changing a pod's spec, `spec.nodeName` but through a Binding) it refuses.

`EmulatedApiServer` is the emulator with the extras both kinds of server
share here (`flavor`, `bind`, `kubeconfig`, `reset`, `client`), so a test
parametrized over both (the `kube_server` fixture) can use one vocabulary.
"""

from __future__ import annotations

import copy
import functools
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlencode

import urllib3
from kubernetes import client

from eventsched.benchmarks.controlplane import ready_node_status
from eventsched.benchmarks.kubebinaries import kube_binaries
from tests.kube.apiserver import STRATEGIC_MERGE_PATCH, ApiServer

if TYPE_CHECKING:
    from eventsched.benchmarks.controlplane import ControlPlane
    from eventsched.benchmarks.kubebinaries import KubeBinaries

T = TypeVar("T")

JSON = "application/json"
NOT_READY_TAINT = "node.kubernetes.io/not-ready"
#: The namespace of the scheduler's Lease in the tests (FAST_LEASE's resource_namespace).
LEASE_NAMESPACE = "eventsched"

#: kind name -> (API prefix, plural, namespaced, has a status subresource)
KINDS: dict[str, tuple[str, str, bool, bool]] = {
    "pods": ("/api/v1", "pods", True, True),
    "nodes": ("/api/v1", "nodes", False, True),
    "namespaces": ("/api/v1", "namespaces", False, False),
    "services": ("/api/v1", "services", True, False),
    "replicasets": ("/apis/apps/v1", "replicasets", True, False),
    "statefulsets": ("/apis/apps/v1", "statefulsets", True, True),
    "persistentvolumeclaims": ("/api/v1", "persistentvolumeclaims", True, True),
    "persistentvolumes": ("/api/v1", "persistentvolumes", False, True),
    "storageclasses": ("/apis/storage.k8s.io/v1", "storageclasses", False, False),
    "csinodes": ("/apis/storage.k8s.io/v1", "csinodes", False, False),
    "csidrivers": ("/apis/storage.k8s.io/v1", "csidrivers", False, False),
    "csistoragecapacities": ("/apis/storage.k8s.io/v1", "csistoragecapacities", True, False),
    "poddisruptionbudgets": ("/apis/policy/v1", "poddisruptionbudgets", True, True),
    "leases": ("/apis/coordination.k8s.io/v1", "leases", True, False),
    "events": ("/apis/events.k8s.io/v1", "events", True, False),
    "core_events": ("/api/v1", "events", True, False),
}
_BY_KIND: dict[tuple[str, str], str] = {
    ("v1", "Pod"): "pods",
    ("v1", "Node"): "nodes",
    ("v1", "Namespace"): "namespaces",
    ("v1", "Service"): "services",
    ("apps/v1", "ReplicaSet"): "replicasets",
    ("apps/v1", "StatefulSet"): "statefulsets",
    ("v1", "PersistentVolumeClaim"): "persistentvolumeclaims",
    ("v1", "PersistentVolume"): "persistentvolumes",
    ("storage.k8s.io/v1", "StorageClass"): "storageclasses",
    ("storage.k8s.io/v1", "CSINode"): "csinodes",
    ("storage.k8s.io/v1", "CSIDriver"): "csidrivers",
    ("storage.k8s.io/v1", "CSIStorageCapacity"): "csistoragecapacities",
    ("policy/v1", "PodDisruptionBudget"): "poddisruptionbudgets",
    ("coordination.k8s.io/v1", "Lease"): "leases",
    ("events.k8s.io/v1", "Event"): "events",
    ("v1", "Event"): "core_events",
}
_API_VERSION = {key: version for (version, _), key in _BY_KIND.items()}
_KIND = {key: kind for (_, kind), key in _BY_KIND.items()}


@functools.cache
def real_binaries() -> KubeBinaries | None:
    """kube-apiserver and etcd when $EVENTSCHED_KUBE_BIN names a directory with kube-apiserver
    and etcd is on PATH (eventsched/benchmarks/kubebinaries.py); None on a machine without them."""
    return kube_binaries()


#: The servers `kube_server` tests run against: the real one only where its binaries are.
KUBE_SERVERS: tuple[str, ...] = (
    ("emulator", "real") if real_binaries() is not None else ("emulator",)
)


class RealApiError(Exception):
    """A request the real server answered with an error: `status` and its Status body."""

    def __init__(self, method: str, path: str, status: int, body: Any) -> None:
        self.status = status
        self.body = body
        message = body.get("message") if isinstance(body, dict) else body
        super().__init__(f"{method} {path}: {status} {message}")


def _kind_of(obj: dict, kind: str | None) -> str:
    if kind is not None:
        if kind not in KINDS:
            raise KeyError(f"unknown kind {kind!r}; use one of {sorted(KINDS)}")
        return kind
    try:
        return _BY_KIND[(obj["apiVersion"], obj["kind"])]
    except KeyError:
        raise KeyError("pass kind=... or give the object a known apiVersion and kind") from None


def _write_kubeconfig(path: Path, url: str, token: str, ca_file: Path | None) -> Path:
    cluster: dict[str, str] = {"server": url}
    if ca_file is not None:
        cluster["certificate-authority"] = str(ca_file)
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "test", "cluster": cluster}],
        "users": [{"name": "u", "user": {"token": token}}],
        "contexts": [{"name": "c", "context": {"cluster": "test", "user": "u"}}],
        "current-context": "c",
    }
    path.write_text(json.dumps(config, indent=2) + "\n")  # JSON is YAML
    return path


class RealApiServer:
    """The emulator's test-control API over a started ControlPlane (not started or stopped here)."""

    flavor = "real"

    def __init__(self, control_plane: ControlPlane) -> None:
        self.control_plane = control_plane
        self.url: str = control_plane.url
        self.ca_file: Path = Path(control_plane.ca_file)
        self.token: str = control_plane.admin_token
        self._http = urllib3.PoolManager(
            maxsize=4, cert_reqs="CERT_REQUIRED", ca_certs=str(self.ca_file)
        )
        self._namespaces: set[str] = {"default", LEASE_NAMESPACE}
        self.ensure_namespace(LEASE_NAMESPACE)

    # -- plain HTTP ---------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = JSON,
        query: dict[str, str] | None = None,
        token: str | None = None,
    ) -> tuple[int, Any]:
        """(status, decoded JSON body); no exception for error statuses."""
        url = self.url + path + (f"?{urlencode(query)}" if query else "")
        headers = {
            "Authorization": f"Bearer {token or self.token}",
            "Accept": JSON,
        }
        data = None
        if body is not None:
            headers["Content-Type"] = content_type
            data = json.dumps(body).encode()
        response = self._http.request(
            method, url, body=data, headers=headers, timeout=urllib3.Timeout(connect=5, read=30)
        )
        text = response.data.decode() if response.data else ""
        try:
            decoded = json.loads(text) if text else None
        except ValueError:
            decoded = text
        return response.status, decoded

    def call(self, method: str, path: str, body: Any = None, **kwargs: Any) -> Any:
        """The decoded body of a successful request; RealApiError otherwise."""
        status, decoded = self.request(method, path, body, **kwargs)
        if status >= 400:
            raise RealApiError(method, path, status, decoded)
        return decoded

    def _path(self, kind: str, namespace: str | None, name: str | None = None) -> str:
        prefix, plural, namespaced, _ = KINDS[kind]
        path = prefix
        if namespaced and namespace is not None:
            path += f"/namespaces/{namespace}"
        path += f"/{plural}"
        if name is not None:
            path += f"/{name}"
        return path

    @staticmethod
    def _present(kind: str, obj: dict) -> dict:
        """apiVersion and kind first, as the emulator presents objects (list items lack them)."""
        return {"apiVersion": _API_VERSION[kind], "kind": _KIND[kind], **obj}

    def ensure_namespace(self, namespace: str) -> None:
        status, body = self.request("POST", "/api/v1/namespaces", {"metadata": {"name": namespace}})
        if status not in (201, 409):
            raise RealApiError("POST", "/api/v1/namespaces", status, body)
        self._namespaces.add(namespace)

    def _namespace_of(self, kind: str, namespace: str | None) -> str | None:
        if not KINDS[kind][2]:
            return None
        namespace = namespace or "default"
        if namespace not in self._namespaces:
            self.ensure_namespace(namespace)
        return namespace

    # -- the emulator's test-control API ---------------------------------------------

    def create(self, obj: dict, kind: str | None = None) -> dict:
        """POST the object; pods get their given status and nodes a kubelet's (see the module)."""
        kind = _kind_of(obj, kind)
        body = copy.deepcopy(obj)
        body.setdefault("apiVersion", _API_VERSION[kind])
        body.setdefault("kind", _KIND[kind])
        meta = body.setdefault("metadata", {})
        namespace = self._namespace_of(kind, meta.get("namespace"))
        if namespace is not None:
            meta["namespace"] = namespace
        status = body.pop("status", None) if KINDS[kind][3] else None
        created = self.call("POST", self._path(kind, namespace), body)
        name = created["metadata"]["name"]
        if kind == "nodes":
            created = self._make_ready(created, status or {})
        elif kind == "pods" and status and status != {"phase": "Pending"}:
            created = self.call(
                "PATCH",
                self._path(kind, namespace, name) + "/status",
                {"status": status},
                content_type=STRATEGIC_MERGE_PATCH,
            )
        return self._present(kind, created)

    def _make_ready(self, node: dict, wanted: dict) -> dict:
        """What a kubelet's registration and first heartbeat would write."""
        name = node["metadata"]["name"]
        path = self._path("nodes", None, name)
        node = self.call("PUT", path + "/status", {**node, "status": ready_node_status(wanted)})
        taints = (node.get("spec") or {}).get("taints") or []
        kept = [t for t in taints if t.get("key") != NOT_READY_TAINT]
        if len(kept) != len(taints):
            node = self.call(
                "PATCH",
                path,
                {"spec": {"taints": kept or None}},
                content_type="application/merge-patch+json",
            )
        return node

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict | None:
        """The object, or None when absent; namespaced kinds default to "default"."""
        kind = _kind_of({}, kind)
        namespace = (namespace or "default") if KINDS[kind][2] else None
        status, body = self.request("GET", self._path(kind, namespace, name))
        if status == 404:
            return None
        if status >= 400:
            raise RealApiError("GET", self._path(kind, namespace, name), status, body)
        return self._present(kind, body)

    def list(self, kind: str, namespace: str | None = None) -> list[dict]:
        """Every object of the kind (in `namespace` if given, else in all), by namespace and name."""
        kind = _kind_of({}, kind)
        items = self.call("GET", self._path(kind, namespace))["items"]
        items.sort(key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))
        return [self._present(kind, o) for o in items]

    def update(self, obj: dict, kind: str | None = None) -> dict:
        """Replace the object, then its status (kinds with one), whatever its resourceVersion.

        Some kinds (leases) refuse a PUT without a resourceVersion, so each PUT
        carries the current one, read just before, and is tried again on a 409.
        """
        kind = _kind_of(obj, kind)
        body = copy.deepcopy(obj)
        body.setdefault("apiVersion", _API_VERSION[kind])
        body.setdefault("kind", _KIND[kind])
        meta = body.setdefault("metadata", {})
        namespace = (meta.get("namespace") or "default") if KINDS[kind][2] else None
        path = self._path(kind, namespace, meta["name"])
        updated = self._put_current(path, body)
        if KINDS[kind][3] and "status" in body:
            updated = self._put_current(path + "/status", {**updated, "status": body["status"]})
        return self._present(kind, updated)

    def _put_current(self, path: str, body: dict, attempts: int = 5) -> Any:
        for attempt in range(attempts):
            current = self.call("GET", path.removesuffix("/status"))
            body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
            status, answer = self.request("PUT", path, body)
            if status == 409 and attempt + 1 < attempts:
                continue
            if status >= 400:
                raise RealApiError("PUT", path, status, answer)
            return answer
        raise AssertionError("unreachable")

    def patch(
        self,
        kind: str,
        name: str,
        patch: dict,
        namespace: str | None = None,
        content_type: str = STRATEGIC_MERGE_PATCH,
    ) -> dict:
        """Patch the object, and its status subresource with the patch's `status` (kinds with one)."""
        kind = _kind_of({}, kind)
        namespace = (namespace or "default") if KINDS[kind][2] else None
        path = self._path(kind, namespace, name)
        rest = dict(patch)
        status = rest.pop("status", None) if KINDS[kind][3] else None
        patched: dict = {}
        if rest or status is None:
            patched = self.call("PATCH", path, rest, content_type=content_type)
        if status is not None:
            patched = self.call(
                "PATCH", path + "/status", {"status": status}, content_type=content_type
            )
        return self._present(kind, patched)

    def delete(self, kind: str, name: str, namespace: str | None = None) -> dict | None:
        """Remove the object at once (grace period 0); the deleted object, or None when absent."""
        kind = _kind_of({}, kind)
        namespace = (namespace or "default") if KINDS[kind][2] else None
        path = self._path(kind, namespace, name)
        status, body = self.request(
            "DELETE", path, {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0}
        )
        if status == 404:
            return None
        if status >= 400:
            raise RealApiError("DELETE", path, status, body)
        return self._present(kind, body) if body.get("kind") == _KIND[kind] else body

    def wait_for(self, predicate: Callable[[], T], timeout: float = 10.0) -> T:
        """Poll `predicate()` until it is truthy and return its value; TimeoutError otherwise."""
        deadline = time.monotonic() + timeout
        while True:
            result = predicate()
            if result:
                return result
            if time.monotonic() > deadline:
                raise TimeoutError(f"condition not met within {timeout}s: {predicate!r}")
            time.sleep(0.05)

    # -- shared extras ----------------------------------------------------------------

    def bind(
        self, name: str, node: str, namespace: str = "default", uid: str | None = None
    ) -> tuple[int, Any]:
        """POST pods/binding as another scheduler would: (status, body), no exception."""
        return _bind(self.request, name, node, namespace, uid)

    def kubeconfig(self, path: Path, token: str | None = None) -> Path:
        """A kubeconfig for this server: the admin token (or `token`), TLS verified against ca_file."""
        return _write_kubeconfig(path, self.url, token or self.token, self.ca_file)

    def client(self, token: str | None = None) -> client.ApiClient:
        """The official client, verifying TLS against ca_file, with the admin token (or `token`)."""
        configuration = client.Configuration(host=self.url)
        configuration.ssl_ca_cert = str(self.ca_file)
        configuration.verify_ssl = True
        configuration.api_key = {"authorization": f"Bearer {token or self.token}"}
        return client.ApiClient(configuration)

    def reset(self) -> None:
        """Empty what tests write: pods, nodes, Events, ReplicaSets, StatefulSets, Services and
        PodDisruptionBudgets of the namespaces used, leases in eventsched, and storage
        objects (claims, volumes, classes, CSI nodes)."""
        grace0 = {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0}
        pods = self.call("GET", "/api/v1/pods")["items"]
        namespaces = self._namespaces | {p["metadata"]["namespace"] for p in pods}
        for namespace in sorted(namespaces):
            self.call("DELETE", f"/api/v1/namespaces/{namespace}/pods", grace0)
            self.call("DELETE", f"/api/v1/namespaces/{namespace}/events")
            self.call("DELETE", f"/apis/apps/v1/namespaces/{namespace}/replicasets")
            self.call("DELETE", f"/apis/apps/v1/namespaces/{namespace}/statefulsets")
            self.call("DELETE", f"/apis/policy/v1/namespaces/{namespace}/poddisruptionbudgets")
            for service in self.call("GET", f"/api/v1/namespaces/{namespace}/services")["items"]:
                if service["metadata"]["name"] != "kubernetes":
                    self.call(
                        "DELETE", self._path("services", namespace, service["metadata"]["name"])
                    )
        self._delete_storage(namespaces)
        self.call("DELETE", "/api/v1/nodes")
        self.call("DELETE", f"/apis/coordination.k8s.io/v1/namespaces/{LEASE_NAMESPACE}/leases")

        def emptied() -> bool:
            return not (
                self.call("GET", "/api/v1/pods")["items"]
                or self.call("GET", "/api/v1/nodes")["items"]
            )

        self.wait_for(emptied, timeout=10)

    def _delete_storage(self, namespaces: set[str]) -> None:
        """Claims and volumes lose their protection finalizers first: no controller
        manager runs here to remove them, so they would never go."""
        for kind, namespace in [
            *(("persistentvolumeclaims", ns) for ns in sorted(namespaces)),
            ("persistentvolumes", None),
            ("storageclasses", None),
            ("csinodes", None),
            ("csidrivers", None),
            *(("csistoragecapacities", ns) for ns in sorted(namespaces)),
        ]:
            for obj in self.call("GET", self._path(kind, namespace))["items"]:
                path = self._path(kind, namespace, obj["metadata"]["name"])
                if obj["metadata"].get("finalizers"):
                    self.call(
                        "PATCH",
                        path,
                        {"metadata": {"finalizers": None}},
                        content_type="application/merge-patch+json",
                    )
                self.request("DELETE", path)


class EmulatedApiServer(ApiServer):
    """The emulator, with the extras `RealApiServer` has, for tests that run on either."""

    flavor = "emulator"
    ca_file: Path | None = None
    token = "t"

    def bind(
        self, name: str, node: str, namespace: str = "default", uid: str | None = None
    ) -> tuple[int, Any]:
        """POST pods/binding over HTTP (so it is in `requests`): (status, body), no exception."""
        http = urllib3.PoolManager()

        def request(method: str, path: str, body: Any) -> tuple[int, Any]:
            response = http.request(
                method,
                self.url + path,
                body=json.dumps(body).encode(),
                headers={"Content-Type": JSON},
                timeout=10,
            )
            return response.status, json.loads(response.data.decode() or "null")

        try:
            return _bind(request, name, node, namespace, uid)
        finally:
            http.clear()

    def kubeconfig(self, path: Path, token: str | None = None) -> Path:
        return _write_kubeconfig(path, self.url, token or self.token, None)

    def client(self, token: str | None = None) -> client.ApiClient:
        """The official client, over HTTP, without auth."""
        return client.ApiClient(client.Configuration(host=self.url))

    def reset(self) -> None:
        """Nothing to do: each test gets a new emulator."""


def _bind(
    request: Callable[..., tuple[int, Any]],
    name: str,
    node: str,
    namespace: str,
    uid: str | None,
) -> tuple[int, Any]:
    meta: dict[str, str] = {"name": name, "namespace": namespace}
    if uid is not None:
        meta["uid"] = uid
    body = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": meta,
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }
    return request("POST", f"/api/v1/namespaces/{namespace}/pods/{name}/binding", body)


#: What tests parametrized over both servers get from the `kube_server` fixture.
KubeServer = RealApiServer | EmulatedApiServer
