"""NodeResourceTopology (topology.node.k8s.io/v1alpha2) as NodeResourceTopologyMatch reads it:
parsing checked as the CRD's schema checks it, the logged record, ClusterObjects storage."""

from __future__ import annotations

from typing import Any

import pytest

from eventsched.model import ManifestError
from eventsched.model.objects import (
    CLUSTER_SCOPED,
    KINDS,
    ClusterObjects,
    object_from_manifest,
    object_from_record,
    record_key,
)
from eventsched.plugins.noderesourcetopology.topology import (
    NODE_RESOURCE_TOPOLOGIES,
    NodeResourceTopology,
    Zone,
    ZoneResource,
)


def manifest(**overrides: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "topology.node.k8s.io/v1alpha2",
        "kind": "NodeResourceTopology",
        "metadata": {"name": "worker-1"},
        "topologyPolicies": ["SingleNUMANodeContainerLevel"],
        "attributes": [
            {"name": "topologyManagerPolicy", "value": "single-numa-node"},
            {"name": "topologyManagerScope", "value": "pod"},
            {"name": "nodeTopologyPodsFingerprint", "value": "pfp0v001abc"},
        ],
        "zones": [
            {
                "name": "node-0",
                "type": "Node",
                "costs": [{"name": "node-0", "value": 10}, {"name": "node-1", "value": 21}],
                "attributes": [{"name": "reservedCPUs", "value": "0"}],
                "resources": [
                    {"name": "cpu", "capacity": 8, "allocatable": "7", "available": "3500m"},
                    {
                        "name": "memory",
                        "capacity": "16Gi",
                        "allocatable": "15Gi",
                        "available": "10Gi",
                    },
                ],
            },
            {"name": "node-1", "type": "Node", "parent": "socket-0"},
        ],
    }
    obj.update(overrides)
    return obj


def test_a_manifest_keeps_what_the_plugin_reads() -> None:
    nrt = object_from_manifest(manifest())
    assert isinstance(nrt, NodeResourceTopology)
    assert nrt.key == "NodeResourceTopology/worker-1"
    assert nrt.kind == "NodeResourceTopology"
    assert nrt.topology_policies == ("SingleNUMANodeContainerLevel",)
    # Only the topology manager's two attributes are kept, in order.
    assert nrt.attributes == (
        ("topologyManagerPolicy", "single-numa-node"),
        ("topologyManagerScope", "pod"),
    )
    zone = nrt.zones[0]
    assert zone.name == "node-0" and zone.type == "Node"
    assert zone.costs == (("node-0", 10), ("node-1", 21))
    cpu, memory = zone.resources
    assert (cpu.name, cpu.capacity, cpu.allocatable, cpu.available) == ("cpu", 8000, 7000, 3500)
    assert (memory.capacity, memory.allocatable, memory.available) == (
        16 * 2**30,
        15 * 2**30,
        10 * 2**30,
    )
    assert nrt.zones[1] == Zone("node-1", "Node")


def test_the_record_round_trips_and_drops_what_no_decision_reads() -> None:
    nrt = NodeResourceTopology.from_manifest(manifest())
    record = nrt.to_record()
    assert record["kind"] == "NodeResourceTopology"
    assert record_key(record) == nrt.key
    assert record["zones"][0]["resources"] == [
        {"name": "cpu", "available": 3500},
        {"name": "memory", "available": 10 * 2**30},
    ]
    again = object_from_record(record)
    assert again == nrt
    assert isinstance(again, NodeResourceTopology)
    assert again.to_record() == record


def test_the_kind_is_observed_and_cluster_scoped() -> None:
    assert "NodeResourceTopology" in KINDS
    assert "NodeResourceTopology" in CLUSTER_SCOPED


def topology(objects: ClusterObjects, node: str) -> NodeResourceTopology | None:
    """The node's NodeResourceTopology as the plugin reads it (`ClusterObjects.topology` until
    the kind moved to the plugin's package)."""
    return objects.custom.named(NODE_RESOURCE_TOPOLOGIES, node)


def test_cluster_objects_hold_one_topology_per_node() -> None:
    objects = ClusterObjects()
    first = NodeResourceTopology("a", (Zone("node-0", "Node", (), (ZoneResource("cpu", 1000),)),))
    objects.upsert(first)
    objects.upsert(NodeResourceTopology("b"))
    assert len(objects) == 2 and objects.has(NodeResourceTopology("a"))
    assert topology(objects, "a") == first and topology(objects, "c") is None
    assert first in list(objects)
    objects.upsert(NodeResourceTopology("a"))
    assert topology(objects, "a") == NodeResourceTopology("a")
    objects.remove(NodeResourceTopology("a"))
    assert topology(objects, "a") is None and len(objects) == 1
    objects.clear()
    assert len(objects) == 0


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"metadata": {}}, "metadata.name"),
        ({"metadata": "x"}, "metadata"),
        ({"zones": None}, "zones"),
        ({"zones": {"name": "node-0"}}, "zones"),
        ({"zones": ["node-0"]}, "zones[0]"),
        ({"zones": [{"type": "Node"}]}, "zones[0].name"),
        ({"zones": [{"name": "node-0"}]}, "zones[0].type"),
        (
            {"zones": [{"name": "n", "type": "Node", "costs": [{"name": "x"}]}]},
            "zones[0].costs[0].value",
        ),
        (
            {"zones": [{"name": "n", "type": "Node", "costs": [{"name": "x", "value": "1"}]}]},
            "zones[0].costs[0].value",
        ),
        (
            {"zones": [{"name": "n", "type": "Node", "resources": [{"name": "cpu"}]}]},
            "zones[0].resources[0].capacity",
        ),
        (
            {
                "zones": [
                    {
                        "name": "n",
                        "type": "Node",
                        "resources": [
                            {"name": "cpu", "capacity": 1, "allocatable": 1, "available": "lots"}
                        ],
                    }
                ]
            },
            "zones[0].resources[0].available",
        ),
        ({"attributes": [{"name": "topologyManagerPolicy"}]}, "attributes[0].value"),
        ({"attributes": {"a": "b"}}, "attributes"),
        ({"topologyPolicies": [1]}, "topologyPolicies[0]"),
    ],
)
def test_malformed_manifests_name_the_field(overrides: dict[str, Any], field: str) -> None:
    with pytest.raises(ManifestError) as caught:
        NodeResourceTopology.from_manifest(manifest(**overrides))
    assert caught.value.field == field
