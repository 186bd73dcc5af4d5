"""Record kube-scheduler v1.28's answers to the generated scenarios (run by hand).

    python -m tests.differential.record [--family F ...] [--limit N] [--preemption]

One etcd + kube-apiserver (benchmarks/controlplane.py) and one kube-scheduler serve the
whole run. kube-scheduler runs the default profile with DefaultPreemption disabled (or
enabled with --preemption, into answers/preemption/), plus one profile per plugin set some
scenario is ablated by ("without.<plugins>": the default with those plugins disabled), at
-v=10 so its log holds every plugin's weighted score per node and each node's total.

Per scenario: namespaces, extra objects, ready nodes and assigned pods are created; the
scheduler's cache is waited for (its `scheduler_scheduler_cache_size` metric shows exactly
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
import copy
import json
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from benchmarks.controlplane import ControlPlane, free_port, kube_binaries, spawn_logged
from tests.differential.builders import admitted
from tests.differential.generate import FAMILIES, generate
from tests.differential.kubeapi import GRACE_0, MERGE_PATCH, KubeApi, cache_size, wait_for
from tests.differential.kubelog import LogReader
from tests.differential.scenario import (
    ANSWERS,
    Answer,
    ablation_key,
    ablation_sets,
    dump_family,
    family_path,
    is_unique,
    profile_name,
    uses,
)

DEFAULT_BIN = "/work/shared/kube"
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
)


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


class Recorder:
    def __init__(self, cp: ControlPlane, api: KubeApi, log: LogReader, metrics_url: str) -> None:
        self.cp = cp
        self.api = api
        self.log = log
        self.metrics_url = metrics_url
        self.probes = 0

    # -- one scenario -------------------------------------------------------------------

    def record(self, s: dict[str, Any]) -> dict[str, Any]:
        self.setup(s)
        ablations: dict[str, Any] = {}
        for k, plugins in enumerate(ablation_sets(uses(s))):
            answer = self.run(s, profile_name(plugins), f"-x{k}")
            ablations[ablation_key(plugins)] = answer.to_json()
            if answer.node is not None and _binds_claims(s):
                self.teardown(s)  # the binding bound a claim: start again
                self.setup(s)
        answer = self.run(s, None, "")
        self.teardown(s)
        return {**s, "answer": answer.to_json(), "ablations": ablations}

    def record_or_report(self, s: dict[str, Any]) -> dict[str, Any]:
        """`record`, tried twice (after cleaning up); a scenario that fails both times is
        kept with `answer: null` and the error, which the comparison reports as a failure."""
        error = ""
        for _ in range(2):
            try:
                return self.record(s)
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
        self.cp.make_ready_nodes(copy.deepcopy(s["nodes"]))
        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(self._create_pod, s["pods"]))
        self.wait_cache(len(s["nodes"]), len(s["pods"]))
        self.sync_probe(len(s["nodes"]))

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
            self._remove_pod(ns, name, bound=answer.node is not None, s=s)
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

    def _remove_pod(self, ns: str, name: str, bound: bool, s: dict[str, Any]) -> None:
        offset = self.log.offset()
        self.api.delete_now("Pod", name, ns)
        wait_for(lambda: self.api.gone("Pod", name, ns), 30, f"pod {ns}/{name} deleted")
        if bound and not _binds_claims(s):
            wait_for(lambda: self.log.deleted(offset, f"{ns}/{name}"), 30, "cache saw the deletion")
            self.wait_cache(len(s["nodes"]), len(s["pods"]))

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

    def sync_probe(self, nodes: int) -> None:
        """A pod that fits nowhere: its FailedScheduling message must count every node and
        show none still tainted not-ready (so the scheduler saw each node's last update)."""
        for _ in range(100):
            self.probes += 1
            name = f"sync-probe-{self.probes}"
            probe = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": name, "namespace": "default"},
                "spec": {
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
                },
            }
            message = self._probe_message(probe)
            if message.startswith(f"0/{nodes} nodes are available") and NOT_READY not in message:
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


def _namespaces(s: dict[str, Any]) -> list[str]:
    found = {"default"} | {n["name"] for n in s["namespaces"]}
    found |= {p["metadata"].get("namespace", "default") for p in [*s["pods"], s["pending"]]}
    return sorted(found)


def _has_volumes(s: dict[str, Any]) -> bool:
    return any(o["kind"] in ("PersistentVolume", "PersistentVolumeClaim") for o in s["objects"])


def _binds_claims(s: dict[str, Any]) -> bool:
    """A claim not bound yet, which placing the pod binds (VolumeBinding's PreBind)."""
    return any(
        o["kind"] == "PersistentVolumeClaim" and not o["spec"].get("volumeName")
        for o in s["objects"]
    )


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.differential.record")
    parser.add_argument("--family", action="append", choices=sorted(FAMILIES))
    parser.add_argument("--limit", type=int, default=None, help="first N scenarios per family")
    parser.add_argument("--preemption", action="store_true", help="keep DefaultPreemption")
    parser.add_argument("--kube-bin", default=DEFAULT_BIN)
    args = parser.parse_args(argv)
    families = args.family or list(FAMILIES)
    scenarios = {f: generate(f)[: args.limit] for f in families}
    ablations = sorted(
        {a for ss in scenarios.values() for s in ss for a in ablation_sets(uses(s))},
        key=lambda a: (len(a), sorted(a)),
    )
    binaries = kube_binaries(args.kube_bin)
    if binaries is None or binaries.scheduler is None:
        print(f"no kube-apiserver/kube-scheduler in {args.kube_bin}, or no etcd", file=sys.stderr)
        return 2
    version = subprocess.run(
        [str(binaries.scheduler), "--version"], capture_output=True, text=True, check=True
    ).stdout.strip()
    out = ANSWERS / "preemption" if args.preemption else ANSWERS
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    timings: dict[str, float] = {}
    with ControlPlane(binaries) as cp:
        config = scheduler_config(
            cp.workdir / "scheduler.json", cp.kubeconfig(), ablations, args.preemption
        )
        port = free_port()
        log_path = cp.workdir / "kube-scheduler-differential.log"
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
            recorder = Recorder(
                cp,
                KubeApi(cp.url, cp.admin_token, str(cp.ca_file)),
                LogReader(log_path),
                metrics_url,
            )
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
                    "profile": "default-scheduler: kube-scheduler's v1 default plugins"
                    + ("" if args.preemption else ", DefaultPreemption disabled"),
                    "preemption": args.preemption,
                    "ablations": "each scenario's pending pod also scheduled by profiles "
                    "'without.<plugins>' (the same, those plugins disabled at multiPoint), "
                    "for every non-empty set of at most two plugins it uses (more: each, and all)",
                    "scenarios": recorded,
                }
                family_path(family, out).write_text(dump_family(document))
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    total = time.monotonic() - started
    for family, seconds in timings.items():
        print(f"{family:15} {len(scenarios[family]):4} scenarios {seconds:7.1f} s")
    print(
        f"{'total':15} {sum(len(v) for v in scenarios.values()):4} scenarios {total:7.1f} s (with start-up)"
    )
    return 0


def _answers(url: str) -> bool:
    try:
        return "nodes" in cache_size(url)
    except OSError:
        return False


if __name__ == "__main__":
    raise SystemExit(main())
