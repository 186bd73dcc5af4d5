"""NodePorts against kube-scheduler v1.28's node_ports_test.go and HostPortInfo.CheckConflict."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from eventsched.framework import (
    ASSIGNED_POD_DELETE,
    NODE_ADD,
    NODE_UPDATE,
    Code,
    CycleState,
    Status,
)
from eventsched.model import NodeTable, Pod
from eventsched.model.podspec import HostPort
from eventsched.plugins.nodeports import ERR_REASON, NodePorts
from tests.plugins.conftest import make_node, plugin, run_filter


def ports_pod(name: str, *specs: str, **spec: Any) -> Pod:
    """upstream's `newPod(host, "PROTO/IP/PORT", ...)`: one container with those host ports."""
    ports = []
    for text in specs:
        protocol, ip, port = text.split("/")
        ports.append(
            {"containerPort": int(port), "hostPort": int(port), "protocol": protocol, "hostIP": ip}
        )
    meta = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    containers = [{"name": "c", "image": "img", "ports": ports}]
    return Pod.from_manifest({"metadata": meta, "spec": {"containers": containers, **spec}})


def one_node_with(*specs: str) -> NodeTable:
    """upstream's `framework.NewNodeInfo(newPod("m1", ...))`: a node holding one such pod."""
    table = NodeTable([make_node("m1")])
    if specs:
        table.add_pod(ports_pod("existing", *specs), "m1")
    return table


UNSCHEDULABLE = Status.unschedulable(ERR_REASON)

