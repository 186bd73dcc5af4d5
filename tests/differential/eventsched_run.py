"""One scenario through eventsched: the real Scheduler, `default_profile()` as it is at test
time (the differential test takes DefaultPreemption out, as the answers were recorded
without it), on a SimulatedCluster, with its event log in a SQLite file.

Nodes and pods are read from the scenario's manifests as kube-apiserver stored them
(`builders.admitted` adds what admission adds); the decision is read back from the log
(`filtered`, `scored`, `selected` of the pending pod's first attempt), the message from the
FailedScheduling Event and the PodScheduled condition the simulated cluster received.
Namespaces, and the objects of the kinds eventsched's model reads (workloads, claims,
volumes, storage classes, CSINodes), are handed to the cluster where it takes `objects`.
"""

from __future__ import annotations

import inspect
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from eventsched.cluster import SimulatedCluster
from eventsched.config import default_profile
from eventsched.events import EventStore, StoredEvent, upgrade
from eventsched.framework.profile import Profile
from eventsched.model import Node, Pod
from eventsched.plugins import in_tree_registry
from eventsched.scheduler import Scheduler, SchedulerOptions
from tests.differential.builders import admitted

SCHEDULER_NAME = "default-scheduler"


@dataclass
class Outcome:
    """eventsched's first attempt at the pending pod."""

    node: str | None
    message: str | None = None
    condition: str | None = None
    feasible: list[str] = field(default_factory=list)
    #: node -> plugin -> weighted score (normalized x weight), as the `scored` event has it.
    scores: dict[str, dict[str, int]] = field(default_factory=dict)
    total: dict[str, int] = field(default_factory=dict)
    #: Score plugins whose PreScore returned Skip.
    skipped: list[str] = field(default_factory=list)
    #: A SchedulingError's message (the scheduler's fault, not the pod's).
    error: str | None = None
    #: node -> (the plugin that rejected it, its reasons), from the `filtered` event.
    rejections: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)


def template_database(directory: Path) -> Path:
    """An empty event log at the schema's head, copied for each scenario."""
    path = directory / "template.db"
    if not path.exists():
        upgrade(f"sqlite:///{path}")
    return path


def without_preemption(profile: Profile) -> Profile:
    """`profile` without DefaultPreemption, as the answers files (`"preemption": false`)
    were recorded: kube-scheduler's default profile with DefaultPreemption disabled."""
    plugins = {
        point: tuple(ref for ref in refs if ref.name != "DefaultPreemption")
        for point, refs in profile.plugins.items()
    }
    return replace(profile, plugins={point: refs for point, refs in plugins.items() if refs})


def run_scenario(
    scenario: dict[str, Any], template: Path, workdir: Path, profile: Profile | None = None
) -> Outcome:
    db = workdir / (scenario["id"].replace("/", "-") + ".db")
    shutil.copy(template, db)
    nodes = [Node.from_manifest(m) for m in scenario["nodes"]]
    pods = [Pod.from_manifest(admitted(m)) for m in scenario["pods"]]
    pending = Pod.from_manifest(admitted(scenario["pending"]))
    cluster = _cluster(scenario, nodes, [*pods, pending])
    store = EventStore.connect(f"sqlite:///{db}")
    try:
        scheduler = Scheduler(
            store,
            cluster,
            [profile or default_profile(SCHEDULER_NAME)],
            in_tree_registry(),
            SchedulerOptions(
                initial_backoff=0.05, max_backoff=0.1, binder_workers=1, group_commit_wait=0.0
            ),
        )
        scheduler.start()
        scheduler.run(until_idle=True)
        scheduler.stop()
        events = store.read_pod(pending.namespace, pending.name)
    finally:
        store.close()
    outcome = _first_attempt(events)
    key = f"{pending.namespace}/{pending.name}"
    if outcome.node is None:
        failed = [e for e in cluster.events if e.reason == "FailedScheduling" and e.pod_key == key]
        outcome.message = failed[0].message if failed else None
        condition = cluster.conditions.get(key)
        outcome.condition = condition["message"] if condition else None
    return outcome


def _cluster(scenario: dict[str, Any], nodes: list[Node], pods: list[Pod]) -> SimulatedCluster:
    """The simulated cluster, with the namespaces and the objects of the kinds eventsched's
    model reads (workloads, volumes' objects), where the cluster takes objects."""
    if "objects" not in inspect.signature(SimulatedCluster).parameters:
        return SimulatedCluster(nodes, pods)
    from eventsched.model import objects as model

    spaces = [{"name": "default", "labels": {}}, *scenario["namespaces"]]
    manifests: list[dict[str, Any]] = [
        {
            "kind": "Namespace",
            "metadata": {
                "name": ns["name"],
                # The API server labels every namespace with its name.
                "labels": {**(ns.get("labels") or {}), "kubernetes.io/metadata.name": ns["name"]},
            },
        }
        for ns in spaces
    ]
    kinds = set(getattr(model, "KINDS", ()))
    manifests += [o for o in scenario["objects"] if o.get("kind") in kinds]
    return SimulatedCluster(nodes, pods, objects=[model.object_from_manifest(m) for m in manifests])


def _first_attempt(events: list[StoredEvent]) -> Outcome:
    started = next((e for e in events if e.kind == "attempt_started"), None)
    if started is None:
        return Outcome(node=None, error="eventsched never attempted the pod")
    mine = [e for e in events if e.attempt == started.attempt]
    by_kind = {e.kind: e for e in mine}
    outcome = Outcome(node=None)
    filtered = by_kind.get("filtered")
    if filtered is not None:
        for rejection in filtered.data.get("rejections") or []:
            for node in rejection["nodes"]:
                reasons = tuple(str(r) for r in rejection.get("reasons") or ())
                outcome.rejections[node] = (str(rejection["plugin"]), reasons)
    scored = by_kind.get("scored")
    if scored is not None:
        for plugin in scored.data.get("plugins", []):
            weight = int(plugin.get("weight", 1))
            for top, normalized in zip(scored.data["top"], plugin["normalized"], strict=True):
                outcome.scores.setdefault(top["node"], {})[plugin["name"]] = (
                    int(normalized) * weight
                )
        outcome.total = {t["node"]: int(t["total"]) for t in scored.data["top"]}
        outcome.skipped = list(scored.data.get("skipped", []))
        if int(scored.data["nodes"]) != len(outcome.total):
            raise AssertionError("scored event holds fewer nodes than were scored (top K)")
    selected = by_kind.get("selected")
    if selected is not None:
        outcome.node = selected.node
        outcome.feasible = sorted(outcome.total) if outcome.total else [str(selected.node)]
    elif "unschedulable" not in by_kind:
        outcome.error = _error(mine)
    return outcome


def _error(events: list[StoredEvent]) -> str:
    for e in events:
        status = e.data.get("status")
        if status:
            return str(status)
    return "eventsched's attempt ended neither selected nor unschedulable: " + ", ".join(
        e.kind for e in events
    )
