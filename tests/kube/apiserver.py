"""A small, stateful Kubernetes API server emulator for tests.

Kubernetes-facing code is tested with the real `kubernetes` client speaking
HTTP to a server, never by patching the client: the client's serialization,
its pydantic models, `Watch`, `SharedInformer` and `leaderelection` are part of
what is tested. A real API server (kind, envtest) is too slow and heavy for
unit tests, so this module emulates the slice of one that the scheduler uses,
with the same paths, status codes, `Status` error bodies, resourceVersion
semantics and watch protocol (chunked JSON lines, 410 Expired on compaction).

Standard library only. One re-entrant lock guards all state; a condition
variable on that lock wakes watch streams and `wait_for` on every write.

Kind names (the `kind` argument of the test-control API) are the plural
resource names, with one exception for the two Event APIs:

=============  ===========================  ==========  ==========
kind           API                          object      scope
=============  ===========================  ==========  ==========
"pods"         v1                           Pod         namespaced
"nodes"        v1                           Node        cluster
"namespaces"   v1                           Namespace   cluster
"services", "replicationcontrollers" (v1), "replicasets", "statefulsets" (apps/v1): namespaced
"persistentvolumeclaims" (v1): namespaced; "persistentvolumes" (v1): cluster
"storageclasses", "csinodes", "csidrivers" (storage.k8s.io/v1): cluster
"csistoragecapacities" (storage.k8s.io/v1): namespaced
"poddisruptionbudgets" (policy/v1): namespaced, with a status subresource
"leases"       coordination.k8s.io/v1       Lease       namespaced
"events"       events.k8s.io/v1             Event       namespaced
"core_events"  v1                           Event       namespaced
=============  ===========================  ==========  ==========

"events" is the events.k8s.io API because that is the one the scheduler
writes (as kube-scheduler does); the legacy core v1 Events are "core_events".
The two are stored separately (a real server stores them once and converts).
"""

from __future__ import annotations

import bisect
import contextlib
import copy
import json
import re
import secrets
import select
import socket
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Generator
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

T = TypeVar("T")

STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
MERGE_PATCH = "application/merge-patch+json"

ADDED, MODIFIED, DELETED, ERROR = "ADDED", "MODIFIED", "DELETED", "ERROR"

#: `reason` of a Status for an HTTP code, as the real server names them.
REASONS: dict[int, str] = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    410: "Expired",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


