"""A pod or node the informer read is the one its logged record reads back as.

A restarted process gathers what it lists without reading the record back
(scheduler/eventhandlers.py `_relist_pod`), where replay reads the record:
the two must be the same object for any manifest the model accepts.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given

from eventsched.config.featuregates import features_for
from eventsched.events import encode
from eventsched.model import Node, Pod
from tests.fuzz.strategies import (
    NODE_PATHS,
    POD_PATHS,
    RESOURCE_PATHS,
    RICH_NODE,
    RICH_POD,
    mutated,
    resized_pod,
    valid_node,
    valid_pod,
)


def read_back(record: dict[str, Any]) -> dict[str, Any]:
    """The record as the log gives it back (normalized JSON data)."""
    return encode(record).data


def test_a_pod_with_every_field_reads_back_as_itself() -> None:
    pod = Pod.from_manifest(RICH_POD)
    assert pod.owner and pod.tolerations and pod.volumes and pod.init_containers
    assert pod.host_ports and pod.topology_spread and pod.scheduling_gates
    assert Pod.from_record(read_back(pod.to_record())) == pod
    # v1.37's accounting: pod-level requests, so a Fit score of the containers' own.
    pod = Pod.from_manifest(RICH_POD, accounting=features_for("1.37").accounting)
    assert pod.score_requests is not None and pod.restartable_init
    assert Pod.from_record(read_back(pod.to_record())) == pod


def test_a_node_with_every_field_reads_back_as_itself() -> None:
    node = Node.from_manifest(RICH_NODE)
    assert node.taints and node.images and node.unschedulable and node.labels
    assert Node.from_record(read_back(node.to_record())) == node


def reads_back_as_itself(
    model: type[Pod] | type[Node], manifest: dict[str, Any], **options: Any
) -> None:
    try:
        obj = model.from_manifest(manifest, **options)
        record = read_back(obj.to_record())
    except (ValueError, TypeError, AttributeError):
        return  # refused (ManifestError is a ValueError): not listed, nothing gathered
    assert model.from_record(record) == obj


@given(mutated(valid_pod("odd"), POD_PATHS))
def test_any_pod_the_model_reads_reads_back_as_itself(manifest: dict[str, Any]) -> None:
    reads_back_as_itself(Pod, manifest)


@given(mutated(resized_pod("odd"), RESOURCE_PATHS))
def test_any_pod_counted_as_v1_37_reads_back_as_itself(manifest: dict[str, Any]) -> None:
    reads_back_as_itself(Pod, manifest, accounting=features_for("1.37").accounting)
    reads_back_as_itself(Pod, manifest, accounting=features_for("1.34").accounting)


@given(mutated(valid_node("odd"), NODE_PATHS))
def test_any_node_the_model_reads_reads_back_as_itself(manifest: dict[str, Any]) -> None:
    reads_back_as_itself(Node, manifest)
