"""The recorder's work on one scenario: create it, wait for kube-scheduler's cache, schedule
the pending pod (under each ablation profile, then default-scheduler), read the answer,
delete everything (see record.py for the whole run)."""

from __future__ import annotations

import copy
import sys
import time
from collections.abc import Collection
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from eventsched.benchmarks.controlplane import ControlPlane
from tests.differential.builders import admitted
from tests.differential.kubeapi import GRACE_0, MERGE_PATCH, KubeApi, cache_size, wait_for
from tests.differential.kubelog import LogReader
from tests.differential.scenario import (
    LEGACY_VERSION,
    Answer,
    ablation_key,
    ablation_sets,
    is_unique,
    profile_name,
    uses,
)

PROBE_RESOURCE = "differential.test/probe"
NOT_READY = "node.kubernetes.io/not-ready"
#: Extra objects are created in this order (what they refer to first).
OBJECT_ORDER = (
    "PriorityClass",
    "RuntimeClass",
    "StorageClass",
    "CSIDriver",
    "CSINode",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Service",
    "ReplicaSet",
    "StatefulSet",
    "ReplicationController",
    "PodDisruptionBudget",
    "ElasticQuota",
    "NodeResourceTopology",
)


class Recorder:
    def __init__(
        self,
        cp: ControlPlane,
        api: KubeApi,
        log: LogReader,
        metrics_url: str,
        version: str = LEGACY_VERSION,
    ) -> None:
        self.cp = cp
        self.api = api
        self.log = log
        self.metrics_url = metrics_url
        #: The Kubernetes version recorded: which plugins the ablation profiles disable.
        self.version = version
        self.probes = 0

    # -- one scenario -------------------------------------------------------------------

    def record(self, s: dict[str, Any]) -> dict[str, Any]:
        self.setup(s)
        ablations: dict[str, Any] = {}
        for k, plugins in enumerate(ablation_sets(uses(s, self.version))):
            answer = self.run(s, profile_name(plugins), f"-x{k}")
            ablations[ablation_key(plugins)] = answer.to_json()
            if answer.node is not None:
                # Start again rather than trust the cache after the pod's deletion: its
                # NodeInfo.UsedPorts is a set, so removing a pod that shared a host port
                # with another (possible without NodePorts) removes the other's port too;
                # and the binding may have bound a claim.
                self.teardown(s)
                self.setup(s)
        answer = self.run(s, None, "")
        self.teardown(s)
        return {**s, "answer": answer.to_json(), "ablations": ablations}

    def record_answer(self, s: dict[str, Any]) -> dict[str, Any]:
        """The default answer only (no ablations), under the pending pod's own
        schedulerName: for scenarios whose plugins eventsched all has."""
        self.setup(s)
        answer = self.run(s, None, "")
        self.teardown(s)
        return {**s, "answer": answer.to_json(), "ablations": {}}

    def record_or_report(self, s: dict[str, Any], ablate: bool = True) -> dict[str, Any]:
        """`record` (or `record_answer` without `ablate`), tried twice (after cleaning up);
        a scenario that fails both times is kept with `answer: null` and the error, which
        the comparison reports as a failure."""
        error = ""
        for _ in range(2):
            try:
                return self.record(s) if ablate else self.record_answer(s)
            except Exception as exc:
                error = f"{type(exc).__name__}: {exc}"
                print(f"{s['id']}: {error}", file=sys.stderr, flush=True)
                try:
                    self.teardown(s)
                except Exception as again:
                    print(f"{s['id']}: cleanup failed too: {again}", file=sys.stderr, flush=True)
        return {**s, "answer": None, "ablations": {}, "error": error}

    def setup(self, s: dict[str, Any]) -> None:
        for ns in s["namespaces"]:
            self._ensure_namespace(ns["name"], ns.get("labels") or {})
        objects = sorted(s["objects"], key=lambda o: OBJECT_ORDER.index(o["kind"]))
        for obj in objects:
            self.api.create(obj)
        # One at a time, in order: v1.28's cache gives a node's images the count of nodes
        # holding them when that node was last added or updated (ImageLocality reads it),
        # so the order nodes are created in is part of the scenario.
        for manifest in s["nodes"]:
            self.cp.make_ready_nodes([copy.deepcopy(manifest)])
        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(self._create_pod, s["pods"]))
        self.wait_cache(len(s["nodes"]), len(s["pods"]))
        self.sync_probe(len(s["nodes"]), _taint_keys(s["nodes"]))

    def teardown(self, s: dict[str, Any]) -> None:
        spaces = _namespaces(s)
        for ns in spaces:
            self.api.call("DELETE", f"/api/v1/namespaces/{ns}/pods", GRACE_0)
        wait_for(
            lambda: all(
                not self.api.call("GET", f"/api/v1/namespaces/{ns}/pods")["items"] for ns in spaces
            ),
            30,
            "pods deleted",
        )
        self.api.call("DELETE", "/api/v1/nodes")
        for obj in reversed(s["objects"]):
            meta = obj["metadata"]
            self.api.delete_now(obj["kind"], meta["name"], meta.get("namespace"))
        for obj in s["objects"]:
            self._wait_gone(obj["kind"], obj["metadata"]["name"], obj["metadata"].get("namespace"))
        self.wait_cache(0, 0)

    # -- the pending pod -----------------------------------------------------------------

    def run(self, s: dict[str, Any], scheduler: str | None, suffix: str) -> Answer:
        """Create the pending pod (renamed with `suffix`, under `scheduler` when given) and
        wait for kube-scheduler's answer; an ablation's pod is deleted again."""
        manifest = copy.deepcopy(s["pending"])
        manifest["metadata"]["name"] += suffix
        if scheduler is not None:
            manifest["spec"]["schedulerName"] = scheduler
        meta = manifest["metadata"]
        ns, name = meta.get("namespace", "default"), meta["name"]
        offset = self.log.offset()
        created = self.api.create({"apiVersion": "v1", "kind": "Pod", **manifest})
        _check_stored(manifest, created)
        uid = created["metadata"]["uid"]
        volumes = _has_volumes(s)
        decided = wait_for(lambda: self._decided(ns, name, uid, volumes), 90, f"{s['id']}: {name}")
        answer = self._answer(decided, offset, f"{ns}/{name}")
        if scheduler is not None:
            self._remove_pod(ns, name)
        return answer

    def _decided(self, ns: str, name: str, uid: str, volumes: bool) -> dict[str, Any] | None:
        pod = self.api.call("GET", self.api.path("Pod", ns, name))
        if pod["spec"].get("nodeName"):
            return {"node": pod["spec"]["nodeName"]}
        events = self.api.call(
            "GET",
            f"/api/v1/namespaces/{ns}/events?fieldSelector=involvedObject.uid%3D{uid},"
            "reason%3DFailedScheduling",
        )["items"]
        conditions = [
            c
            for c in (pod.get("status") or {}).get("conditions") or []
            if c.get("type") == "PodScheduled" and c.get("status") == "False"
        ]
        if events and conditions:
            return {
                "node": None,
                "message": events[0]["message"],
                "condition": conditions[0]["message"],
            }
        if volumes:
            self._complete_volume_bindings()
        return None

    def _answer(self, decided: dict[str, Any], offset: int, key: str) -> Answer:
        attempts = self.log.attempts(offset, key)
        if not attempts:
            raise RuntimeError(
                f"{key}: no 'Attempting to schedule pod' line in kube-scheduler's log"
            )
        node = decided["node"]
        attempt = attempts[-1] if node is not None else attempts[0]
        if node is None:
            feasible: list[str] = []
        elif attempt.total:
            feasible = sorted(attempt.total)
        else:
            feasible = [node]
        return Answer(
            node=node,
            message=decided.get("message"),
            feasible=feasible,
            scores={n: dict(sorted(p.items())) for n, p in sorted(attempt.scores.items())},
            total=dict(sorted(attempt.total.items())),
            unique=node is not None and is_unique(attempt.total, feasible),
            condition=decided.get("condition"),
            attempts=len(attempts),
        )

    def _wait_gone(self, kind: str, name: str, namespace: str | None) -> None:
        wait_for(lambda: self.api.gone(kind, name, namespace), 30, f"{kind} {name} deleted")

    def _remove_pod(self, ns: str, name: str) -> None:
        self.api.delete_now("Pod", name, ns)
        wait_for(lambda: self.api.gone("Pod", name, ns), 30, f"pod {ns}/{name} deleted")

    def _complete_volume_bindings(self) -> None:
        """What the PV controller (not running here) does after kube-scheduler's PreBind set
        a volume's claimRef: bind the claim, so PreBind's wait ends and the pod is bound."""
        for pv in self.api.call("GET", "/api/v1/persistentvolumes")["items"]:
            ref = pv["spec"].get("claimRef") or {}
            if not ref.get("uid"):
                continue
            path = self.api.path("PersistentVolumeClaim", ref["namespace"], ref["name"])
            status, claim = self.api.request("GET", path)
            if status != 200 or claim["spec"].get("volumeName"):
                continue
            patch = {
                "metadata": {"annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
                "spec": {"volumeName": pv["metadata"]["name"]},
            }
            self.api.call("PATCH", path, patch, MERGE_PATCH)
            self.api.call("PATCH", path + "/status", {"status": {"phase": "Bound"}}, MERGE_PATCH)

    # -- waiting for kube-scheduler ----------------------------------------------------------

    def wait_cache(self, nodes: int, pods: int) -> None:
        want = {"nodes": nodes, "pods": pods, "assumed_pods": 0}

        def seen() -> bool:
            size = cache_size(self.metrics_url)
            return all(size.get(k) == v for k, v in want.items())

        wait_for(seen, 60, f"kube-scheduler's cache holding {want}", every=0.1)

    def sync_probe(self, nodes: int, taint_keys: Collection[str] = ()) -> None:
        """A pod that fits nowhere: its FailedScheduling message must count every node and
        show none still tainted not-ready (so the scheduler saw each node's last update).

        The probe tolerates the scenario's own taints (`taint_keys`), so an untolerated
        taint in its message is the not-ready one: v1.28 names it
        (`node(s) had untolerated taint {node.kubernetes.io/not-ready: }`), v1.34 and
        v1.37 do not (`node(s) had untolerated taint(s)`)."""
        tolerations = [{"key": k, "operator": "Exists"} for k in sorted(taint_keys)]
        for _ in range(100):
            self.probes += 1
            name = f"sync-probe-{self.probes}"
            spec: dict[str, Any] = {
                "containers": [
                    {
                        "name": "c",
                        "image": "registry.k8s.io/pause:3.9",
                        "resources": {
                            "requests": {PROBE_RESOURCE: "1"},
                            "limits": {PROBE_RESOURCE: "1"},
                        },
                    }
                ]
            }
            if tolerations:
                spec["tolerations"] = tolerations
            probe = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": name, "namespace": "default"},
                "spec": spec,
            }
            message = self._probe_message(probe)
            if message.startswith(f"0/{nodes} nodes are available") and not _not_ready(message):
                return
            time.sleep(0.05)
        raise TimeoutError(f"kube-scheduler never saw the {nodes} nodes ready")

    def _probe_message(self, probe: dict[str, Any]) -> str:
        name = probe["metadata"]["name"]
        uid = self.api.create(probe)["metadata"]["uid"]
        decided = wait_for(lambda: self._decided("default", name, uid, False), 30, name)
        self.api.delete_now("Pod", name, "default")
        return str(decided.get("message") or "")

    # -- helpers -------------------------------------------------------------------------

    def _ensure_namespace(self, name: str, labels: dict[str, str]) -> None:
        path = self.api.path("Namespace", name=name)
        wanted = {**labels, "kubernetes.io/metadata.name": name}
        status, current = self.api.request("GET", path)
        if status == 404:
            self.api.call(
                "POST", self.api.path("Namespace"), {"metadata": {"name": name, "labels": wanted}}
            )
        elif current["metadata"].get("labels") != wanted:
            current["metadata"]["labels"] = wanted
            self.api.call("PUT", path, current)

    def _create_pod(self, manifest: dict[str, Any]) -> None:
        _check_stored(manifest, self.api.create({"apiVersion": "v1", "kind": "Pod", **manifest}))


