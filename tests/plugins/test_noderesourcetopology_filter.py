"""NodeResourceTopologyMatch's Filter against scheduler-plugins v0.28.9's filter_test.go.

The cases follow upstream's TestNodeResourceTopology,
TestNodeResourceTopologyMultiContainerPodScope and
TestNodeResourceTopologyMultiContainerContainerScope (each names its upstream case),
with our own nodes and amounts; a few more pin behaviour upstream has and no upstream
test shows (named "ours").
"""

from __future__ import annotations

from typing import Any

import pytest

from eventsched.framework import Code, Status
from eventsched.plugins.noderesourcetopology.filter import align
from eventsched.plugins.noderesourcetopology.numa import numa_nodes
from tests.plugins.nrt import GPU, HUGEPAGES_2MI, NIC, filter_all, node_for, nrt, pod, table, zone

NIC_NO_NUMA = "vendor.com/nic-nonuma"
EXTENDED = "vendor.com/ext"
CONTAINER = "cannot align container"
INIT = "cannot align init container"
POD = "cannot align pod"

ALPHA = nrt(  # upstream's node1: container scope
    "alpha",
    zone(0, {"cpu": 4, "memory": "8Gi", NIC: 10}),
    zone(1, {"cpu": 8, "memory": "8Gi", NIC: 10}),
)
BETA = nrt(  # upstream's node2: container scope, hugepages, a NIC without NUMA affinity
    "beta",
    zone(0, {"cpu": 2, "memory": "4Gi", HUGEPAGES_2MI: "128Mi", NIC: 5}),
    zone(1, {"cpu": 4, "memory": "4Gi", HUGEPAGES_2MI: "128Mi", NIC: 2}),
)
GAMMA = nrt(  # upstream's node3: pod scope (deprecated topologyPolicies)
    "gamma",
    zone(0, {"cpu": 2, "memory": "4Gi", NIC: 5}),
    zone(1, {"cpu": 4, "memory": "4Gi", NIC: 2}),
    policy=None,
    scope=None,
    policies=["SingleNUMANodePodLevel"],
)
BROKEN = nrt(  # upstream's badly_formed_node: node-75 is no NUMA id, so it is left out
    "broken",
    zone(0, {"cpu": 2, "memory": "4Gi", NIC: 5}),
    zone(75, {"cpu": 4, "memory": "4Gi", NIC: 2}),
    scope="pod",
)
EXT = nrt(  # upstream's extended: an extended resource at node level only
    "ext",
    zone(0, {"cpu": 4, "memory": "8Gi", NIC: 10}),
    zone(1, {"cpu": 8, "memory": "8Gi", NIC: 10}),
)
NODES = {
    "alpha": (node_for(ALPHA), ALPHA),
    "beta": (node_for(BETA, {NIC_NO_NUMA: 4}), BETA),
    "gamma": (node_for(GAMMA), GAMMA),
    "broken": (node_for(BROKEN), BROKEN),
    "ext": (node_for(EXT, {EXTENDED: 1}), EXT),
    # ours: a node reporting 1Gi hugepages that no zone reports
    "delta": (node_for(ALPHA, {"hugepages-1Gi": "2Gi"}), ALPHA),
}


def verdict(node: str, p: Any) -> Status | None:
    return filter_all(table(NODES[node]), p)[0]


def unschedulable(reason: str) -> Status:
    return Status(Code.UNSCHEDULABLE, (reason,))


def burstable(requests: dict[str, Any], limits: dict[str, Any]) -> Any:
    return pod(requests, limits=[limits], guaranteed=False)


