"""Read a simulated cluster from ordinary Kubernetes manifests.

The files are the ones people already have (`kubectl get nodes -o yaml`
output, Deployment YAML from a repository), so the simulation can start
from a copy of a real cluster. Every error names the file, the document,
the object and the field, because a manifest that fails to load is the
first thing a newcomer meets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import uuid4

import structlog

from eventsched.cluster.controllers import WORKLOAD_KINDS, UidFactory, expand_workload
from eventsched.cluster.manifestfiles import Document, manifest_files, read_documents
from eventsched.cluster.naming import check_name, rfc3339, stable_token
from eventsched.cluster.priorities import PriorityClasses
from eventsched.cluster.types import LoadedCluster
from eventsched.model import ManifestError, Node, Pod
from eventsched.model.accounting import LEGACY_ACCOUNTING, Accounting
from eventsched.model.admission import Admission, admitted
from eventsched.model.customkinds import CUSTOM_KINDS
from eventsched.model.objects import object_from_manifest
from eventsched.model.resources import PODS

log = structlog.get_logger(__name__)

NO_MERGE = Admission()

#: What the kubelet reports as `pods` when `maxPods` is not configured. Hand-written
#: Node manifests often leave it out, and a node without it would fit no pod at all.
KUBELET_DEFAULT_MAX_PODS = 110

#: Workloads that make pods but are not expanded; worth a warning, not an error.
_NOT_EXPANDED = ("DaemonSet", "Job", "CronJob", "ReplicationController")
#: Kinds the scheduler observes as they are (plugins read their labels, selectors, or
#: the volume plugins their claims, volumes, classes and attach limits, or preemption
#: its disruption budgets); and so are the custom kinds plugins declare (`CUSTOM_KINDS`:
#: CapacityScheduling's quotas, NodeResourceTopologyMatch's nodes' NUMA topology).
_OBSERVED = (
    "Namespace",
    "Service",
    "PersistentVolumeClaim",
    "PersistentVolume",
    "StorageClass",
    "CSINode",
    "CSIDriver",
    "CSIStorageCapacity",
    "PodDisruptionBudget",
)


@dataclass(frozen=True, slots=True)
class LoadProgress:
    """How far `load_manifests` got: files and bytes read of all, objects found so far."""

    files: int
    total_files: int
    bytes: int
    total_bytes: int
    documents: int


def load_manifests(
    paths: Sequence[str | Path] | str | Path,
    *,
    now: datetime | None = None,
    on_progress: Callable[[LoadProgress], None] | None = None,
    accounting: Accounting = LEGACY_ACCOUNTING,
    admission: Admission = NO_MERGE,
) -> LoadedCluster:
    """Nodes and pods from files and directories (searched recursively, in sorted order).

    Pods without `metadata.uid` get a fresh uid and those without
    `creationTimestamp` get `now` (default: the current time), as the API
    server would. Raises `ManifestError` for content that cannot be read (a symlink
    that loops among them) and `FileNotFoundError` for a path that does not exist or
    holds no manifests. `on_progress` is told how far the reading got as it goes
    (at once, then every 2,000 mappings or lists parsed, and after each file).
    `accounting`: how the pods' resources count (the profiles' `Features.accounting`).
    `admission`: the label-key merges the API server of the version decided as does when it
    creates a pod (model/admission.py); none by default.
    """
    found = manifest_files(paths)
    created = rfc3339(now or datetime.now(UTC))
    reader = _FileReader(found.files, on_progress)
    loaded = _build(reader, created, lambda _: str(uuid4()), accounting, admission)
    loaded.skipped[:0] = [*found.skipped, *reader.empty]
    log.info(
        "manifests loaded",
        files=len(found.files),
        documents=reader.documents,
        nodes=len(loaded.nodes),
        pods=len(loaded.pods),
    )
    return loaded


class _FileReader:
    """Reads the files one after another, telling `on_progress` how far it got."""

    def __init__(
        self, files: Sequence[Path], on_progress: Callable[[LoadProgress], None] | None
    ) -> None:
        self.files = files
        self.sizes = [f.stat().st_size for f in files]
        self.on_progress = on_progress
        self.files_read = 0
        self.bytes_read = 0
        self.documents = 0
        #: The size of the file being read (0 between files).
        self.size = 0
        #: A note for each file read that holds no objects.
        self.empty: list[str] = []

    def read_all(self) -> Iterator[Document]:
        """Every document, one at a time; `empty` gets a note for each file that holds none."""
        self.files_read = self.bytes_read = self.documents = 0
        self.empty = []
        self._told(0, 0)  # the total at once, before the first file's first object
        for path, size in zip(self.files, self.sizes, strict=True):
            self.size = size
            read = 0
            for document in read_documents(path, self._told):
                read += 1
                yield document
            if not read:
                self.empty.append(f"{path}: no objects in the file")
            self.files_read += 1
            self.bytes_read += size
            self.documents += read
            self.size = 0
            self._told(0, 0)

    def _told(self, chars: int, parsed: int) -> None:
        """How far: `chars` into the file being read, `parsed` documents in it."""
        if self.on_progress is not None:
            self.on_progress(
                LoadProgress(
                    self.files_read,
                    len(self.files),
                    self.bytes_read + min(chars, self.size),
                    sum(self.sizes),
                    self.documents + parsed,
                )
            )


def _build(
    reader: _FileReader,
    created: str,
    new_uid: UidFactory,
    accounting: Accounting,
    admission: Admission = NO_MERGE,
) -> LoadedCluster:
    """Nodes and pods from the documents as they are read, refusing duplicates.

    Each object is built as soon as its document is parsed, so the parsed documents do
    not pile up. Errors come as if the PriorityClasses had been read first, after every
    document parsed: the first error of a build is kept while the rest is read (a YAML
    error or a bad PriorityClass after it is the one reported). A PriorityClass that
    comes after a pod (which may name it) has the files read again, classes known.
    """
    builder = _Builder(LoadedCluster(), created, new_uid, PriorityClasses(), accounting, admission)
    classes: list[tuple[str, Mapping[str, Any]]] = []
    failure: ManifestError | None = None
    late = False
    for doc in reader.read_all():
        if doc.obj.get("kind") == "PriorityClass":
            classes.append((doc.location, doc.obj))
            late = late or builder.made_pods
            if failure is None and not late:
                try:
                    builder.priorities = PriorityClasses.from_objects(classes)
                except ManifestError as exc:
                    failure = exc
        elif failure is None:
            try:
                builder.add(doc)
            except ManifestError as exc:
                failure = exc
    priorities = PriorityClasses.from_objects(classes)
    if late:
        builder = _Builder(LoadedCluster(), created, new_uid, priorities, accounting, admission)
        for doc in _FileReader(reader.files, None).read_all():
            builder.add(doc)
    elif failure is not None:
        raise failure
    return builder.loaded


@dataclass(slots=True)
class _Builder:
    """Adds each document's objects to `loaded`, remembering where each was defined."""

    loaded: LoadedCluster
    created: str
    new_uid: UidFactory
    priorities: PriorityClasses
    accounting: Accounting = LEGACY_ACCOUNTING
    admission: Admission = NO_MERGE
    node_sources: dict[str, str] = field(default_factory=dict)
    pod_sources: dict[str, str] = field(default_factory=dict)
    #: Whether a pod was made (with the PriorityClasses known then).
    made_pods: bool = False

    def add(self, doc: Document) -> None:
        """The objects of one document (a PriorityClass is the caller's)."""
        kind = doc.obj.get("kind")
        if not isinstance(kind, str) or not kind:
            raise ManifestError(doc.location, "kind", "is required (e.g. Node, Pod, Deployment)")
        try:
            self._add(doc, kind)
        except ManifestError as exc:
            raise ManifestError(f"{doc.location}: {exc.where}", exc.field, exc.problem) from exc
        except (AttributeError, TypeError, ValueError) as exc:
            # The model assumes the shapes the API server guarantees; a hand-written
            # manifest can break them (a string where a list belongs).
            raise ManifestError(
                f"{doc.location}: {kind} {_name_of(doc.obj)}".rstrip(),
                "(structure)",
                f"a field has an unexpected shape ({exc})",
            ) from exc

    def _add(self, doc: Document, kind: str) -> None:
        loaded, new_uid = self.loaded, self.new_uid
        if kind == "Node":
            node = _read_node(doc.obj, new_uid)
            _register(self.node_sources, node.name, doc.location, f"Node {node.name}", "Node")
            loaded.nodes.append(node)
        elif kind == "Pod":
            self.made_pods = True
            pod = _read_pod(
                doc.obj,
                doc.location,
                self.created,
                new_uid,
                self.priorities,
                self.accounting,
                self.admission,
            )
            _register(self.pod_sources, pod.key, doc.location, f"Pod {pod.key}", "Pod")
            loaded.pods.append(pod)
        elif kind in WORKLOAD_KINDS:
            self.made_pods = True
            expansion = expand_workload(doc.obj, new_uid, self.priorities)
            for manifest in expansion.pods:
                pod = _read_expanded_pod(
                    manifest,
                    expansion.where,
                    self.created,
                    new_uid,
                    self.accounting,
                    self.admission,
                )
                label = f"{expansion.where} (pod {pod.name})"
                _register(self.pod_sources, pod.key, doc.location, label, "Pod")
                loaded.pods.append(pod)
            loaded.objects.append(object_from_manifest(expansion.controller))
        elif kind in _OBSERVED or kind in CUSTOM_KINDS:
            loaded.objects.append(object_from_manifest(doc.obj))
        elif kind in _NOT_EXPANDED:
            loaded.skipped.append(
                f"{doc.location}: kind {kind} is not expanded into pods by the simulation"
            )
        elif kind.lower() in _KNOWN_LOWER:
            meant = _KNOWN_LOWER[kind.lower()]
            loaded.skipped.append(
                f"{doc.location}: kind {kind}: kinds are case-sensitive; did you mean {meant}?"
            )
        else:
            loaded.unused[kind] = loaded.unused.get(kind, 0) + 1