# -- resource types ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ResourceType:
    """One API resource: where it lives on the wire and how it behaves on writes."""

    key: str  #: the kind name of the test-control API, e.g. "pods", "core_events"
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    #: PUT/PATCH on the main resource keeps the stored status; `status` has its own subresource.
    has_status: bool = False
    #: PUT on an absent object creates it (leases and events do, pods and nodes do not).
    create_on_update: bool = False
    #: DELETE answers with the deleted object (pods) instead of a Success Status.
    returns_deleted_object: bool = False
    #: Field selector labels the server accepts besides metadata.name/namespace; None: any path.
    fields: frozenset[str] | None = frozenset()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """The resource as it appears in error messages: `leases.coordination.k8s.io`."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


RESOURCES: dict[str, ResourceType] = {
    rt.key: rt
    for rt in (
        ResourceType(
            "pods",
            "",
            "v1",
            "pods",
            "Pod",
            namespaced=True,
            has_status=True,
            returns_deleted_object=True,
            fields=frozenset(
                {
                    "spec.nodeName",
                    "spec.schedulerName",
                    "spec.serviceAccountName",
                    "spec.hostNetwork",
                    "spec.restartPolicy",
                    "status.phase",
                    "status.podIP",
                    "status.nominatedNodeName",
                }
            ),
        ),
        ResourceType(
            "nodes",
            "",
            "v1",
            "nodes",
            "Node",
            namespaced=False,
            has_status=True,
            fields=frozenset({"spec.unschedulable"}),
        ),
        ResourceType("namespaces", "", "v1", "namespaces", "Namespace", namespaced=False),
        ResourceType("services", "", "v1", "services", "Service", namespaced=True),
        ResourceType(
            "replicationcontrollers",
            "",
            "v1",
            "replicationcontrollers",
            "ReplicationController",
            namespaced=True,
        ),
        ResourceType("replicasets", "apps", "v1", "replicasets", "ReplicaSet", namespaced=True),
        ResourceType("statefulsets", "apps", "v1", "statefulsets", "StatefulSet", namespaced=True),
        ResourceType(
            "persistentvolumeclaims",
            "",
            "v1",
            "persistentvolumeclaims",
            "PersistentVolumeClaim",
            namespaced=True,
            has_status=True,
        ),
        ResourceType(
            "persistentvolumes",
            "",
            "v1",
            "persistentvolumes",
            "PersistentVolume",
            namespaced=False,
            has_status=True,
        ),
        ResourceType(
            "storageclasses",
            "storage.k8s.io",
            "v1",
            "storageclasses",
            "StorageClass",
            namespaced=False,
        ),
        ResourceType("csinodes", "storage.k8s.io", "v1", "csinodes", "CSINode", namespaced=False),
        ResourceType(
            "csidrivers", "storage.k8s.io", "v1", "csidrivers", "CSIDriver", namespaced=False
        ),
        ResourceType(
            "csistoragecapacities",
            "storage.k8s.io",
            "v1",
            "csistoragecapacities",
            "CSIStorageCapacity",
            namespaced=True,
        ),
        ResourceType(
            "poddisruptionbudgets",
            "policy",
            "v1",
            "poddisruptionbudgets",
            "PodDisruptionBudget",
            namespaced=True,
            has_status=True,
        ),
        ResourceType(
            "leases",
            "coordination.k8s.io",
            "v1",
            "leases",
            "Lease",
            namespaced=True,
            create_on_update=True,
        ),
        ResourceType(
            "events",
            "events.k8s.io",
            "v1",
            "events",
            "Event",
            namespaced=True,
            create_on_update=True,
            fields=None,
        ),
        ResourceType(
            "core_events",
            "",
            "v1",
            "events",
            "Event",
            namespaced=True,
            create_on_update=True,
            fields=None,
        ),
    )
}

_BY_PATH: dict[tuple[str, str, str], ResourceType] = {
    (rt.group, rt.version, rt.plural): rt for rt in RESOURCES.values()
}
_BY_KIND: dict[tuple[str, str], ResourceType] = {
    (rt.api_version, rt.kind): rt for rt in RESOURCES.values()
}
#: Subresources each resource serves.
_SUBRESOURCES: dict[str, frozenset[str]] = {
    "pods": frozenset({"status", "binding"}),
    "nodes": frozenset({"status"}),
    "poddisruptionbudgets": frozenset({"status"}),
}


def resource_type(kind: str) -> ResourceType:
    """The ResourceType of a kind name; KeyError lists the valid names."""
    try:
        return RESOURCES[kind]
    except KeyError:
        raise KeyError(f"unknown kind {kind!r}; use one of {sorted(RESOURCES)}") from None


# -- errors -----------------------------------------------------------------------


class ApiError(Exception):
    """An error the server answers with a `Status` body, as the real server does."""

    def __init__(
        self, code: int, message: str, reason: str | None = None, details: dict | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = REASONS.get(code, "") if reason is None else reason
        self.details = details

    def status(self) -> dict[str, Any]:
        return failure_status(self.code, self.message, self.reason, self.details)


def failure_status(
    code: int, message: str, reason: str | None = None, details: dict | None = None
) -> dict[str, Any]:
    """A `Status` with status Failure: the body of every error answer."""
    body: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": REASONS.get(code, "") if reason is None else reason,
        "code": code,
    }
    if details:
        body["details"] = details
    return body


def _details(rt: ResourceType, name: str, kind: str | None = None) -> dict[str, str]:
    details = {"name": name, "kind": kind or rt.plural}
    if rt.group:
        details["group"] = rt.group
    return details


def not_found(rt: ResourceType, name: str) -> ApiError:
    return ApiError(404, f'{rt.qualified} "{name}" not found', details=_details(rt, name))


def already_exists(rt: ResourceType, name: str) -> ApiError:
    return ApiError(
        409, f'{rt.qualified} "{name}" already exists', "AlreadyExists", _details(rt, name)
    )


def conflict(rt: ResourceType, name: str, why: str, resource: str | None = None) -> ApiError:
    return ApiError(
        409,
        f'Operation cannot be fulfilled on {resource or rt.qualified} "{name}": {why}',
        "Conflict",
        _details(rt, name, resource),
    )


STALE = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


# -- patches ----------------------------------------------------------------------

#: Strategic-merge lists that merge by a key (`patchMergeKey` in the Go types);
#: "*" stands for any element of a list. Lists not named here are replaced.
MERGE_KEYS: dict[tuple[str, ...], str] = {
    ("status", "conditions"): "type",
    ("status", "addresses"): "type",
    ("metadata", "ownerReferences"): "uid",
    ("spec", "containers"): "name",
    ("spec", "initContainers"): "name",
    ("spec", "ephemeralContainers"): "name",
    ("spec", "volumes"): "name",
    ("spec", "containers", "*", "env"): "name",
    ("spec", "containers", "*", "ports"): "containerPort",
    ("spec", "containers", "*", "volumeMounts"): "mountPath",
}
#: Strategic-merge lists of scalars that merge as a union (`patchStrategy: merge`).
MERGE_SCALAR_LISTS: frozenset[tuple[str, ...]] = frozenset({("metadata", "finalizers")})

_DELETE = object()


def merge_patch(original: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: objects merge recursively, null deletes, all else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(original) if isinstance(original, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def strategic_merge_patch(original: Any, patch: Any) -> Any:
    """Kubernetes strategic merge patch for the lists the scheduler touches.

    Maps merge recursively and `null` deletes a key, as in a merge patch; the
    lists in MERGE_KEYS merge element by element on their key (so patching
    `status.conditions` with one condition keeps the others), `$patch:
    delete|replace` and `$deleteFromPrimitiveList/` are honoured,
    `$setElementOrder/` and `$retainKeys` are ignored.
    """
    result = _smp_map(original if isinstance(original, dict) else {}, patch, ())
    return {} if result is _DELETE else result


def _smp_map(original: dict, patch: dict, path: tuple[str, ...]) -> Any:
    directive = patch.get("$patch")
    if directive == "delete":
        return _DELETE
    body = {k: v for k, v in patch.items() if k != "$patch"}
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in body.items() if not k.startswith("$")}
    result = copy.deepcopy(original)
    for key, value in body.items():
        if key.startswith("$deleteFromPrimitiveList/"):
            target = key.split("/", 1)[1]
            if isinstance(result.get(target), list):
                result[target] = [v for v in result[target] if v not in value]
            continue
        if key.startswith("$"):
            continue  # $setElementOrder/..., $retainKeys
        sub = (*path, key)
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            current = result.get(key)
            merged = _smp_map(current if isinstance(current, dict) else {}, value, sub)
            if merged is _DELETE:
                result.pop(key, None)
            else:
                result[key] = merged
        elif isinstance(value, list):
            result[key] = _smp_list(result.get(key), value, sub)
        else:
            result[key] = copy.deepcopy(value)
    return result


def _merge_key(path: tuple[str, ...]) -> str | None:
    for pattern, key in MERGE_KEYS.items():
        if len(pattern) == len(path) and all(
            p in ("*", q) for p, q in zip(pattern, path, strict=True)
        ):
            return key
    return None


def _smp_list(original: Any, patch: list, path: tuple[str, ...]) -> list:
    current = original if isinstance(original, list) else []
    if any(isinstance(e, dict) and e.get("$patch") == "replace" for e in patch):
        return [copy.deepcopy(e) for e in patch if not (isinstance(e, dict) and "$patch" in e)]
    if path in MERGE_SCALAR_LISTS:
        merged = list(current)
        merged.extend(v for v in patch if v not in merged)
        return copy.deepcopy(merged)
    key = _merge_key(path)
    if key is None:
        return copy.deepcopy(patch)
    result = copy.deepcopy(current)
    element_path = (*path, "*")
    for element in patch:
        if not isinstance(element, dict) or key not in element:
            result.append(copy.deepcopy(element))
            continue
        index = next(
            (i for i, e in enumerate(result) if isinstance(e, dict) and e.get(key) == element[key]),
            None,
        )
        if element.get("$patch") == "delete":
            if index is not None:
                del result[index]
            continue
        merged = _smp_map(result[index] if index is not None else {}, element, element_path)
        if index is None:
            result.append(merged)
        else:
            result[index] = merged
    return result


# -- selectors --------------------------------------------------------------------


def _field_value(obj: dict, path: str) -> str:
    value: Any = obj
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


#: Field selector labels every resource supports.
_METADATA_FIELDS = ("metadata.name", "metadata.namespace")


def parse_field_selector(rt: ResourceType, text: str) -> Callable[[dict], bool]:
    """`a=b,c!=d` over object fields; unknown labels are a 400, as on a real server."""
    terms: list[tuple[str, bool, str]] = []
    for raw in filter(None, (t.strip() for t in text.split(","))):
        match = re.fullmatch(r"([A-Za-z0-9_.\-]+)\s*(==|!=|=)\s*(.*)", raw)
        if not match:
            raise ApiError(400, f"invalid selector: '{text}'; can't understand '{raw}'")
        label, op, value = match.groups()
        allowed = rt.fields is None or label in rt.fields or label in _METADATA_FIELDS
        if not allowed:
            raise ApiError(400, f"field label not supported: {label}")
        terms.append((label, op == "!=", value))
    return lambda obj: all((_field_value(obj, p) == v) != neg for p, neg, v in terms)


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, []
    for char in text:
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        current.append(char)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def parse_label_selector(text: str) -> Callable[[dict], bool]:
    """Equality (`=`, `==`, `!=`), set (`in`, `notin`) and existence (`k`, `!k`) terms."""
    checks: list[Callable[[dict[str, str]], bool]] = []
    key = r"([A-Za-z0-9_./\-]+)"
    for term in _split_top_level(text):
        if m := re.fullmatch(key + r"\s*(==|!=|=)\s*([A-Za-z0-9_.\-]*)", term):
            k, op, v = m.groups()
            checks.append(
                (lambda ls, k=k, v=v: ls.get(k) != v)
                if op == "!="
                else (lambda ls, k=k, v=v: ls.get(k) == v)
            )
        elif m := re.fullmatch(key + r"\s+(in|notin)\s+\(([^)]*)\)", term):
            k, op, values = m.groups()
            options = {v.strip() for v in values.split(",")}
            checks.append(
                (lambda ls, k=k, o=options: k in ls and ls[k] in o)
                if op == "in"
                else (lambda ls, k=k, o=options: ls.get(k) not in o)
            )
        elif m := re.fullmatch(r"!\s*" + key, term):
            absent = m.group(1)
            checks.append(lambda ls, k=absent: k not in ls)
        elif m := re.fullmatch(key, term):
            present = m.group(1)
            checks.append(lambda ls, k=present: k in ls)
        else:
            raise ApiError(400, f"unable to parse requirement: {term!r}")

    def matches(obj: dict) -> bool:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return all(check(labels) for check in checks)

    return matches


def _selector(rt: ResourceType, query: dict[str, str]) -> Callable[[dict], bool]:
    fields = parse_field_selector(rt, query.get("fieldSelector", ""))
    labels = parse_label_selector(query.get("labelSelector", ""))
    return lambda obj: fields(obj) and labels(obj)


# -- records ----------------------------------------------------------------------


@dataclass(slots=True)
class RequestRecord:
    """One HTTP request as the server saw it, and the status it answered."""

    method: str
    path: str
    query: dict[str, str]
    content_type: str
    body: Any
    user_agent: str
    #: The status answered; 0 for a held request dropped before it was applied (see Hold).
    status: int = 0
    #: RBAC terms of the request; empty for paths the emulator does not serve.
    api_group: str = ""
    resource: str = ""
    verb: str = ""


@dataclass(frozen=True, slots=True)
class _Event:
    rv: int
    type: str
    resource: str
    namespace: str
    obj: dict
    prev: dict | None = None


@dataclass(slots=True)
class _Fault:
    method: str
    pattern: re.Pattern[str]
    status: int
    remaining: int
    reason: str
    message: str
    retry_after: int | None


class Hold:
    """Requests that `ApiServer.hold_next` keeps waiting until the test lets them go.

    Made for crash tests: a request of the scheduler's (a Binding) is held
    while the test kills the scheduler, so the kill lands at a known point of
    its binding cycle. With `apply_first` the server applies the request
    before holding it (the write is done, the answer has not left); without,
    it holds it before touching any state. `release()` then answers each held
    request (serving it first if it was not applied); `drop()` closes their
    connections without an answer, and a request not applied yet never is,
    as when a client dies before the server acted on its request.

    Held requests appear in `ApiServer.requests` once answered or dropped;
    one dropped before it was applied has status 0, one applied before it
    was dropped has the status it would have been answered with.
    """

    def __init__(
        self,
        method: str,
        pattern: re.Pattern[str],
        times: int,
        apply_first: bool,
        on_arrival: Callable[[RequestRecord], None] | None,
    ) -> None:
        self.method = method
        self.pattern = pattern
        self.remaining = times
        self.apply_first = apply_first
        self.on_arrival = on_arrival
        #: Requests held so far, in arrival order.
        self.held: list[RequestRecord] = []
        self._changed = threading.Condition()
        self._answer: bool | None = None  #: None while holding

    def wait(self, count: int = 1, timeout: float = 10.0) -> list[RequestRecord]:
        """Block until `count` requests are held; the held requests, or TimeoutError."""
        with self._changed:
            if not self._changed.wait_for(lambda: len(self.held) >= count, timeout):
                raise TimeoutError(f"{len(self.held)} of {count} request(s) held in {timeout}s")
            return list(self.held)

    def release(self) -> None:
        """Answer every held request (and let later matches through, unheld)."""
        self._let_go(True)

    def drop(self) -> None:
        """Close every held request's connection without an answer; see the class doc."""
        self._let_go(False)

    def _let_go(self, answer: bool) -> None:
        with self._changed:
            self.remaining = 0
            if self._answer is None:
                self._answer = answer
            self._changed.notify_all()

    def _arrive(self, record: RequestRecord) -> bool:
        """Called by the handler: note the request, tell the test, wait; True to answer."""
        with self._changed:
            self.held.append(record)
            self._changed.notify_all()
        if self.on_arrival is not None:
            self.on_arrival(record)
        with self._changed:
            self._changed.wait_for(lambda: self._answer is not None)
            return bool(self._answer)