CASES = [
    # (upstream case, node, pod, wanted reason or None)
    (
        "Guaranteed QoS, pod with extended resource fit",
        "ext",
        pod({"cpu": 2, "memory": "2Gi", EXTENDED: 1, NIC: 3}),
        None,
    ),
    (
        "Guaranteed QoS, pod with extended resource no devices; pod fit",
        "ext",
        pod({"cpu": 2, "memory": "2Gi", EXTENDED: 1}),
        None,
    ),
    ("Best effort QoS, pod fit", "alpha", pod({}, guaranteed=False), None),
    (
        "Best effort QoS requesting devices, Pod Scope Topology policy; pod fit",
        "gamma",
        pod({NIC: 5}, guaranteed=False),
        None,
    ),
    (
        "Best effort QoS requesting devices, Pod Scope Topology policy; pod doesn't fit",
        "gamma",
        pod({NIC: 20}, guaranteed=False),
        POD,
    ),
    (
        "Best effort QoS requesting devices, Container Scope Topology policy; pod fit",
        "beta",
        pod({NIC: 5}, guaranteed=False),
        None,
    ),
    (
        "Best effort QoS requesting devices, Container Scope Topology policy; pod doesn't fit",
        "alpha",
        pod({NIC: 20}, guaranteed=False),
        CONTAINER,
    ),
    (
        "Best effort QoS requesting devices and extended resources, Container Scope Topology "
        "policy; pod doesn't fit (upstream's name; it wants the pod to pass)",
        "ext",
        pod({EXTENDED: 1, NIC: 10}, guaranteed=False),
        None,
    ),
    (
        "Best effort QoS, requesting CPU, memory (enough on NUMA) and devices (not enough), "
        "Container Scope Topology policy; pod doesn't fit",
        "beta",
        burstable({"cpu": 1, "memory": "1Gi", NIC: 11}, {"cpu": 2, "memory": "2Gi", NIC: 11}),
        CONTAINER,
    ),
    (
        "Best effort QoS, requesting CPU, memory (enough on NUMA) and devices (not enough), "
        "Pod Scope Topology policy; pod doesn't fit",
        "gamma",
        burstable({"cpu": 1, "memory": "1Gi", NIC: 11}, {"cpu": 2, "memory": "2Gi", NIC: 11}),
        POD,
    ),
    (
        "Best effort QoS requesting CPU, memory (not enough on NUMA) and devices, Pod Scope "
        "Topology policy; pod fit",
        "gamma",
        burstable({"cpu": 6, "memory": "6Gi", NIC: 3}, {"cpu": 7, "memory": "7Gi", NIC: 3}),
        None,
    ),
    (
        "Best effort QoS requesting CPU, memory (not enough on NUMA) and devices, Container "
        "Scope Topology policy; pod fit",
        "beta",
        burstable({"cpu": 6, "memory": "6Gi", NIC: 3}, {"cpu": 7, "memory": "7Gi", NIC: 3}),
        None,
    ),
    ("Guaranteed QoS, minimal, pod fit", "alpha", pod({"cpu": 2, "memory": "2Gi"}), None),
    (
        "Guaranteed QoS, minimal, saturating zone, pod fit",
        "alpha",
        pod({"cpu": 8, "memory": "8Gi"}),
        None,
    ),
    (
        "Guaranteed QoS, zero quantity of unavailable resource, pod fit",
        "alpha",
        pod({"cpu": 2, "memory": "2Gi", HUGEPAGES_2MI: 0, NIC: 3}),
        None,
    ),
    ("Guaranteed QoS, pod fit", "beta", pod({"cpu": 2, "memory": "2Gi", NIC: 3}), None),
    (
        "Guaranteed QoS, hugepages, pod fit",
        "beta",
        pod({"cpu": 2, "memory": "2Gi", HUGEPAGES_2MI: "64Mi", NIC: 3}),
        None,
    ),
    ("Burstable QoS, pod fit", "beta", pod({"cpu": 4, NIC: 2}, guaranteed=False), None),
    (
        "Burstable QoS, requesting CPU and devices (not enough), Container Scope Topology "
        "policy; pod doesn't fit",
        "beta",
        pod({"cpu": 1, NIC: 6}, guaranteed=False),
        CONTAINER,
    ),
    (
        "Burstable QoS, requesting CPU and devices (not enough), Pod Scope Topology policy; "
        "pod doesn't fit",
        "gamma",
        pod({"cpu": 1, NIC: 6}, guaranteed=False),
        POD,
    ),
    (
        "BurstableQoS requesting CPU (not enough on NUMA) and devices, Pod Scope Topology "
        "policy; pod fit",
        "gamma",
        pod({"cpu": 16, NIC: 5}, guaranteed=False),
        None,
    ),
    (
        "Burstable QoS requesting memory (not enough on NUMA) and devices, Container Scope "
        "Topology policy; pod fit",
        "beta",
        pod({"memory": "32Gi", NIC: 2}, guaranteed=False),
        None,
    ),
    (
        "Burstable QoS with extended resources, pod fit",
        "ext",
        pod({"cpu": 1, EXTENDED: 1}, guaranteed=False),
        None,
    ),
    (
        "Guaranteed QoS, hugepages, pod doesn't fit",
        "beta",
        pod({"cpu": 2, "memory": "2Gi", HUGEPAGES_2MI: "256Mi", NIC: 3}),
        CONTAINER,
    ),
    ("Guaranteed QoS, pod doesn't fit", "alpha", pod({"cpu": 9, "memory": "1Gi"}), CONTAINER),
    (
        "Guaranteed QoS Topology Scope, pod doesn't fit",
        "gamma",
        pod({"cpu": 5, "memory": "1Gi", NIC: 1}),
        POD,
    ),
    (
        "Guaranteed QoS Topology Scope, minimal, saturating zone, pod fit",
        "gamma",
        pod({"cpu": 4, "memory": "4Gi"}),
        None,
    ),
    (
        "Guaranteed QoS Topology Scope, pod fit",
        "gamma",
        pod(*[{"cpu": 1, "memory": "1Gi", "vendor.com/none": 0}] * 3),
        None,
    ),
    (
        "Guaranteed QoS Topology Scope, invalid node",
        "broken",
        pod(*[{"cpu": 1, "memory": "1Gi", "vendor.com/none": 0}] * 3),
        POD,
    ),
    (
        "Guaranteed QoS, hugepages, non-NUMA affine NIC, pod fit",
        "beta",
        pod({"cpu": 2, "memory": "2Gi", HUGEPAGES_2MI: "64Mi", NIC_NO_NUMA: 3}),
        None,
    ),
    (
        "Guaranteed QoS, ephemeral-storage (non-NUMA), pod fit",
        "beta",
        pod({"cpu": 2, "memory": "2Gi", "ephemeral-storage": "100Mi"}),
        None,
    ),
    # ours: a device the node does not have at all fails early
    (
        "ours: device missing at node level",
        "alpha",
        pod({"cpu": 1, "memory": "1Gi", GPU: 1}),
        CONTAINER,
    ),
    # ours: a native resource no cell reports fails (only devices and ephemeral-storage pass)
    (
        "ours: native resource without NUMA affinity",
        "delta",
        pod({"cpu": 1, "memory": "1Gi", "hugepages-1Gi": "1Gi"}),
        CONTAINER,
    ),
]