def _taint_keys(nodes: list[dict[str, Any]]) -> set[str]:
    """The keys of the scenario's own node taints (never the not-ready one)."""
    keys = {t["key"] for n in nodes for t in (n.get("spec") or {}).get("taints") or []}
    return keys - {NOT_READY}


def _not_ready(message: str) -> bool:
    """Whether a probe's message (which tolerates every other taint) shows a node still
    tainted not-ready, in v1.28's words or v1.34's."""
    return NOT_READY in message or "untolerated taint" in message


def _namespaces(s: dict[str, Any]) -> list[str]:
    found = {"default"} | {n["name"] for n in s["namespaces"]}
    found |= {p["metadata"].get("namespace", "default") for p in [*s["pods"], s["pending"]]}
    return sorted(found)


def _has_volumes(s: dict[str, Any]) -> bool:
    return any(o["kind"] in ("PersistentVolume", "PersistentVolumeClaim") for o in s["objects"])


def _check_stored(manifest: dict[str, Any], stored: dict[str, Any]) -> None:
    """The API server kept every spec field we sent, and added to the tolerations exactly
    what `builders.admitted` says (so the eventsched side reads what kube-scheduler read)."""
    name = manifest["metadata"]["name"]
    spec, kept = manifest["spec"], stored["spec"]
    dropped = [k for k in spec if k not in kept]
    if dropped:
        raise RuntimeError(f"pod {name}: the API server dropped {dropped}")
    want = admitted(manifest)["spec"]["tolerations"]
    if kept.get("tolerations") != want:
        raise RuntimeError(f"pod {name}: tolerations {kept.get('tolerations')} != admitted {want}")