@dataclass(slots=True)
class _Route:
    rt: ResourceType
    namespace: str | None
    name: str | None
    subresource: str | None
    verb: str

    @property
    def resource(self) -> str:
        return f"{self.rt.plural}/{self.subresource}" if self.subresource else self.rt.plural


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _unchanged(new: dict, old: dict) -> bool:
    """`new` is `old` but for the resourceVersion the request carried (or left out)."""

    def stripped(obj: dict) -> dict:
        meta = {k: v for k, v in obj["metadata"].items() if k != "resourceVersion"}
        return {**obj, "metadata": meta}

    return bool(stripped(new) == stripped(old))


def _meta(obj: dict) -> dict:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = obj["metadata"] = {}
    return meta


# -- the server -------------------------------------------------------------------


class ApiServer:
    """The emulator: state, the test-control API, and the HTTP server around them.

    Objects are stored without `apiVersion`/`kind` and get them on the way out;
    stored dicts are never mutated in place (every write stores a new dict), so
    history entries and watch streams can share them without copying.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, history_limit: int = 10_000) -> None:
        self._host, self._port = host, port
        self._history_limit = history_limit
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._rv = 1
        self._compacted = 0  #: watches from a resourceVersion below this get 410 Expired
        self._expirations = 0  #: bumped by expire_watches(); open streams compare it
        self._endings = 0  #: bumped by end_watches()
        #: While watches are delayed: the last resourceVersion streams may deliver.
        self._watch_horizon: int | None = None
        self._store: dict[str, dict[tuple[str, str], dict]] = {key: {} for key in RESOURCES}
        self._history: list[_Event] = []
        self._faults: list[_Fault] = []
        self._holds: list[Hold] = []
        self._requests: list[RequestRecord] = []
        self._open_watches = 0
        self._stopping = False
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        #: Tracebacks of exceptions inside the emulator; the fixture fails the test on any.
        self.internal_errors: list[str] = []
        #: What GET /version answers as gitVersion: the emulator serves v1.28's API.
        self.git_version = "v1.28.0"

    def version_info(self) -> dict[str, str]:
        """GET /version's answer (version.Info), for `git_version`."""
        major, minor = self.git_version.lstrip("v").split(".")[:2]
        return {
            "major": major,
            "minor": minor,
            "gitVersion": self.git_version,
            "gitTreeState": "clean",
            "goVersion": "go1.21.13",
            "compiler": "gc",
            "platform": "linux/amd64",
        }

    # -- lifecycle ----------------------------------------------------------------

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the emulator is not started")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> ApiServer:
        """Listen on host:port (port 0: a free one) and serve on a daemon thread."""
        if self._httpd is not None:
            return self
        self._stopping = False
        self._httpd = _HTTPServer((self._host, self._port), _Handler, self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="kube-apiserver-emulator",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        """End every watch stream (cleanly, with the final chunk), then close all connections."""
        httpd = self._httpd
        if httpd is None:
            return
        with self._changed:
            self._stopping = True
            holds, self._holds = self._holds, []
            self._changed.notify_all()
        for hold in holds:
            hold.drop()
        with self._changed:
            deadline = time.monotonic() + timeout
            while self._open_watches and time.monotonic() < deadline:
                self._changed.wait(0.05)
        httpd.shutdown()
        httpd.close_connections()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout)
        self._httpd = self._thread = None

    def __enter__(self) -> ApiServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- test-control API: state --------------------------------------------------

    @property
    def resource_version(self) -> int:
        """The current global resourceVersion (what a list would answer)."""
        with self._lock:
            return self._rv

    @property
    def open_watches(self) -> int:
        """Watch streams currently open, e.g. to wait until an informer is watching."""
        with self._lock:
            return self._open_watches

    def create(self, obj: dict, kind: str | None = None) -> dict:
        """Store a new object as a POST would (ADDED); kind defaults from apiVersion/kind.

        Namespaced objects without `metadata.namespace` go to "default".
        """
        rt = self._type_of(obj, kind)
        with self._lock:
            namespace = (obj.get("metadata") or {}).get("namespace") or "default"
            created = self._create(rt, namespace if rt.namespaced else None, obj)
            return self._present(rt, created)

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict | None:
        """The object, or None when absent; namespaced kinds default to "default"."""
        rt = resource_type(kind)
        with self._lock:
            obj = self._store[rt.key].get((self._ns(rt, namespace), name))
            return None if obj is None else self._present(rt, obj)

    def list(self, kind: str, namespace: str | None = None) -> list[dict]:
        """Every object of the kind (in `namespace` if given), in key order."""
        rt = resource_type(kind)
        with self._lock:
            return [self._present(rt, o) for o in self._items(rt, namespace)]

    def update(self, obj: dict, kind: str | None = None) -> dict:
        """Replace the whole object, status included, without a resourceVersion check (MODIFIED).

        This is how a test plays kubelet or another controller.
        """
        rt = self._type_of(obj, kind)
        meta = obj.get("metadata") or {}
        with self._lock:
            namespace = self._ns(rt, meta.get("namespace"))
            updated = self._replace(
                rt, namespace if rt.namespaced else None, meta.get("name", ""), obj, "test"
            )
            return self._present(rt, updated)

    def patch(
        self,
        kind: str,
        name: str,
        patch: dict,
        namespace: str | None = None,
        content_type: str = STRATEGIC_MERGE_PATCH,
    ) -> dict:
        """Patch the whole object, status included (MODIFIED)."""
        rt = resource_type(kind)
        with self._lock:
            ns = self._ns(rt, namespace)
            patched = self._patch(
                rt, ns if rt.namespaced else None, name, patch, content_type, "test"
            )
            return self._present(rt, patched)

    def delete(self, kind: str, name: str, namespace: str | None = None) -> dict | None:
        """Remove the object (DELETED); the deleted object, or None when it was absent."""
        rt = resource_type(kind)
        with self._lock:
            try:
                deleted = self._delete(rt, self._ns(rt, namespace) if rt.namespaced else None, name)
            except ApiError:
                return None
            return self._present(rt, deleted)

    def expire_watches(self) -> None:
        """Compact history: every resourceVersion handed out so far becomes too old.

        Bumps the resourceVersion once (as a write elsewhere in the cluster
        would), so a fresh list answers a version that can be watched from.
        Open watch streams get an ERROR event with a 410 Expired Status and
        end; a client resuming from an older version gets the same. That is
        what forces an informer to relist.
        """
        with self._changed:
            self._rv += 1
            self._compacted = self._rv
            self._history.clear()
            self._expirations += 1
            self._changed.notify_all()

    def end_watches(self) -> None:
        """End every open watch stream cleanly, as a real server does when a watch times out.

        Clients re-watch from the last resourceVersion they saw, no relist.
        Also the way to let `SharedInformer.stop()` return when it was called
        before its watch response arrived: the client's `Watch.stop()` can only
        interrupt a response it already holds.
        """
        with self._changed:
            self._endings += 1
            self._changed.notify_all()

    def delay_watches(self) -> None:
        """Hold back watch events from now on: streams deliver nothing written after this
        until `deliver_watches()`, as a loaded API server's watch can lag behind its
        answers. Requests are served as usual, so a client's own writes are applied,
        and answered, before its watch shows them."""
        with self._changed:
            self._watch_horizon = self._rv

    def deliver_watches(self) -> None:
        """Stop delaying: streams deliver what was held back, in order."""
        with self._changed:
            self._watch_horizon = None
            self._changed.notify_all()

    def _visible(self) -> int:
        """The last resourceVersion watch streams may deliver now (the lock held)."""
        return self._rv if self._watch_horizon is None else self._watch_horizon

    def _history_between(self, after: int, until: int) -> list[_Event]:
        """History entries with `after < rv <= until` (the lock held)."""
        begin = bisect.bisect_right(self._history, after, key=lambda e: e.rv)
        end = bisect.bisect_right(self._history, until, key=lambda e: e.rv)
        return self._history[begin:end]

    def wait_for(self, predicate: Callable[[], T], timeout: float = 5.0) -> T:
        """Wait until `predicate()` is truthy and return its value; TimeoutError otherwise.

        Re-evaluated on every write to the emulator and every 50 ms (for
        predicates over client-side state such as an informer cache). The
        predicate runs without the lock held, so it may call the client
        (which needs the lock to be answered); `get`/`list` take it themselves.
        """
        deadline = time.monotonic() + timeout
        while True:
            result = predicate()
            if result:
                return result
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"condition not met within {timeout}s: {predicate!r}")
            with self._changed:
                self._changed.wait(min(remaining, 0.05))

    # -- test-control API: faults and observation ---------------------------------

    def fail_next(
        self,
        method: str,
        path_regex: str,
        status: int,
        times: int = 1,
        reason: str = "",
        message: str = "",
        retry_after: int | None = None,
    ) -> None:
        """Answer the next `times` matching requests with a Failure Status instead of serving them.

        `method` is an HTTP method or "*"; `path_regex` is searched in the path
        (without the query string). Reason and message default to the ones the
        real server uses for the code. `retry_after` adds a Retry-After header,
        as the real server sends with 429; urllib3 then retries 429/503 by itself.
        """
        with self._lock:
            self._faults.append(
                _Fault(
                    method.upper(),
                    re.compile(path_regex),
                    status,
                    times,
                    reason or REASONS.get(status, ""),
                    message or f"injected failure ({status})",
                    retry_after,
                )
            )

    def hold_next(
        self,
        method: str,
        path_regex: str,
        times: int = 1,
        apply_first: bool = False,
        on_arrival: Callable[[RequestRecord], None] | None = None,
    ) -> Hold:
        """Hold the next `times` matching requests until the test releases or drops them.

        Matching is as in `fail_next` (a fault takes precedence); watches are
        never held. `on_arrival` runs on the request's handler thread as each
        one is held. See `Hold` for what release and drop do; `stop()` drops
        whatever is still held.
        """
        hold = Hold(method.upper(), re.compile(path_regex), times, apply_first, on_arrival)
        with self._lock:
            self._holds.append(hold)
        return hold

    @property
    def requests(self) -> list[RequestRecord]:
        """A snapshot of every HTTP request so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    def clear_requests(self) -> None:
        with self._lock:
            self._requests.clear()

    def access_used(self) -> set[tuple[str, str, str]]:
        """(api group, resource[/subresource], verb) of every request, in RBAC terms."""
        with self._lock:
            return {(r.api_group, r.resource, r.verb) for r in self._requests if r.verb}

    # -- state operations (lock held) ---------------------------------------------

    def _type_of(self, obj: dict, kind: str | None) -> ResourceType:
        if kind is not None:
            return resource_type(kind)
        try:
            return _BY_KIND[(obj["apiVersion"], obj["kind"])]
        except KeyError:
            raise KeyError("pass kind=... or give the object a known apiVersion and kind") from None

    @staticmethod
    def _ns(rt: ResourceType, namespace: str | None) -> str:
        return (namespace or "default") if rt.namespaced else ""

    def _items(self, rt: ResourceType, namespace: str | None) -> list[dict]:
        store = self._store[rt.key]
        return [store[k] for k in sorted(store) if not rt.namespaced or namespace in (None, k[0])]

    @staticmethod
    def _present(rt: ResourceType, obj: dict, deep: bool = True) -> dict:
        body = {"apiVersion": rt.api_version, "kind": rt.kind}
        body.update(copy.deepcopy(obj) if deep else obj)
        return body

    def _commit(self, rt: ResourceType, event_type: str, obj: dict, prev: dict | None) -> dict:
        """Bump the resourceVersion, store `obj`, record the watch event, wake watchers."""
        self._rv += 1
        meta = _meta(obj)
        meta["resourceVersion"] = str(self._rv)
        key = (meta.get("namespace", ""), meta["name"])
        if event_type == DELETED:
            self._store[rt.key].pop(key, None)
        else:
            self._store[rt.key][key] = obj
        self._history.append(_Event(self._rv, event_type, rt.key, key[0], obj, prev))
        if len(self._history) > self._history_limit:
            dropped = len(self._history) - self._history_limit
            self._compacted = self._history[dropped - 1].rv
            del self._history[:dropped]
        self._changed.notify_all()
        return obj

    def _clean(self, rt: ResourceType, obj: Any, namespace: str | None, name: str | None) -> dict:
        """A private copy of a request body, checked against the URL like the real server does."""
        if not isinstance(obj, dict):
            raise ApiError(400, "the body of the request is not a JSON object")
        obj = copy.deepcopy(obj)
        obj.pop("apiVersion", None)
        obj.pop("kind", None)
        meta = _meta(obj)
        if rt.namespaced:
            if meta.get("namespace") and meta["namespace"] != namespace:
                raise ApiError(
                    400,
                    "the namespace of the provided object does not match the namespace sent on the request",
                )
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        if name is not None and meta.get("name") and meta["name"] != name:
            raise ApiError(
                400,
                f"the name of the object ({meta['name']}) does not match the name on the URL ({name})",
            )
        if name is not None:
            meta["name"] = name
        return obj

    def _create(self, rt: ResourceType, namespace: str | None, body: Any) -> dict:
        obj = self._clean(rt, body, namespace, None)
        meta = obj["metadata"]
        if not meta.get("name"):
            if not meta.get("generateName"):
                raise ApiError(
                    422,
                    f'{rt.kind} "" is invalid: metadata.name: Required value: name or generateName is required',
                )
            alphabet = "bcdfghjklmnpqrstvwxz2456789"
            meta["name"] = meta["generateName"] + "".join(
                secrets.choice(alphabet) for _ in range(5)
            )
        if (meta.get("namespace", ""), meta["name"]) in self._store[rt.key]:
            raise already_exists(rt, meta["name"])
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = _now()
        meta.pop("resourceVersion", None)
        meta.pop("deletionTimestamp", None)
        if rt.key == "pods":
            obj.setdefault("spec", {}).setdefault("schedulerName", "default-scheduler")
            obj.setdefault("status", {}).setdefault("phase", "Pending")
        return self._commit(rt, ADDED, obj, None)

    def _existing(self, rt: ResourceType, namespace: str | None, name: str) -> dict:
        obj = self._store[rt.key].get((namespace or "", name))
        if obj is None:
            raise not_found(rt, name)
        return obj

    def _replace(
        self,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        body: Any,
        subresource: str | None,
    ) -> dict:
        """PUT. `subresource` "status" takes only the status, None keeps the status
        (for kinds with a status subresource), "test" takes everything unconditionally."""
        new = self._clean(rt, body, namespace, name)
        old = self._store[rt.key].get((namespace or "", name))
        if old is None:
            if rt.create_on_update and subresource is None:
                return self._create(rt, namespace, new)
            raise not_found(rt, name)
        new_meta = new["metadata"]
        if subresource != "test":
            rv = new_meta.get("resourceVersion")
            if rv and rv != old["metadata"]["resourceVersion"]:
                raise conflict(rt, name, STALE)
        uid = new_meta.get("uid")
        if uid and uid != old["metadata"]["uid"]:
            raise conflict(
                rt,
                name,
                f"Precondition failed: UID in precondition: {uid}, UID in object meta: {old['metadata']['uid']}",
            )
        if subresource == "status":
            result = copy.deepcopy(old)
            result["status"] = new.get("status", {})
        else:
            result = new
            for key in ("uid", "creationTimestamp", "generateName"):
                if key in old["metadata"]:
                    new_meta[key] = old["metadata"][key]
            if rt.has_status and subresource is None:
                result.pop("status", None)
                if "status" in old:
                    result["status"] = copy.deepcopy(old["status"])
        if _unchanged(result, old):
            return old  # as a real server: a write that changes nothing is not written
        return self._commit(rt, MODIFIED, result, old)

    def _patch(
        self,
        rt: ResourceType,
        namespace: str | None,
        name: str,
        patch: Any,
        content_type: str,
        subresource: str | None,
    ) -> dict:
        old = self._existing(rt, namespace, name)
        kind = content_type.split(";")[0].strip().lower()
        if kind == STRATEGIC_MERGE_PATCH:
            apply = strategic_merge_patch
        elif kind == MERGE_PATCH:
            apply = merge_patch
        else:
            raise ApiError(
                415,
                f"the emulator does not implement {kind or 'patches without a Content-Type'}; "
                f"use {STRATEGIC_MERGE_PATCH} or {MERGE_PATCH}",
            )
        if not isinstance(patch, dict):
            raise ApiError(400, "the patch is not a JSON object")
        rv = (patch.get("metadata") or {}).get("resourceVersion")
        if rv and rv != old["metadata"]["resourceVersion"]:
            raise conflict(rt, name, STALE)
        patched = apply(old, patch)
        body = {k: v for k, v in patched.items() if k not in ("apiVersion", "kind")}
        _meta(body)["resourceVersion"] = None
        return self._replace(rt, namespace, name, body, subresource)

    def _delete(
        self, rt: ResourceType, namespace: str | None, name: str, options: Any = None
    ) -> dict:
        """DELETE, honouring DeleteOptions preconditions; no graceful deletion."""
        old = self._existing(rt, namespace, name)
        preconditions = (options or {}).get("preconditions") or {}
        for label, key in (("UID", "uid"), ("ResourceVersion", "resourceVersion")):
            wanted = preconditions.get(key)
            if wanted and wanted != old["metadata"][key]:
                raise conflict(
                    rt,
                    name,
                    f"Precondition failed: {label} in precondition: {wanted}, "
                    f"{label} in object meta: {old['metadata'][key]}",
                )
        return self._commit(rt, DELETED, copy.deepcopy(old), old)

    def _bind(self, namespace: str, name: str, binding: Any) -> dict:
        """POST pods/binding, with the checks and side effects of the real BindingREST."""
        rt = RESOURCES["pods"]
        if not isinstance(binding, dict):
            raise ApiError(400, "the body of the request is not a JSON object")
        meta = binding.get("metadata") or {}
        if meta.get("name") and meta["name"] != name:
            raise ApiError(400, "name in URL does not match name in Binding object")
        if meta.get("namespace") and meta["namespace"] != namespace:
            raise ApiError(
                400,
                "the namespace of the provided object does not match the namespace sent on the request",
            )
        target = binding.get("target") or {}
        if not target.get("name"):
            raise ApiError(422, f'Binding "{name}" is invalid: target.name: Required value')
        if target.get("kind") not in (None, "", "Node"):
            raise ApiError(
                422,
                f"Binding \"{name}\" is invalid: target.kind: Invalid value: must be empty or 'Node'",
            )
        pod = self._existing(rt, namespace, name)
        uid = meta.get("uid")
        if uid and uid != pod["metadata"]["uid"]:
            raise conflict(
                rt,
                name,
                f"Precondition failed: UID in precondition: {uid}, UID in object meta: {pod['metadata']['uid']}",
                "pods/binding",
            )
        node = (pod.get("spec") or {}).get("nodeName")
        if node:
            raise conflict(
                rt, name, f'pod {name} is already assigned to node "{node}"', "pods/binding"
            )
        bound = copy.deepcopy(pod)
        bound.setdefault("spec", {})["nodeName"] = target["name"]
        if meta.get("annotations"):
            _meta(bound).setdefault("annotations", {}).update(meta["annotations"])
        conditions = bound.setdefault("status", {}).setdefault("conditions", [])
        scheduled = next((c for c in conditions if c.get("type") == "PodScheduled"), None)
        if scheduled is None:
            conditions.append(
                {
                    "type": "PodScheduled",
                    "status": "True",
                    "lastProbeTime": None,
                    "lastTransitionTime": _now(),
                }
            )
        elif scheduled.get("status") != "True":
            scheduled.update(status="True", lastTransitionTime=_now())
            scheduled.pop("reason", None)
            scheduled.pop("message", None)
        self._commit(rt, MODIFIED, bound, pod)
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "code": 201,
        }

    # -- HTTP serving ---------------------------------------------------------------

    def _route(self, method: str, path: str, query: dict[str, str]) -> _Route | None:
        """Map a request onto a resource the way the API server's paths work; None: no such path."""
        parts = [p for p in path.split("/") if p]
        if len(parts) >= 2 and parts[0] == "api":
            group, version, rest = "", parts[1], parts[2:]
        elif len(parts) >= 3 and parts[0] == "apis":
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            return None
        namespace: str | None = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        if not rest or len(rest) > 3:
            return None
        rt = _BY_PATH.get((group, version, rest[0]))
        if rt is None or (namespace is not None and not rt.namespaced):
            return None
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        if sub is not None and sub not in _SUBRESOURCES.get(rt.key, frozenset()):
            return None
        if rt.namespaced and name is not None and namespace is None:
            return None
        if name is None:
            verbs = {"GET": "list", "POST": "create", "DELETE": "deletecollection"}
            verb = verbs.get(method, "")
            if verb == "list" and query.get("watch") in ("true", "1"):
                verb = "watch"
        else:
            verbs = {
                "GET": "get",
                "PUT": "update",
                "PATCH": "patch",
                "DELETE": "delete",
                "POST": "create",
            }
            verb = verbs.get(method, "")
        return _Route(rt, namespace, name, sub, verb)

    def _serve(
        self, route: _Route, method: str, query: dict[str, str], body: Any, content_type: str
    ) -> tuple[int, dict]:
        """Answer one non-watch request: (HTTP status, JSON body). Raises ApiError."""
        rt, ns, name, sub = route.rt, route.namespace, route.name, route.subresource
        if "dryRun" in query:
            raise ApiError(400, "the emulator does not implement dryRun")
        allowed = {
            (False, None): {"GET", "POST"} if (ns is not None or not rt.namespaced) else {"GET"},
            (True, None): {"GET", "PUT", "PATCH", "DELETE"},
            (True, "status"): {"GET", "PUT", "PATCH"},
            (True, "binding"): {"POST"},
        }
        if method not in allowed.get((name is not None, sub), set()):
            raise ApiError(405, "the server does not allow this method on the requested resource")
        with self._lock:
            if name is None and method == "GET":
                selected = _selector(rt, query)
                items = [
                    self._present(rt, o, deep=False) for o in self._items(rt, ns) if selected(o)
                ]
                for item in items:  # list items carry no apiVersion/kind on a real server
                    del item["apiVersion"], item["kind"]
                return 200, {
                    "kind": f"{rt.kind}List",
                    "apiVersion": rt.api_version,
                    "metadata": {"resourceVersion": str(self._rv)},
                    "items": items,
                }
            if name is None:
                return 201, self._present(rt, self._create(rt, ns, body), deep=False)
            if sub == "binding":
                return 201, self._bind(ns or "", name, body)
            if method == "GET":
                return 200, self._present(rt, self._existing(rt, ns, name), deep=False)
            if method == "PUT":
                return 200, self._present(rt, self._replace(rt, ns, name, body, sub), deep=False)
            if method == "PATCH":
                patched = self._patch(rt, ns, name, body, content_type, sub)
                return 200, self._present(rt, patched, deep=False)
            deleted = self._delete(rt, ns, name, body if isinstance(body, dict) else None)
            if rt.returns_deleted_object:
                return 200, self._present(rt, deleted, deep=False)
            return 200, {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Success",
                "details": {**_details(rt, name), "uid": deleted["metadata"]["uid"]},
            }

    def _take_fault(self, method: str, path: str) -> _Fault | None:
        with self._lock:
            for fault in self._faults:
                if fault.method in ("*", method) and fault.pattern.search(path):
                    fault.remaining -= 1
                    if fault.remaining <= 0:
                        self._faults.remove(fault)
                    return fault
        return None

    def _take_hold(self, method: str, path: str) -> Hold | None:
        with self._lock:
            for hold in self._holds:
                if (
                    hold.remaining > 0
                    and hold.method in ("*", method)
                    and hold.pattern.search(path)
                ):
                    hold.remaining -= 1  # kept in the list: stop() drops what it holds
                    return hold
        return None

    def _record(self, record: RequestRecord) -> None:
        with self._changed:
            self._requests.append(record)
            self._changed.notify_all()

    def _watch(
        self,
        route: _Route,
        query: dict[str, str],
        client_gone: Callable[[], bool],
    ) -> Generator[list[dict], None, None]:
        """Batches of watch events for one stream, ending when the stream should end.

        Validates the request before the first batch (raising ApiError), so
        the caller can still answer with an error status.
        """
        rt, ns = route.rt, route.namespace
        selected = _selector(rt, query)
        raw_rv = query.get("resourceVersion", "")
        try:
            start = int(raw_rv) if raw_rv not in ("", "0") else None
        except ValueError:
            raise ApiError(400, f"invalid resourceVersion: {raw_rv!r}") from None
        try:
            timeout = float(query["timeoutSeconds"]) if query.get("timeoutSeconds") else None
        except ValueError:
            raise ApiError(400, "invalid timeoutSeconds") from None
        deadline = None if timeout is None else time.monotonic() + timeout
        return self._watch_stream(rt, ns, selected, start, deadline, client_gone)

    def _watch_stream(
        self,
        rt: ResourceType,
        ns: str | None,
        selected: Callable[[dict], bool],
        start: int | None,
        deadline: float | None,
        client_gone: Callable[[], bool],
    ) -> Generator[list[dict], None, None]:
        def expired(requested: int) -> dict:
            message = f"too old resource version: {requested} ({self._compacted})"
            return {"type": ERROR, "object": failure_status(410, message, "Expired")}

        def convert(event: _Event) -> dict | None:
            if event.resource != rt.key or (ns is not None and event.namespace != ns):
                return None
            now = selected(event.obj)
            if event.type != MODIFIED:
                kind = event.type if now else None
                obj = event.obj
            else:
                before = event.prev is not None and selected(event.prev)
                kind = {(True, True): MODIFIED, (False, True): ADDED, (True, False): DELETED}.get(
                    (before, now)
                )
                obj = event.obj
                if kind == DELETED and event.prev is not None:
                    # Leaving the selection: the last state that matched, at the new version.
                    obj = copy.deepcopy(event.prev)
                    obj["metadata"]["resourceVersion"] = str(event.rv)
            return (
                None
                if kind is None
                else {"type": kind, "object": self._present(rt, obj, deep=False)}
            )

        with self._changed:
            expirations, endings = self._expirations, self._endings
            if start is None:
                first = [
                    {"type": ADDED, "object": self._present(rt, o, deep=False)}
                    for o in self._items(rt, ns)
                    if selected(o)
                ]
                position = self._rv
            elif start < self._compacted:
                first, position = [expired(start)], -1
            else:
                visible = self._visible()
                first = [
                    c
                    for e in self._history_between(start, visible)
                    if (c := convert(e)) is not None
                ]
                position = max(start, visible)
        if first:
            yield first
        if position < 0:
            return
        while True:
            batch: list[dict] = []
            with self._changed:
                if self._stopping or endings != self._endings:
                    return
                if expirations != self._expirations or position < self._compacted:
                    yield [expired(position)]
                    return
                visible = self._visible()
                if visible > position:
                    batch = [
                        c
                        for e in self._history_between(position, visible)
                        if (c := convert(e)) is not None
                    ]
                    position = visible
                elif deadline is not None and time.monotonic() >= deadline:
                    return
                else:
                    wait = 0.25 if deadline is None else min(0.25, deadline - time.monotonic())
                    self._changed.wait(max(wait, 0.0))
            if batch:
                yield batch
            elif client_gone():
                return

    def _watch_opened(self, delta: int) -> None:
        """Count open streams; stop() waits until each has written its final chunk."""
        with self._changed:
            self._open_watches += delta
            self._changed.notify_all()