@pytest.mark.parametrize(("case", "node", "p", "reason"), CASES, ids=[c[0] for c in CASES])
def test_node_resource_topology(case: str, node: str, p: Any, reason: str | None) -> None:
    # upstream: TestNodeResourceTopology
    got = verdict(node, p)
    assert got == (None if reason is None else unschedulable(reason))


HOST = nrt(
    "host0",
    zone(0, {"cpu": 28, "memory": "56Gi", HUGEPAGES_2MI: "384Mi", NIC: 16}),
    zone(1, {"cpu": 32, "memory": "64Gi", HUGEPAGES_2MI: "512Mi", NIC: 32}),
)
MULTI_CONTAINER_SCOPE = [
    (
        "[1][tier3] single container with good allocation - fit",
        (),
        [{"cpu": 2, "memory": "4G"}],
        None,
    ),
    (
        "[2][tier3] single container with cpu over allocation",
        (),
        [{"cpu": 40, "memory": "4G"}],
        CONTAINER,
    ),
    (
        "[2][tier3] single container with memory over allocation",
        (),
        [{"cpu": 2, "memory": "100G"}],
        CONTAINER,
    ),
    (
        "[4][tier2] multi-containers with good allocation, spread across NUMAs - fit",
        (),
        [{"cpu": 20, "memory": "40G"}, {"cpu": 20, "memory": "40G"}],
        None,
    ),
    (
        "[4][tier1] multi containers with good devices and hugepages allocation, spread across "
        "NUMAs - fit",
        (),
        [
            {"cpu": 2, "memory": "6G", HUGEPAGES_2MI: "500Mi", NIC: 16},
            {"cpu": 2, "memory": "6G", HUGEPAGES_2MI: "50Mi", NIC: 8},
        ],
        None,
    ),
    (
        "[7][tier1] init container with cpu over allocation - not fit",
        ({"cpu": 40, "memory": "40G"},),
        [{"cpu": 1, "memory": "4G"}] * 2,
        INIT,
    ),
    (
        "[11][tier1] init container with good allocation, multi-containers spread across NUMAs",
        ({"cpu": 4, "memory": "10G"},),
        [{"cpu": 20, "memory": "40G"}] * 2,
        None,
    ),
    (
        "[24][tier1] multi init containers with good allocation, multi-containers with over cpu "
        "allocation - not fit",
        ({"cpu": 25, "memory": "10G"},) * 2,
        [{"cpu": 20, "memory": "40G"}, {"cpu": 20, "memory": "40G"}, {"cpu": 20, "memory": "6G"}],
        CONTAINER,
    ),
    (
        "[29][tier1] multi init containers when sum of their cpus requests (together) is over "
        "allocatable - fit",
        ({"cpu": 25, "memory": "10G"},) * 3,
        [{"cpu": 20, "memory": "40G"}, {"cpu": 20, "memory": "40G"}, {"cpu": 2, "memory": "6G"}],
        None,
    ),
    (
        "[32][tier1] multi init containers with over memory allocation - not fit",
        ({"cpu": 20, "memory": "50G"}, {"cpu": 20, "memory": "70G"}, {"cpu": 3, "memory": "50G"}),
        [{"cpu": 20, "memory": "40G"}],
        INIT,
    ),
]