# TestNodePorts (v1.28), case by case: (name, pod's ports, node's used ports, want rejected).
NODE_PORTS_CASES = [
    ("other port", ("UDP/127.0.0.1/8080",), ("UDP/127.0.0.1/9090",), False),
    ("same udp port", ("UDP/127.0.0.1/8080",), ("UDP/127.0.0.1/8080",), True),
    ("same tcp port", ("TCP/127.0.0.1/8080",), ("TCP/127.0.0.1/8080",), True),
    ("different host ip", ("TCP/127.0.0.1/8080",), ("TCP/127.0.0.2/8080",), False),
    ("different protocol", ("UDP/127.0.0.1/8080",), ("TCP/127.0.0.1/8080",), False),
    (
        "second udp port conflict",
        ("UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
        ("UDP/127.0.0.1/8080",),
        True,
    ),
    (
        "first tcp port conflict",
        ("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
        ("TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"),
        True,
    ),
    (
        "first tcp port conflict due to 0.0.0.0 hostIP",
        ("TCP/0.0.0.0/8001",),
        ("TCP/127.0.0.1/8001",),
        True,
    ),
    (
        "TCP hostPort conflict due to 0.0.0.0 hostIP",
        ("TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
        ("TCP/127.0.0.1/8001",),
        True,
    ),
    (
        "second tcp port conflict to 0.0.0.0 hostIP",
        ("TCP/127.0.0.1/8001",),
        ("TCP/0.0.0.0/8001",),
        True,
    ),
    ("second different protocol", ("UDP/127.0.0.1/8001",), ("TCP/0.0.0.0/8001",), False),
    (
        "UDP hostPort conflict due to 0.0.0.0 hostIP",
        ("UDP/127.0.0.1/8001",),
        ("TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"),
        True,
    ),
]


@pytest.mark.parametrize(
    ("case", "wanted", "used", "rejected"), NODE_PORTS_CASES, ids=[c[0] for c in NODE_PORTS_CASES]
)
def test_node_ports_upstream_table(
    case: str, wanted: tuple[str, ...], used: tuple[str, ...], rejected: bool
) -> None:
    """TestNodePorts: PreFilter succeeds, Filter is Unschedulable with ErrReason on conflict."""
    pod = ports_pod("p", *wanted)
    p = plugin("NodePorts")
    state = CycleState()
    _, status = p.pre_filter(state, pod, one_node_with(*used))
    assert status is None
    assert run_filter("NodePorts", pod, one_node_with(*used)) == [
        UNSCHEDULABLE if rejected else None
    ]


def test_skip_when_the_pod_asks_for_no_host_port() -> None:
    """TestNodePorts "skip filter": v1.28's PreFilter returns Skip for a pod without ports."""
    p = plugin("NodePorts")
    _, status = p.pre_filter(CycleState(), ports_pod("p"), one_node_with())
    assert status is not None and status.code == Code.SKIP


def test_container_ports_without_host_port_and_init_container_ports_are_skipped() -> None:
    """Only regular containers' host ports count in v1.28 (`getContainerPorts`); a
    containerPort alone is no host port. TestNodePorts' "non-sidecar initContainer using
    hostPort" is Skip too; its sidecar case expects a conflict only since kubernetes#132040,
    long after v1.28, so here it is Skip as well."""
    meta = {"name": "p", "namespace": "default", "uid": "uid-p"}
    init_port = {"containerPort": 8001, "hostPort": 8001, "protocol": "TCP"}
    for restart in ("Never", "Always"):
        pod = Pod.from_manifest(
            {
                "metadata": meta,
                "spec": {
                    "containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}]}],
                    "initContainers": [
                        {"name": "i", "image": "i", "restartPolicy": restart, "ports": [init_port]}
                    ],
                },
            }
        )
        _, status = plugin("NodePorts").pre_filter(
            CycleState(), pod, one_node_with("TCP/0.0.0.0/8001")
        )
        assert status is not None and status.code == Code.SKIP


def test_filter_without_pre_filter_is_an_error() -> None:
    """TestPreFilterDisabled: Filter without PreFilter's state returns an Error status."""
    table = one_node_with()
    result = plugin("NodePorts").filter_batch(
        CycleState(), ports_pod("p", "TCP/0.0.0.0/80"), table, np.arange(1)
    )
    assert result.verdict.tolist() == [0]
    error = result.statuses[0]
    assert error.code == Code.ERROR
    assert error.reasons == ('reading "PreFilterNodePorts" from cycleState: not found',)


# TestFits (v1.28): (desc, pod's ports, node's ports, fits).
FITS_CASES = [
    ("non-conflicting ports", ("TCP/127.0.0.1/80",), ("TCP/127.0.0.1/9090",), True),
    (
        "multiple non-conflicting ports",
        ("TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"),
        ("TCP/127.0.0.1/9090", "TCP/127.0.0.1/9191", "TCP/127.0.1.1/8080"),
        True,
    ),
    ("same ports on different protocols", ("TCP/127.0.0.1/80",), ("UDP/127.0.0.1/80",), True),
    ("conflicting ports", ("TCP/127.0.0.1/80",), ("TCP/127.0.0.1/80",), False),
    (
        "multiple ports, some conflicting",
        ("TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"),
        ("TCP/127.0.0.1/9090", "TCP/127.0.1.1/90", "TCP/127.0.1.1/8080"),
        False,
    ),
]


@pytest.mark.parametrize(
    ("desc", "wanted", "used", "fits"), FITS_CASES, ids=[c[0] for c in FITS_CASES]
)
def test_fits_upstream_table(
    desc: str, wanted: tuple[str, ...], used: tuple[str, ...], fits: bool
) -> None:
    """TestFits."""
    statuses = run_filter("NodePorts", ports_pod("p", *wanted), one_node_with(*used))
    assert statuses == [None if fits else UNSCHEDULABLE]


def test_host_port_conflicts_is_check_conflict() -> None:
    """`HostPort.conflicts` is `HostPortInfo.CheckConflict` for one used port, both ways
    (types_test.go TestHostPortInfo_Check, in spirit)."""
    any_ip = HostPort(80, "TCP", "0.0.0.0")
    one_ip = HostPort(80, "TCP", "127.0.0.1")
    assert any_ip.conflicts(one_ip) and one_ip.conflicts(any_ip)
    assert one_ip.conflicts(HostPort(80, "TCP", "127.0.0.1"))
    assert not one_ip.conflicts(HostPort(80, "TCP", "127.0.0.2"))
    assert not one_ip.conflicts(HostPort(80, "UDP", "127.0.0.1"))
    assert not any_ip.conflicts(HostPort(81, "TCP", "0.0.0.0"))
    # A port <= 0 is no host port: CheckConflict answers false, Add ignores it.
    assert not HostPort(0, "TCP", "0.0.0.0").conflicts(HostPort(0, "TCP", "0.0.0.0"))
    # Only 0.0.0.0 is the wildcard, as upstream (no special case for "::").
    assert not HostPort(80, "TCP", "::").conflicts(one_ip)


def test_empty_host_ip_and_protocol_default_to_any_ip_and_tcp() -> None:
    """HostPortInfo's sanitize: "" is 0.0.0.0 and TCP."""
    meta = {"name": "x", "namespace": "default", "uid": "uid-x"}
    pod = Pod.from_manifest(
        {"metadata": meta, "spec": {"containers": [{"name": "c", "ports": [{"hostPort": 53}]}]}}
    )
    assert pod.host_ports == (HostPort(53, "TCP", "0.0.0.0"),)
    table = NodeTable([make_node("a")])
    table.add_pod(pod, "a")
    assert run_filter("NodePorts", ports_pod("p", "TCP/10.0.0.1/53"), table) == [UNSCHEDULABLE]
    assert run_filter("NodePorts", ports_pod("p", "UDP/10.0.0.1/53"), table) == [None]


def test_used_ports_are_the_union_over_the_nodes_pods_and_follow_the_table() -> None:
    table = NodeTable([make_node(n) for n in ("a", "b", "c", "d")])
    table.add_pod(ports_pod("x", "TCP/0.0.0.0/80"), "a")
    table.add_pod(ports_pod("y", "TCP/0.0.0.0/443"), "b")
    table.add_pod(ports_pod("z", "TCP/0.0.0.0/80"), "b")
    table.add_pod(ports_pod("w"), "c")  # no host port
    pod = ports_pod("p", "TCP/0.0.0.0/80")
    p = plugin("NodePorts", table=table)
    state = CycleState()
    p.pre_filter(state, pod, table)
    rows = np.arange(len(table))
    assert p.filter_batch(state, pod, table, rows).passed.tolist() == [False, False, True, True]
    # Only the candidate rows asked about are judged, in the order given.
    assert p.filter_batch(state, pod, table, np.array([3, 1])).passed.tolist() == [True, False]
    # The index follows the table: a deletion frees the port on b only once z is gone too.
    table.remove_pod("uid-y", "b")
    assert p.filter_batch(state, pod, table, rows).passed.tolist() == [False, False, True, True]
    table.remove_pod("uid-z", "b")
    assert p.filter_batch(state, pod, table, rows).passed.tolist() == [False, True, True, True]
    table.remove_node("a")
    assert p.filter_batch(state, pod, table, np.arange(len(table))).passed.tolist() == [True] * 3


def test_nodes_with_the_same_ports_are_judged_once() -> None:
    """A DaemonSet's host port on every node: one distinct port set, one judgement."""
    table = NodeTable([make_node(f"n{i}") for i in range(50)])
    for i in range(50):
        table.add_pod(ports_pod(f"ds-{i}", "TCP/0.0.0.0/9100"), f"n{i}")
    p: NodePorts = plugin("NodePorts", table=table)
    index = p.port_index(table)
    assert len(index.port_sets) == 1
    assert (
        run_filter("NodePorts", ports_pod("p", "TCP/0.0.0.0/9100"), table) == [UNSCHEDULABLE] * 50
    )
    assert run_filter("NodePorts", ports_pod("p", "TCP/0.0.0.0/9101"), table) == [None] * 50


def test_events_to_register_as_v1_28() -> None:
    """EventsToRegister: Pod/Delete (assigned pods) and Node/Add|Update."""
    assert tuple(plugin("NodePorts").events_to_register()) == (
        ASSIGNED_POD_DELETE,
        NODE_ADD,
        NODE_UPDATE,
    )


def test_takes_no_args() -> None:
    from eventsched.framework import PluginArgsError

    with pytest.raises(PluginArgsError, match="NodePorts takes no args"):
        plugin("NodePorts", {"ports": []})