#: The kinds the simulation reads, by their lower-case spelling (to catch `kind: node`).
_KNOWN_LOWER = {k.lower(): k for k in ("Node", "Pod", "PriorityClass", *WORKLOAD_KINDS)}


def _register(sources: dict[str, str], key: str, location: str, label: str, kind: str) -> None:
    """Remember where `key` was defined; a second definition is an error naming both."""
    source = f"{location}: {label}"
    first = sources.setdefault(key, source)
    if first != source:
        raise ManifestError(
            label, "metadata.name", f"duplicate: {kind} {key} is also defined at {first}"
        )


def _name_of(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    return str(meta.get("name") or "") if isinstance(meta, Mapping) else ""


def _require_mappings(obj: Mapping[str, Any], where: str, *fields: str) -> None:
    for name in fields:
        value = obj.get(name)
        if value is not None and not isinstance(value, Mapping):
            raise ManifestError(where, name, f"must be a mapping (got {type(value).__name__})")


def _read_node(obj: Mapping[str, Any], new_uid: UidFactory) -> Node:
    _require_mappings(obj, "Node", "metadata", "spec", "status")
    name = check_name("Node", "metadata.name", (obj.get("metadata") or {}).get("name"))
    node = Node.from_manifest(obj)
    if PODS not in node.allocatable:
        log.debug("node without pods allocatable; using the kubelet default", node=name)
        node = replace(node, allocatable={**node.allocatable, PODS: KUBELET_DEFAULT_MAX_PODS})
    if not node.uid:
        node = replace(node, uid=new_uid(f"Node/{name}"))
    return node


def _read_pod(
    obj: Mapping[str, Any],
    location: str,
    created: str,
    new_uid: UidFactory,
    priorities: PriorityClasses,
    accounting: Accounting = LEGACY_ACCOUNTING,
    admission: Admission = NO_MERGE,
) -> Pod:
    _require_mappings(obj, "Pod", "metadata", "spec", "status")
    meta = dict(obj.get("metadata") or {})
    if not meta.get("name") and isinstance(meta.get("generateName"), str):
        # As the API server completes generateName, but from the location, not at random.
        meta["name"] = f"{meta['generateName']}{stable_token(location)}"
    name = check_name("Pod", "metadata.name", meta.get("name"))
    namespace = check_name(
        f"Pod {name}", "metadata.namespace", meta.get("namespace") or "default", label=True
    )
    spec = obj.get("spec") or {}
    spec = priorities.resolve(spec, f"Pod {namespace}/{name}")
    stamped = _stamped({**obj, "metadata": meta, "spec": spec}, created, new_uid, admission)
    return Pod.from_manifest(stamped, accounting=accounting)


def _read_expanded_pod(
    manifest: dict[str, Any],
    controller: str,
    created: str,
    new_uid: UidFactory,
    accounting: Accounting = LEGACY_ACCOUNTING,
    admission: Admission = NO_MERGE,
) -> Pod:
    """A pod made from a template; its errors point into the controller's template."""
    try:
        return Pod.from_manifest(
            _stamped(manifest, created, new_uid, admission), accounting=accounting
        )
    except ManifestError as exc:
        raise ManifestError(controller, f"spec.template.{exc.field}", exc.problem) from exc


def _stamped(
    obj: dict[str, Any], created: str, new_uid: UidFactory, admission: Admission = NO_MERGE
) -> dict[str, Any]:
    """What the API server adds on create: uid, creationTimestamp, requests from limits, and
    the label keys merged into selectors where `admission` says its version does."""
    obj = admitted(obj, admission)
    meta = dict(obj.get("metadata") or {})
    namespace = meta.get("namespace") or "default"
    meta.setdefault("creationTimestamp", created)
    if not meta.get("uid"):
        meta["uid"] = new_uid(f"Pod/{namespace}/{meta.get('name')}")
    spec = obj.get("spec")
    if isinstance(spec, Mapping):
        spec = {
            **spec,
            **{
                key: [_requests_defaulted(c) for c in spec[key]]
                for key in ("containers", "initContainers")
                if isinstance(spec.get(key), list)
            },
        }
    return {**obj, "metadata": meta, "spec": spec}


def _requests_defaulted(container: Any) -> Any:
    """A resource with a limit and no request requests the limit (API server defaulting).

    This is how a GPU is usually asked for: `limits: {nvidia.com/gpu: 1}` alone.
    """
    if not isinstance(container, Mapping):
        return container
    resources = container.get("resources")
    if not isinstance(resources, Mapping):
        return container
    limits, requests = resources.get("limits"), resources.get("requests")
    if not isinstance(limits, Mapping) or not limits:
        return container
    if requests is not None and not isinstance(requests, Mapping):
        return container
    requests = requests or {}
    merged = {**requests, **{name: value for name, value in limits.items() if name not in requests}}
    return {**container, "resources": {**resources, "requests": merged}}