@pytest.mark.parametrize(
    ("case", "init", "containers", "reason"),
    MULTI_CONTAINER_SCOPE,
    ids=[c[0] for c in MULTI_CONTAINER_SCOPE],
)
def test_multi_container_container_scope(
    case: str,
    init: tuple[dict[str, Any], ...],
    containers: list[dict[str, Any]],
    reason: str | None,
) -> None:
    # upstream: TestNodeResourceTopologyMultiContainerContainerScope
    got = filter_all(table((node_for(HOST), HOST)), pod(*containers, init=init))[0]
    assert got == (None if reason is None else unschedulable(reason))


POD_HOST = nrt(
    "host1",
    zone(0, {"cpu": 16, "memory": "32Gi", HUGEPAGES_2MI: "256Mi", NIC: 4}),
    zone(1, {"cpu": 16, "memory": "32Gi", HUGEPAGES_2MI: "256Mi", NIC: 4}),
    scope="pod",
)
MULTI_POD_SCOPE = [
    ("gu pod fits only on a numa node", (), [{"cpu": 8, "memory": "16Gi"}] * 2, None),
    (
        "gu pod does not fit - not enough CPUs available on any NUMA node",
        (),
        [{"cpu": 9, "memory": "1Gi"}, {"cpu": 8, "memory": "1Gi"}],
        POD,
    ),
    (
        "gu pod does not fit - not enough memory available on any NUMA node",
        (),
        [{"cpu": 1, "memory": "20Gi"}, {"cpu": 1, "memory": "13Gi"}],
        POD,
    ),
    (
        "gu pod does not fit - not enough Hugepages available on any NUMA node",
        (),
        [
            {"cpu": 1, "memory": "1Gi", HUGEPAGES_2MI: "200Mi"},
            {"cpu": 1, "memory": "1Gi", HUGEPAGES_2MI: "100Mi"},
        ],
        POD,
    ),
    (
        "gu pod does not fit - not enough devices available on any NUMA node",
        (),
        [{"cpu": 1, "memory": "1Gi", NIC: 3}, {"cpu": 1, "memory": "1Gi", NIC: 2}],
        POD,
    ),
    # ours: the pod's effective request is raised to its largest init container's
    (
        "ours: init container larger than the containers' sum",
        ({"cpu": 17, "memory": "1Gi"},),
        [{"cpu": 4, "memory": "1Gi"}] * 2,
        POD,
    ),
    (
        "ours: init container smaller than the containers' sum",
        ({"cpu": 10, "memory": "1Gi"},),
        [{"cpu": 4, "memory": "1Gi"}] * 2,
        None,
    ),
]


@pytest.mark.parametrize(
    ("case", "init", "containers", "reason"), MULTI_POD_SCOPE, ids=[c[0] for c in MULTI_POD_SCOPE]
)
def test_multi_container_pod_scope(
    case: str,
    init: tuple[dict[str, Any], ...],
    containers: list[dict[str, Any]],
    reason: str | None,
) -> None:
    # upstream: TestNodeResourceTopologyMultiContainerPodScope
    got = filter_all(table((node_for(POD_HOST), POD_HOST)), pod(*containers, init=init))[0]
    assert got == (None if reason is None else unschedulable(reason))


