"""`ClusterObjects.default_selector`: kube-scheduler's `helper.DefaultSelector`
(pkg/scheduler/framework/plugins/helper/spread.go, v1.28).

The Services of the pod's own namespace that select it (upstream lists
`Services(pod.Namespace)`), merged, with its controller's requirements. The Services are
kept per namespace as they are upserted and removed, so a pod's selector never looks at
another namespace's.
"""

from __future__ import annotations

from typing import Any

from eventsched.model import OwnerRef, Pod
from eventsched.model.objects import ClusterObjects, workload_from_manifest
from eventsched.model.selectors import LabelSelector


def service(name: str, namespace: str, **selector: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": selector},
    }


def replica_set(name: str, namespace: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"matchLabels": labels}},
    }


def objects(*manifests: dict[str, Any]) -> ClusterObjects:
    held = ClusterObjects()
    for manifest in manifests:
        held.upsert(workload_from_manifest(manifest))
    return held


def map_selector(**labels: str) -> LabelSelector:
    return LabelSelector.parse({"matchLabels": labels}, "test", "selector")


POD = Pod(uid="u", namespace="shop", name="web-1", labels={"app": "web", "tier": "front"})


def test_services_of_the_pods_namespace_that_select_it_are_merged() -> None:
    held = objects(
        service("web", "shop", app="web"),
        service("front", "shop", tier="front"),
        service("other", "shop", app="db"),  # does not select the pod
        service("web", "elsewhere", app="web", tier="front"),  # another namespace
    )
    assert held.default_selector(POD) == map_selector(app="web", tier="front")
    assert held.default_selector(
        Pod(uid="v", namespace="elsewhere", name="x", labels={"app": "web"})
    ).is_everything  # "elsewhere"'s Service wants tier=front too


def test_a_removed_or_changed_service_no_longer_selects() -> None:
    held = objects(service("web", "shop", app="web"), service("front", "shop", tier="front"))
    held.remove(workload_from_manifest(service("front", "shop", tier="front")))
    assert held.default_selector(POD) == map_selector(app="web")
    held.upsert(workload_from_manifest(service("web", "shop", app="api")))  # now selects others
    assert held.default_selector(POD).is_everything
    held.remove(workload_from_manifest(service("web", "shop", app="api")))
    held.upsert(workload_from_manifest(service("web", "shop", tier="front")))
    assert held.default_selector(POD) == map_selector(tier="front")
    held.clear()
    assert held.default_selector(POD).is_everything


def test_the_controllers_requirements_join_the_services() -> None:
    held = objects(service("web", "shop", app="web"), replica_set("web-7d", "shop", tier="front"))
    owned = Pod(
        uid="u",
        namespace="shop",
        name="web-1",
        labels={"app": "web", "tier": "front"},
        owner=OwnerRef(kind="ReplicaSet", name="web-7d"),
    )
    selector = held.default_selector(owned)
    assert selector.matches({"app": "web", "tier": "front"})
    assert not selector.matches({"app": "web"})  # the ReplicaSet's requirement
    assert not selector.matches({"tier": "front"})  # the Service's
