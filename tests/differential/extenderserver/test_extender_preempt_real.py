"""The real kube-scheduler v1.28 calls `eventsched extender`'s preempt verb, and eventsched's
answer changes which pod is evicted.

kube-scheduler's profile ignores the extended resource `example.com/widget`
(NodeResourcesFit's ignoredResources); eventsched's profile counts it. The preemptor fits
nowhere for cpu. kube-scheduler's dry run finds two candidates: worker-a (evict low-a2,
priority 8) and worker-b (evict low-b, priority 5); on its own it would pick worker-b, the
candidate with the lower-priority victim (checked here too, without the preempt verb). worker-b has no widget, so eventsched drops it
(with low-b gone the pod still fails eventsched's NodeResourcesFit), and kube-scheduler
nominates worker-a and evicts low-a2, leaving low-b alone. The extender's log holds the
call (kube-scheduler's candidates) and its answer, and replay decides it again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from eventsched.audit.replay import replay
from eventsched.benchmarks.controlplane import ControlPlane
from eventsched.events import EventStore
from eventsched.plugins import full_registry
from tests.differential.extenderserver.cases import SCHEDULER, node
from tests.differential.extenderserver.harness import (
    Extender,
    empty_cluster,
    kube_scheduler_config,
    wait_for,
)
from tests.differential.kubeapi import KubeApi

WIDGET = "example.com/widget"
PRIORITIES = {"prio-5": 5, "prio-8": 8, "prio-10": 10, "prio-1000": 1000}
#: kube-scheduler's own profile: the widget is not its business.
KUBE_PROFILE = {
    "pluginConfig": [{"name": "NodeResourcesFit", "args": {"ignoredResources": [WIDGET]}}]
}
#: eventsched's profile: the defaults, which count the widget.
EVENTSCHED_CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [{"schedulerName": SCHEDULER}],
}


def _node(name: str, widgets: str) -> dict[str, Any]:
    manifest = node(name)
    manifest["status"]["allocatable"][WIDGET] = widgets
    return manifest


def _pod(
    name: str, priority: str, cpu: str, widgets: str = "0", on: str | None = None
) -> dict[str, Any]:
    requests = {"cpu": cpu, "memory": "64Mi"}
    if widgets != "0":
        requests[WIDGET] = widgets
    spec: dict[str, Any] = {
        "schedulerName": SCHEDULER,
        "priorityClassName": priority,
        "priority": PRIORITIES[priority],
        "containers": [
            {
                "name": "c",
                "image": "registry.k8s.io/pause:3.9",
                "resources": {"requests": requests, "limits": {WIDGET: widgets}}
                if widgets != "0"
                else {"requests": requests},
            }
        ],
    }
    if on:
        spec["nodeName"] = on
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


NODES = [_node("worker-a", "2"), _node("worker-b", "0")]
RUNNING = [
    _pod("low-a1", "prio-10", "3"),
    _pod("low-a2", "prio-8", "500m", widgets="2"),
    _pod("low-b", "prio-5", "3500m"),
]
PLACED = {"low-a1": "worker-a", "low-a2": "worker-a", "low-b": "worker-b"}


def _setup(api: KubeApi, plane: ControlPlane) -> dict[str, str]:
    """Nodes, priority classes and the running pods (placed by nodeName); their uids."""
    empty_cluster(api)
    plane.make_ready_nodes(NODES)
    for name, value in PRIORITIES.items():
        if api.request("GET", KubeApi.path("PriorityClass", None, name))[0] == 404:
            klass = {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
            }
            api.call("POST", KubeApi.path("PriorityClass"), klass)
    uids = {}
    for manifest in RUNNING:
        name = manifest["metadata"]["name"]
        manifest["spec"]["nodeName"] = PLACED[name]
        created = api.call("POST", KubeApi.path("Pod", "default"), manifest)
        uids[name] = created["metadata"]["uid"]
    return uids


def _deleting(api: KubeApi, name: str) -> bool:
    status, pod = api.request("GET", KubeApi.path("Pod", "default", name))
    return status == 404 or bool(pod.get("metadata", {}).get("deletionTimestamp"))


def _nominated(api: KubeApi, name: str) -> str:
    pod = api.call("GET", KubeApi.path("Pod", "default", name))
    return str(pod.get("status", {}).get("nominatedNodeName") or "")


def _preempt(
    plane: ControlPlane, workdir: Path, node_cache_capable: bool, preempt: bool
) -> tuple[KubeApi, dict[str, str], Extender]:
    """The urgent pod created with kube-scheduler calling the extender (and its preempt verb
    when `preempt`); returns once urgent is nominated and its victim is being evicted."""
    api = KubeApi(plane.url, plane.admin_token, str(plane.ca_file))
    uids = _setup(api, plane)
    extender = Extender(EVENTSCHED_CONFIG, plane, workdir)
    config = workdir / "kube-scheduler.yaml"
    settings = kube_scheduler_config(
        extender, plane.kubeconfig(), node_cache_capable, preempt=preempt, profile=KUBE_PROFILE
    )
    config.write_text(yaml.safe_dump(settings))
    scheduler = plane.start_kube_scheduler(config)
    try:
        api.call("POST", KubeApi.path("Pod", "default"), _pod("urgent", "prio-1000", "1", "1"))
        try:
            wait_for(lambda: _nominated(api, "urgent"), 60, "urgent's nomination")
        except AssertionError as exc:
            logs = [plane.workdir / "kube-scheduler.log", extender.log]
            tails = "\n".join(f"--- {p.name}\n{p.read_text()[-4000:]}" for p in logs)
            raise AssertionError(f"{exc}\n{tails}") from None
        victim = "low-a2" if _nominated(api, "urgent") == "worker-a" else "low-b"
        wait_for(lambda: _deleting(api, victim), 30, f"{victim}'s eviction")
    finally:
        scheduler.terminate()
        scheduler.wait(timeout=10)
        extender.stop()
    return api, uids, extender


def test_without_the_preempt_verb_kube_scheduler_evicts_the_lower_victim(
    plane: ControlPlane, tmp_path: Path
) -> None:
    api, _, _ = _preempt(plane, tmp_path, True, preempt=False)
    assert _nominated(api, "urgent") == "worker-b"
    assert _deleting(api, "low-b")
    assert not _deleting(api, "low-a2")


@pytest.mark.parametrize("node_cache_capable", [True, False], ids=["MetaVictims", "Victims"])
def test_kube_scheduler_evicts_what_eventsched_answers(
    plane: ControlPlane, tmp_path: Path, node_cache_capable: bool
) -> None:
    api, uids, extender = _preempt(plane, tmp_path, node_cache_capable, preempt=True)
    assert _nominated(api, "urgent") == "worker-a"
    assert _deleting(api, "low-a2")
    assert not _deleting(api, "low-b")
    assert not _deleting(api, "low-a1")
    form = "NodeNameToMetaVictims" if node_cache_capable else "NodeNameToVictims"
    with EventStore.connect(extender.db) as store:
        events = store.read_pod("default", "urgent")
        calls = [
            e.data["extender"]
            for e in events
            if e.kind == "attempt_started" and e.data.get("extender", {}).get("verb") == "preempt"
        ]
        assert calls, [e.kind for e in events]
        assert calls[0]["form"] == form
        assert {c["node"]: c["victims"] for c in calls[0]["victims"]} == {
            "worker-a": [uids["low-a2"]],
            "worker-b": [uids["low-b"]],
        }
        [answer, *_] = [e.data for e in events if e.kind == "preempt_answered"]
        assert answer["kept"] == [
            {"node": "worker-a", "victims": [uids["low-a2"]], "pdbViolations": 0}
        ]
        assert answer["dropped"] == [{"node": "worker-b", "reason": f"Insufficient {WIDGET}"}]
        report = replay(store, full_registry())
    assert report.mismatches == []
    assert report.reproduced >= len(calls)