def test_nodes_without_topology_or_single_numa_policy_pass() -> None:
    # upstream Filter: a missing NRT (passthrough cache: nil, ok) and any other policy pass
    big = pod({"cpu": 64, "memory": "1Gi"})
    restricted = nrt("r", zone(0, {"cpu": 1, "memory": "1Gi"}), policy="restricted")
    unknown = nrt("u", zone(0, {"cpu": 1, "memory": "1Gi"}), policy="bogus")  # ignored: none
    none = nrt("n", zone(0, {"cpu": 1, "memory": "1Gi"}), policy=None, scope=None)
    plain = node_for(nrt("x", zone(0, {"cpu": 1, "memory": "1Gi"})))
    t = table(
        (plain, None),
        (node_for(restricted), restricted),
        (node_for(unknown), unknown),
        (node_for(none), none),
    )
    assert filter_all(t, big) == [None] * 4


def test_attributes_override_the_deprecated_policies() -> None:
    # upstream config_test.go attributes-overrides-policy-partial: the scope attribute wins
    topology = nrt(
        "n",
        zone(0, {"cpu": 2, "memory": "2Gi"}),
        zone(1, {"cpu": 2, "memory": "2Gi"}),
        policy=None,
        scope="pod",
        policies=["SingleNUMANodeContainerLevel"],
    )
    two = pod({"cpu": 2, "memory": "1Gi"}, {"cpu": 2, "memory": "1Gi"})
    assert filter_all(table((node_for(topology), topology)), two) == [unschedulable(POD)]


def test_a_cell_given_a_non_numa_device_refuses_the_next_container() -> None:
    # ours: subtractFromNUMA adds a resource the cell does not report to it, negative; the
    # next container asking for that device then finds a cell reporting it short.
    one = pod({"cpu": 1, "memory": "1Gi", NIC_NO_NUMA: 1})
    two = pod(*[{"cpu": 1, "memory": "1Gi", NIC_NO_NUMA: 1}] * 2)
    t = table(NODES["beta"])
    assert filter_all(t, one) == [None]
    assert filter_all(t, two) == [unschedulable(CONTAINER)]


def test_a_container_with_only_exempt_requests_aligns_to_cell_zero() -> None:
    # ours: bitmask.Fill() is left full, so GetBits()[0] is 0 whether or not cell 0 exists
    cells = numa_nodes(nrt("n", zone(1, {"cpu": 4, "memory": "4Gi"})))
    alignment = align(cells, {NIC_NO_NUMA: 1, "cpu": 0}, "Guaranteed", {NIC_NO_NUMA: 2})
    assert alignment.fits and alignment.chosen == 0 and len(alignment.numa_ids) == 64
    missing = align(cells, {"cpu": 8000}, "Guaranteed", {})
    assert not missing.fits and missing.chosen == 8  # highestNUMAID when nothing fits


@pytest.mark.parametrize(
    ("node", "p", "detail"),
    [
        (
            "alpha",
            pod({"cpu": 9, "memory": "1Gi"}),
            "container c0: cpu 9 fits no NUMA zone (node-0 has 4, node-1 has 8)",
        ),
        (
            "alpha",
            pod({"cpu": 1, "memory": "1Gi", GPU: 1}),
            "container c0: the node has no vendor.com/gpu",
        ),
        (
            "delta",
            pod({"cpu": 1, "memory": "1Gi", "hugepages-1Gi": "1Gi"}),
            "container c0: hugepages-1Gi 1Gi is in no NUMA zone",
        ),
        (
            "beta",
            pod({"cpu": 3, "memory": "1Gi", NIC: 3}),
            "container c0: no single NUMA zone fits cpu 3 (node-1) and memory 1Gi (node-0, node-1) "
            "and vendor.com/nic 3 (node-0)",
        ),
        (
            "gamma",
            pod({"cpu": 5, "memory": "1Gi"}),
            "pod: cpu 5 fits no NUMA zone (node-0 has 2, node-1 has 4)",
        ),
        (
            "alpha",
            pod({"cpu": 1, "memory": "1Gi"}, init=({"cpu": "8500m", "memory": "1Gi"},)),
            "init container i0: cpu 8500m fits no NUMA zone (node-0 has 4, node-1 has 8)",
        ),
    ],
)
def test_a_rejection_carries_the_zone_detail(node: str, p: Any, detail: str) -> None:
    # ours: what upstream logs (klog V(2) container and kind, V(5) per-resource verdicts),
    # kept as Status.detail; the reason itself stays upstream's
    got = verdict(node, p)
    assert got is not None
    assert got.detail == (detail,)
    assert got.message in (CONTAINER, INIT, POD)
