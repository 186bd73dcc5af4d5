"""A preemption scenario through eventsched: the real Scheduler with a profile that has
DefaultPreemption at postFilter (the default profile once it does), on a SimulatedCluster
whose simulated kubelet deletes a victim as soon as it is preempted (`sim.preempt`).

Pending pods are added one at a time, each after the scheduler went idle on the one
before, as the recorder creates each after kube-scheduler decided the one before. A case
that `hold`s a preemptor (its victims stay terminating until the next pending pod's first
attempt) runs on `HoldingCluster`: that preemptor's victims are marked (DisruptionTarget)
but kept until another preemptor preempts them again or the next pending pod was decided.

A pending pod with scheduling gates stays in the gated pool; after the last pending pod,
the pods the scenario's `ungate` names lose their gates in order (`update_pod`), each after
the scheduler went idle on the one before, as the recorder patches them.

Per pending pod, from its first attempt in the event log: the message of its first
FailedScheduling Event (the simulated cluster's), the `preempted` event's nominated node
and victims, the victims' Preempted Events; after the last pending pod, each pending
pod's node and nominatedNodeName as the cluster has them (`final`). A gated pod's answer
says whether it entered the gated pool and whether it was attempted before its gates were
lifted; each ungated pod then has one more answer, from its first attempt.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

from eventsched.cluster import SimulatedCluster
from eventsched.events import EventStore, StoredEvent
from eventsched.framework import Registry
from eventsched.framework.profile import PluginRef, Profile
from eventsched.model import Node, Pod
from eventsched.model import objects as model
from eventsched.model.preemptionwrites import PREEMPTION_BY_SCHEDULER
from eventsched.plugins import in_tree_registry
from eventsched.scheduler import Scheduler, SchedulerOptions
from tests.differential.builders import admitted

PREEMPTION = "DefaultPreemption"


def preemption_profile(base: Profile) -> Profile:
    """`base` with DefaultPreemption at postFilter (unchanged when it has it already)."""
    if any(ref.name == PREEMPTION for ref in base.at("postFilter")):
        return base
    plugins = dict(base.plugins)
    plugins["postFilter"] = (*base.at("postFilter"), PluginRef(PREEMPTION))
    return replace(base, plugins=plugins)


def registered() -> bool:
    return PREEMPTION in in_tree_registry()


class HoldingCluster(SimulatedCluster):
    """A simulated cluster whose kubelet keeps the victims of some preemptors terminating."""

    def __init__(self, *args: Any, holding: set[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.holding = holding
        self.held: set[str] = set()

    def preempt(self, victim: Pod, preemptor: Pod) -> None:
        if preemptor.name not in self.holding:
            self.held.discard(victim.key)
            super().preempt(victim, preemptor)
            return
        current = self.get_pod(victim.key)
        if current is not None:
            self.update_pod(
                replace(current, disruption_target=PREEMPTION_BY_SCHEDULER, deleting=True)
            )
            self.held.add(victim.key)

    def release(self) -> None:
        for key in sorted(self.held):
            if self.get_pod(key) is not None:
                self.delete_pod(key)
        self.held.clear()


def run_case(
    scenario: dict[str, Any],
    profile: Profile,
    template: Path,
    workdir: Path,
    registry: Registry | None = None,
) -> dict[str, Any]:
    """`registry`: the plugins the profile may name (default: kube-scheduler's in-tree ones)."""
    db = workdir / (scenario["id"].replace("/", "-") + ".db")
    shutil.copy(template, db)
    nodes = [Node.from_manifest(m) for m in scenario["nodes"]]
    pods = [Pod.from_manifest(admitted(m)) for m in scenario["pods"]]
    pending = [Pod.from_manifest(admitted(m)) for m in scenario["pending"]]
    holding = set(scenario.get("hold") or [])
    ungate = list(scenario.get("ungate") or [])
    objects = [model.object_from_manifest(m) for m in _object_manifests(scenario)]
    cluster = (
        HoldingCluster(nodes, pods, objects=objects, holding=holding)
        if holding
        else SimulatedCluster(nodes, pods, objects=objects)
    )
    store = EventStore.connect(f"sqlite:///{db}")
    answers: list[dict[str, Any]] = []
    try:
        scheduler = Scheduler(
            store,
            cluster,
            [profile],
            registry or in_tree_registry(),
            SchedulerOptions(
                initial_backoff=0.05, max_backoff=0.1, binder_workers=1, group_commit_wait=0.0
            ),
        )
        scheduler.start()
        for pod in pending:
            cluster.add_pod(pod)
            scheduler.run(until_idle=True)
            if isinstance(cluster, HoldingCluster) and pod.name not in holding:
                cluster.release()
                scheduler.run(until_idle=True)
        # A gated pod's answer is what it was before any gate was lifted.
        gated = {
            pod.key: _gated_answer(pod, store.read_pod(pod.namespace, pod.name), cluster)
            for pod in pending
            if pod.scheduling_gates
        }
        ungated = [next(p for p in pending if p.name == name) for name in ungate]
        for pod in ungated:
            current = cluster.get_pod(pod.key)
            if current is not None:
                cluster.update_pod(replace(current, scheduling_gates=()))
            scheduler.run(until_idle=True)
        scheduler.stop()
        for pod in pending:
            answers.append(
                gated.get(pod.key)
                or _answer(
                    pod,
                    store.read_pod(pod.namespace, pod.name),
                    cluster,
                    follow=pod.name not in holding,
                )
            )
        for pod in ungated:
            events = store.read_pod(pod.namespace, pod.name)
            answers.append({**_answer(pod, events, cluster), "ungated": True})
    finally:
        store.close()
    final = {}
    for pod in pending:
        now = cluster.get_pod(pod.key)
        final[pod.key] = {
            "exists": now is not None,
            "node": (now.node_name or None) if now else None,
            "nominatedNodeName": (now.nominated_node_name or None) if now else None,
        }
    return {"answer": answers, "final": final}


def _object_manifests(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    """Namespaces (labelled with their name, as the API server does) and the objects of
    the kinds eventsched's model reads (budgets here; PriorityClasses are not among them:
    pods carry their priority)."""
    spaces = [{"name": "default", "labels": {}}, *scenario["namespaces"]]
    out: list[dict[str, Any]] = [
        {
            "kind": "Namespace",
            "metadata": {
                "name": ns["name"],
                "labels": {**(ns.get("labels") or {}), "kubernetes.io/metadata.name": ns["name"]},
            },
        }
        for ns in spaces
    ]
    return out + [o for o in scenario["objects"] if o.get("kind") in model.KINDS]


def _answer(
    pod: Pod, events: list[StoredEvent], cluster: SimulatedCluster, follow: bool = True
) -> dict[str, Any]:
    """`follow`: a pod nominated by its first attempt has as victims those of every attempt
    until it is bound (the recorder waits for its binding and takes every Preempted Event
    naming it: a later attempt may preempt elsewhere when higher pods took the room its
    first victims left); a held pod (not waited for), its first attempt's."""
    started = next((e for e in events if e.kind == "attempt_started"), None)
    out: dict[str, Any] = {"pod": pod.key, "kinds": [], "error": None}
    if started is None:
        out["error"] = "eventsched never attempted the pod"
        return out
    first = [e for e in events if e.attempt == started.attempt]
    out["kinds"] = [e.kind for e in first]
    by_kind = {e.kind: e for e in first}
    failed = [e for e in cluster.events if e.reason == "FailedScheduling" and e.pod_key == pod.key]
    out["message"] = failed[0].message if failed and "selected" not in by_kind else None
    unschedulable = by_kind.get("unschedulable")
    out["unschedulableMessage"] = unschedulable.data.get("message") if unschedulable else None
    preempted = by_kind.get("preempted")
    out["nominatedNodeName"] = preempted.data.get("nominatedNodeName") if preempted else None
    victims = list(preempted.data.get("victims", [])) if preempted else []
    if preempted is not None and follow:
        victims = _victims_until_bound(events)
    out["victims"] = sorted({f"{v['namespace']}/{v['name']}" for v in victims})
    out["preempted"] = dict(preempted.data) if preempted else None
    # Not nominated by its first attempt: the recorder reads its Preempted Events then, not
    # those of a later attempt that preempted after all (gen/4442).
    out["preemptedEvents"] = (
        _preempted_events(pod, out["victims"], cluster) if preempted is not None else []
    )
    bound = [e for e in events if e.kind == "bound"]
    out["node"] = bound[-1].node if bound else None
    return out


def _victims_until_bound(events: list[StoredEvent]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for e in events:
        if e.kind == "preempted":
            out += list(e.data.get("victims", []))
        elif e.kind == "bound":
            break
    return out


def _gated_answer(pod: Pod, events: list[StoredEvent], cluster: SimulatedCluster) -> dict[str, Any]:
    """A pod with scheduling gates, before they are lifted: did it enter the gated pool
    (`queued` into "gated"), and was it attempted or nominated anyway?"""
    now = cluster.get_pod(pod.key)
    return {
        "pod": pod.key,
        "error": None,
        "gated": any(e.kind == "queued" and e.data.get("queue") == "gated" for e in events),
        "attempted": any(e.kind == "attempt_started" for e in events)
        or any(e.reason == "FailedScheduling" and e.pod_key == pod.key for e in cluster.events),
        "nominatedNodeName": (now.nominated_node_name or None) if now else None,
    }


def _preempted_events(
    pod: Pod, victims: list[str], cluster: SimulatedCluster
) -> list[dict[str, Any]]:
    """The victims' Preempted Events naming `pod` as related; where the simulated cluster's
    Events keep no related object, each of `victims`' distinct Preempted Events."""
    preempted = [e for e in cluster.events if e.reason == "Preempted"]
    rows = [(e.pod_key, e.type, e.action, e.message) for e in preempted]
    if all(hasattr(e, "related_key") for e in preempted):
        rows = [r for r, e in zip(rows, preempted, strict=True) if e.related_key == pod.key]
    else:
        rows = sorted(set(r for r in rows if r[0] in victims))
    return [
        {"pod": key, "type": kind, "action": action, "message": message}
        for key, kind, action, message in sorted(rows)
    ]