def stop_informer(informer: Any, server: ApiServer, timeout: float = 5.0) -> None:
    """`informer.stop()` that cannot hang on a watch whose response has not arrived yet.

    The client's `SharedInformer.stop()` interrupts its watch through
    `Watch.stop()`, which can only shut down a response it already holds; if
    stop() lands between sending the watch request and receiving the answer,
    it waits for the next event or the server's watch timeout. Ending the
    streams server-side, as that timeout would, lets it return.
    """
    stopper = threading.Thread(target=informer.stop, name="stop-informer", daemon=True)
    stopper.start()
    deadline = time.monotonic() + timeout
    while stopper.is_alive():
        if time.monotonic() > deadline:
            raise TimeoutError(f"informer did not stop within {timeout}s")
        server.end_watches()
        stopper.join(0.05)


class _HTTPServer(ThreadingHTTPServer):
    """Keeps track of open connections so stop() can close idle keep-alive ones too."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], handler: type, emulator: ApiServer) -> None:
        self.emulator = emulator
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        with self._connections_lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError | TimeoutError) or self.emulator._stopping:
            return
        self.emulator.internal_errors.append(traceback.format_exc())


class _Handler(BaseHTTPRequestHandler):
    """HTTP/1.1 with keep-alive, as the client's urllib3 pool expects."""

    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the request log is `ApiServer.requests`."""

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def do_PATCH(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    def _dispatch(self) -> None:
        emulator = self.server.emulator
        method = self.command
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        content_type = self.headers.get("Content-Type", "")
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body: Any = None
        record = RequestRecord(
            method, url.path, query, content_type, None, self.headers.get("User-Agent", "")
        )
        route = emulator._route(method, url.path, query)
        if route is not None:
            record.api_group, record.resource, record.verb = (
                route.rt.group,
                route.resource,
                route.verb,
            )
        try:
            if raw:
                try:
                    body = record.body = json.loads(raw)
                except ValueError:
                    raise ApiError(400, "the request body is not valid JSON") from None
            fault = emulator._take_fault(method, url.path)
            if fault is not None:
                headers = (
                    {} if fault.retry_after is None else {"Retry-After": str(fault.retry_after)}
                )
                self._answer(
                    record,
                    fault.status,
                    failure_status(fault.status, fault.message, fault.reason),
                    headers,
                )
                return
            if route is None and method == "GET" and url.path == "/version":
                self._answer(record, 200, emulator.version_info())
                return
            if route is None:
                raise ApiError(404, "the server could not find the requested resource")
            if route.verb == "watch":
                self._stream(record, route, query)
                return
            hold = emulator._take_hold(method, url.path)
            if hold is not None:
                self._held(record, hold, route, method, query, body, content_type)
                return
            status, answer = emulator._serve(route, method, query, body, content_type)
            self._answer(record, status, answer)
        except ApiError as exc:
            self._answer(record, exc.code, exc.status())
        except Exception as exc:
            emulator.internal_errors.append(traceback.format_exc())
            self._answer(record, 500, failure_status(500, f"emulator bug: {exc!r}"))

    def _held(
        self,
        record: RequestRecord,
        hold: Hold,
        route: _Route,
        method: str,
        query: dict[str, str],
        body: Any,
        content_type: str,
    ) -> None:
        """Serve a held request: apply it (before or after the hold), then answer or drop it."""
        emulator = self.server.emulator

        def serve() -> tuple[int, dict]:
            try:
                return emulator._serve(route, method, query, body, content_type)
            except ApiError as exc:
                return exc.code, exc.status()

        served = serve() if hold.apply_first else None
        if not hold._arrive(record):
            record.status = served[0] if served is not None else 0
            emulator._record(record)
            self.close_connection = True
            return
        if served is None:
            served = serve()
        self._answer(record, *served)

    def _answer(
        self, record: RequestRecord, status: int, body: dict, headers: dict | None = None
    ) -> None:
        """Record the request as answered, then send the answer.

        A client that went away before the answer reached it (killed mid-request) is not the
        emulator's failure: the request was served and is recorded once, with the status it
        got, and the connection is closed.
        """
        record.status = status
        self.server.emulator._record(record)
        data = json.dumps(body, separators=(",", ":")).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            self.close_connection = True

    def _client_gone(self) -> bool:
        """True when the client closed the connection (readable with nothing to read)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def _stream(self, record: RequestRecord, route: _Route, query: dict[str, str]) -> None:
        emulator = self.server.emulator
        batches = emulator._watch(route, query, self._client_gone)
        record.status = 200
        emulator._record(record)
        opened = False
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            # Counted once the client has its 200, so `open_watches` means "watching".
            emulator._watch_opened(1)
            opened = True
            for batch in batches:
                for event in batch:
                    line = json.dumps(event, separators=(",", ":")).encode() + b"\n"
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            self.close_connection = True
        finally:
            batches.close()
            if emulator._stopping:
                self.close_connection = True
            if opened:
                emulator._watch_opened(-1)


__all__ = [
    "MERGE_PATCH",
    "RESOURCES",
    "STRATEGIC_MERGE_PATCH",
    "ApiError",
    "ApiServer",
    "Hold",
    "RequestRecord",
    "ResourceType",
    "merge_patch",
    "stop_informer",
    "strategic_merge_patch",
]
