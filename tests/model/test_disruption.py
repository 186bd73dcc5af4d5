"""PodDisruptionBudget as DefaultPreemption reads it: parsing, the logged record, `selects`.

`selects` follows the matching loop of `filterPodsWithPDBViolation`
(pkg/scheduler/framework/preemption/preemption.go, v1.28): a budget of another
namespace, a nil or empty selector (`selector.Empty()`, and LabelSelectorAsSelector(nil)
is labels.Nothing()) and a pod without labels (`len(pod.Labels) != 0`) never count.
Parsing refuses what the API server's validation refuses
(`ValidatePodDisruptionBudgetStatusUpdate`: disruptionsAllowed >= 0), naming the field.
"""

from __future__ import annotations

from typing import Any

import pytest

from eventsched.model import ManifestError, Pod
from eventsched.model.disruption import PodDisruptionBudget
from eventsched.model.objects import (
    KINDS,
    ClusterObjects,
    object_from_manifest,
    object_from_record,
    record_key,
)
from eventsched.model.selectors import LabelSelector


def budget(
    name: str = "pdb",
    namespace: str | None = "default",
    selector: Any = None,
    status: dict[str, Any] | None = None,
    *,
    with_selector: bool = True,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    obj: dict[str, Any] = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": meta,
        "spec": {"minAvailable": 1, **({"selector": selector} if with_selector else {})},
    }
    if status is not None:
        obj["status"] = status
    return obj


def pod(name: str = "p", namespace: str = "default", **labels: str) -> Pod:
    return Pod(uid=f"uid-{name}", namespace=namespace, name=name, labels=labels)


def test_a_listed_budget_keeps_what_preemption_reads() -> None:
    found = object_from_manifest(
        budget(
            selector={
                "matchLabels": {"app": "web"},
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}],
            },
            status={
                "disruptionsAllowed": 2,
                "currentHealthy": 3,
                "desiredHealthy": 1,
                "expectedPods": 3,
                "disruptedPods": {"web-0": "2026-01-01T00:00:00Z"},
            },
        )
    )
    assert isinstance(found, PodDisruptionBudget)
    assert (found.namespace, found.name, found.key) == (
        "default",
        "pdb",
        "PodDisruptionBudget/default/pdb",
    )
    assert (found.disruptions_allowed, found.disrupted_pods) == (2, frozenset({"web-0"}))
    assert found.selects(pod("w", app="web", tier="b"))
    assert not found.selects(pod("w", app="web", tier="c"))
    assert "PodDisruptionBudget" in KINDS


def test_a_budget_without_status_allows_no_disruption() -> None:
    """Before the disruption controller writes its status, the API server holds none."""
    found = PodDisruptionBudget.from_manifest(budget(namespace=None, selector={}))
    assert (found.namespace, found.disruptions_allowed, found.disrupted_pods) == (
        "default",
        0,
        frozenset(),
    )


@pytest.mark.parametrize(
    ("raw", "with_selector", "expected"),
    [
        (None, False, None),  # nil selector: kept as None
        ({}, True, LabelSelector()),  # empty selector: kept as empty (is_everything)
    ],
    ids=["nil", "empty"],
)
def test_nil_and_empty_selectors_stay_apart_and_select_no_pod(
    raw: Any, with_selector: bool, expected: LabelSelector | None
) -> None:
    found = PodDisruptionBudget.from_manifest(budget(selector=raw, with_selector=with_selector))
    assert found.selector == expected
    assert not found.selects(pod(app="web"))
    again = object_from_record(found.to_record())
    assert again == found and again.to_record() == found.to_record()


def test_selects_only_labelled_pods_of_its_namespace() -> None:
    found = PodDisruptionBudget.from_manifest(
        budget(selector={"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]})
    )
    # A selector that matches the empty label set still counts no pod without labels.
    assert not found.selects(pod())
    assert found.selects(pod(team="x"))
    assert not found.selects(pod(namespace="other", team="x"))
    assert not found.selects(pod(app="web"))


@pytest.mark.parametrize(
    "obj",
    [
        budget(
            selector={"matchLabels": {"app": "web"}},
            status={"disruptionsAllowed": 1, "disruptedPods": {"b": "t", "a": "t"}},
        ),
        budget("nil", with_selector=False),
        budget("empty", "team", selector={}, status={"disruptionsAllowed": 0}),
    ],
    ids=lambda o: o["metadata"]["name"],
)
def test_records_round_trip(obj: dict[str, Any]) -> None:
    """What object_observed logs rebuilds the same budget (replay's fold)."""
    found = PodDisruptionBudget.from_manifest(obj)
    record = found.to_record()
    assert object_from_record(record) == found
    assert record_key(record) == found.key


def test_the_record_holds_only_what_preemption_reads() -> None:
    record = PodDisruptionBudget.from_manifest(
        budget(
            selector={"matchLabels": {"app": "web"}},
            status={"disruptionsAllowed": 1, "currentHealthy": 4, "disruptedPods": {"b": "t"}},
        )
    ).to_record()
    assert record == {
        "kind": "PodDisruptionBudget",
        "namespace": "default",
        "name": "pdb",
        "selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]},
        "disruptionsAllowed": 1,
        "disruptedPods": ["b"],
    }


@pytest.mark.parametrize(
    ("obj", "field"),
    [
        (budget(status={"disruptionsAllowed": -1}), "status.disruptionsAllowed"),
        (budget(status={"disruptionsAllowed": "1"}), "status.disruptionsAllowed"),
        (budget(status={"disruptionsAllowed": True}), "status.disruptionsAllowed"),
        (budget(status={"disruptedPods": ["a"]}), "status.disruptedPods"),
        (budget(selector=["app"]), "spec.selector"),
        (
            budget(selector={"matchExpressions": [{"key": "a", "operator": "Near"}]}),
            r"spec.selector.matchExpressions\[0\].operator",
        ),
        ({**budget(), "spec": "x"}, "spec"),
        ({**budget(), "status": ["x"]}, "status"),
    ],
    ids=[
        "negative",
        "string",
        "boolean",
        "disrupted-list",
        "selector-list",
        "operator",
        "spec",
        "status",
    ],
)
def test_malformed_budgets_name_the_field(obj: dict[str, Any], field: str) -> None:
    with pytest.raises(ManifestError, match=rf"PodDisruptionBudget default/pdb: {field}:"):
        PodDisruptionBudget.from_manifest(obj)


def test_the_collection_lists_budgets_by_namespace_and_name() -> None:
    objects = ClusterObjects()
    items = [
        PodDisruptionBudget("team", "a"),
        PodDisruptionBudget("default", "z"),
        PodDisruptionBudget("default", "b", disruptions_allowed=1),
    ]
    for obj in items:
        objects.upsert(obj)
    assert [b.key for b in objects.disruption_budgets()] == [
        "PodDisruptionBudget/default/b",
        "PodDisruptionBudget/default/z",
        "PodDisruptionBudget/team/a",
    ]
    changed = PodDisruptionBudget("default", "b", disruptions_allowed=0)
    objects.upsert(changed)
    assert objects.has(changed) and objects.disruption_budgets()[0] == changed
    assert len(objects) == 3 and set(objects) == {*items[:2], changed}
    objects.remove(items[0])
    assert not objects.has(items[0]) and len(objects.disruption_budgets()) == 2
    objects.clear()
    assert objects.disruption_budgets() == ()
