"""Extender scenarios for the seed plugins: what eventsched's profile decides, twice.

Each case is a profile (eventsched's own plugins on top of the defaults), nodes, and
steps (create a pending pod, delete a pod) run in order. The real kube-scheduler v1.28,
with its score plugins disabled and eventsched as its extender, must place every pod
where eventsched's own scheduler places it with the same profile and the same history,
and refuse the pods eventsched refuses with eventsched's reasons.

Every case's winner is unique under eventsched's totals (kube-scheduler breaks ties at
random, and the extender gives every node eventsched would tie among the same 10).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: The profile name both schedulers use: kube-scheduler's profile and eventsched's, so the
#: same pod manifests serve both.
SCHEDULER = "extended"


def node(
    name: str, labels: dict[str, str] | None = None, cpu: str = "4", memory: str = "16Gi"
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}},
    }


def pod(
    name: str,
    cpu: str = "100m",
    annotations: dict[str, str] | None = None,
    owner: str | None = None,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": "default"}
    if annotations:
        metadata["annotations"] = annotations
    if owner:
        # A StatefulSet's pod as the controller writes it (no controller runs here: the
        # reference is enough for StickyNode's ownerOrdinal identity).
        metadata["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": "StatefulSet",
                "name": owner,
                "uid": f"00000000-0000-0000-0000-{sum(map(ord, owner)):012d}",
                "controller": True,
            }
        ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {
            "schedulerName": SCHEDULER,
            "containers": [
                {
                    "name": "c",
                    "image": "registry.k8s.io/pause:3.9",
                    "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}},
                }
            ],
        },
    }


@dataclass(frozen=True)
class Step:
    #: "create" a pending pod (its manifest) or "delete" a pod (its name).
    action: str
    pod: dict[str, Any] = field(default_factory=dict)
    name: str = ""


def create(manifest: dict[str, Any]) -> Step:
    return Step("create", pod=manifest, name=manifest["metadata"]["name"])


def delete(name: str) -> Step:
    return Step("delete", name=name)


@dataclass(frozen=True)
class Case:
    name: str
    #: `profiles[0]` of eventsched's KubeSchedulerConfiguration, without schedulerName.
    profile: dict[str, Any]
    nodes: list[dict[str, Any]]
    steps: list[Step]

    def config(self) -> dict[str, Any]:
        return {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [{"schedulerName": SCHEDULER, **self.profile}],
        }


def _enabled(name: str, weight: int) -> dict[str, Any]:
    return {"multiPoint": {"enabled": [{"name": name, "weight": weight}]}}


NODELABEL = {
    "plugins": _enabled("NodeLabel", 2),
    "pluginConfig": [
        {
            "name": "NodeLabel",
            "args": {"requiredLabels": ["disk"], "scoreLabel": "perf", "order": "ascending"},
        }
    ],
}
PINNEDHOST = {
    "plugins": _enabled("PinnedHost", 5),
    "pluginConfig": [
        {
            "name": "PinnedHost",
            "args": {
                "hosts": [{"name": "worker-b", "score": 80}],
                "selectors": [{"matchLabels": {"tier": "gold"}, "score": 40}],
            },
        }
    ],
}
STICKY = {
    "plugins": _enabled("StickyNode", 10),
    "pluginConfig": [
        {"name": "StickyNode", "args": {"identity": "ownerOrdinal", "policy": "strict"}}
    ],
}

CASES = [
    Case(
        "nodelabel-filter-and-score",
        NODELABEL,
        [
            node("worker-a", {"disk": "ssd", "perf": "3"}),
            node("worker-b"),
            node("worker-c", {"disk": "ssd", "perf": "9"}),
            node("worker-d", {"disk": "hdd", "perf": "5"}),
        ],
        [create(pod("train-1")), create(pod("train-2"))],
    ),
    Case(
        "nodelabel-annotation-requires",
        NODELABEL,
        [
            node("worker-a", {"disk": "ssd", "perf": "9"}),
            node("worker-b", {"disk": "ssd", "gpu": "h100", "perf": "2"}),
            node("worker-c", {"gpu": "h100", "perf": "7"}),
        ],
        [create(pod("needs-gpu", annotations={"eventsched.io/requires": "gpu"}))],
    ),
    Case(
        "nodelabel-nothing-fits",
        NODELABEL,
        [node("worker-a"), node("worker-b", {"perf": "4"}), node("worker-c")],
        [create(pod("no-disk"))],
    ),
    Case(
        "pinnedhost-host-then-selector",
        PINNEDHOST,
        [
            node("worker-a", {"tier": "gold"}),
            node("worker-b"),
            node("worker-c", {"tier": "silver"}),
        ],
        [create(pod("batch", cpu="500m"))],
    ),
    Case(
        "pinnedhost-annotation",
        PINNEDHOST,
        [node("worker-a", {"tier": "gold"}), node("worker-b"), node("worker-c")],
        [create(pod("pinned", annotations={"eventsched.io/preferred-node": "worker-c"}))],
    ),
    Case(
        "stickynode-returns-to-first-node",
        STICKY,
        [node("worker-a"), node("worker-b", cpu="8"), node("worker-c")],
        [
            create(pod("web-0", owner="web")),
            # Fill the first node's neighbour so the default scores would now move the pod.
            create(pod("filler", cpu="3")),
            delete("web-0"),
            create(pod("web-0", owner="web")),
        ],
    ),
]
