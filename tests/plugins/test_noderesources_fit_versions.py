"""NodeResourcesFit and NodePorts by version: what changed after v1.28.

- From v1.34 (kubernetes#131345) a node whose allocatable is less than the pod asks for
  rejects it UnschedulableAndUnresolvable: fit_test.go TestEnoughRequests (v1.37.2),
  whose cases are run here at v1.28 (always Unschedulable), v1.34 and v1.37.
- SidecarContainers off: fit_test.go TestRestartableInitContainers (v1.28.0: Filter;
  v1.30 on: PreFilter).
- Pod-level requests count for Filter, and from v1.33 not for the pod's score.
- NodePorts: a sidecar's host ports count from v1.34 (node_ports_test.go TestNodePorts
  "TCP hostPort conflict from sidecar initContainer", kubernetes#132040).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from eventsched.config.featuregates import features_for
from eventsched.framework import Code, CycleState, Features, Handle, Status
from eventsched.model import Node, NodeTable, Pod
from eventsched.plugins import full_registry

EXT_A, EXT_B = "example.com/aaa", "example.com/bbb"
K8S_A, K8S_B = "kubernetes.io/something", "subdomain.kubernetes.io/something"
HUGE_A = "hugepages-2Mi"
#: fit_test.go: makeAllocatableResources(10, 20, 32, 5, 20, 5)
ALLOCATABLE = {
    "cpu": "10m",
    "memory": "20",
    "pods": "32",
    EXT_A: "5",
    "ephemeral-storage": "20",
    HUGE_A: "5",
}
VERSIONS = ("1.28", "1.34", "1.37")
U, UU = Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def res(cpu: int = 0, mem: int = 0, **scalars: int) -> dict[str, str]:
    """framework.Resource{MilliCPU, Memory, ScalarResources} as requests."""
    out = {"cpu": f"{cpu}m", "memory": str(mem)}
    out.update((k, str(v)) for k, v in scalars.items())
    return out


def scalars(**kw: int) -> dict[str, int]:
    names = {"ext_a": EXT_A, "ext_b": EXT_B, "k8s_a": K8S_A, "k8s_b": K8S_B, "huge_a": HUGE_A}
    return {names[k]: v for k, v in kw.items()}


def pod_manifest(
    name: str,
    containers: list[dict[str, str]],
    init: list[dict[str, str]] = (),  # type: ignore[assignment]
    overhead: dict[str, str] | None = None,
    pod_level: dict[str, str] | None = None,
    sidecar: bool = False,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {"name": f"c{i}", "resources": {"requests": r}}
            for i, r in enumerate(containers or [{}])
        ]
    }
    if init:
        spec["initContainers"] = [
            {
                "name": f"i{i}",
                "resources": {"requests": r},
                **({"restartPolicy": "Always"} if sidecar else {}),
            }
            for i, r in enumerate(init)
        ]
    if overhead is not None:
        spec["overhead"] = overhead
    if pod_level is not None:
        spec["resources"] = {"requests": pod_level}
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}, "spec": spec}


def make_plugin(
    name: str, features: Features, table: NodeTable, args: dict[str, Any] | None = None
) -> Any:
    return full_registry().factory(name)(args or {}, Handle(table), features)


def filter_one(
    name: str, features: Features, pod: Pod, table: NodeTable, args: dict[str, Any] | None = None
) -> tuple[Status | None, Status | None]:
    """(PreFilter's status, the first node's Filter status), as the runtime runs them."""
    p = make_plugin(name, features, table, args)
    state = CycleState()
    _, pre = p.pre_filter(state, pod, table)
    if pre is not None:
        return pre, None
    result = p.filter_batch(state, pod, table, np.arange(len(table)))
    verdict = int(result.verdict[0])
    return None, None if verdict < 0 else result.statuses[verdict]


@dataclass(frozen=True)
class Enough:
    name: str
    pod: dict[str, Any]
    used: dict[str, str] = field(default_factory=dict)
    #: (code at v1.37, reasons); None: fits.
    want: tuple[Code, tuple[str, ...]] | None = None
    args: dict[str, Any] = field(default_factory=dict)


def enough(
    name: str, containers: list[dict[str, str]], used: dict[str, str], want: Any = None, **kw: Any
) -> Enough:
    args = kw.pop("args", {})
    return Enough(name, pod_manifest("p", containers, **kw), used, want, args)


def ins(resource: str) -> str:
    return f"Insufficient {resource}"


# from pkg/scheduler/framework/plugins/noderesources/fit_test.go TestEnoughRequests (v1.37.2)
ENOUGH_REQUESTS = [
    enough("no resources requested always fits", [{}], res(10, 20)),
    enough("too many resources fails", [res(1, 1)], res(10, 20), (U, (ins("cpu"), ins("memory")))),
    enough(
        "too many resources fails due to init container cpu",
        [res(1, 1)],
        res(8, 19),
        (U, (ins("cpu"),)),
        init=[res(3, 1)],
    ),
    enough(
        "too many resources fails due to highest init container cpu",
        [res(1, 1)],
        res(8, 19),
        (U, (ins("cpu"),)),
        init=[res(3, 1), res(2, 1)],
    ),
    enough(
        "too many resources fails due to init container memory",
        [res(1, 1)],
        res(9, 19),
        (U, (ins("memory"),)),
        init=[res(1, 3)],
    ),
    enough(
        "init container fits because it's the max, not sum, of containers and init containers",
        [res(1, 1)],
        res(9, 19),
        init=[res(1, 1)],
    ),
    enough("both resources fit", [res(1, 1)], res(5, 5)),
    enough("one resource memory fits", [res(2, 1)], res(9, 5), (U, (ins("cpu"),))),
    enough("one resource cpu fits", [res(1, 2)], res(5, 19), (U, (ins("memory"),))),
    enough("equal edge case", [res(5, 1)], res(5, 19)),
    enough("equal edge case for init container", [res(4, 1)], res(5, 19), init=[res(5, 1)]),
    enough("extended resource fits", [res(**scalars(ext_a=1))], res()),
    enough(
        "extended resource capacity enforced",
        [res(1, 1, **scalars(ext_a=10))],
        res(),
        (UU, (ins(EXT_A),)),
    ),
    enough(
        "extended resource capacity enforced for init container",
        [{}],
        res(),
        (UU, (ins(EXT_A),)),
        init=[res(1, 1, **scalars(ext_a=10))],
    ),
    enough(
        "extended resource allocatable enforced",
        [res(1, 1, **scalars(ext_a=1))],
        res(**scalars(ext_a=5)),
        (U, (ins(EXT_A),)),
    ),
    enough(
        "extended resource allocatable enforced for multiple containers",
        [res(1, 1, **scalars(ext_a=3)), res(1, 1, **scalars(ext_a=3))],
        res(**scalars(ext_a=2)),
        (UU, (ins(EXT_A),)),
    ),
    enough(
        "extended resource allocatable admits multiple init containers",
        [{}],
        res(**scalars(ext_a=2)),
        init=[res(1, 1, **scalars(ext_a=3)), res(1, 1, **scalars(ext_a=3))],
    ),
    enough(
        "extended resource allocatable enforced for multiple init containers",
        [{}],
        res(**scalars(ext_a=2)),
        (UU, (ins(EXT_A),)),
        init=[res(1, 1, **scalars(ext_a=6)), res(1, 1, **scalars(ext_a=3))],
    ),
    enough(
        "extended resource allocatable enforced for unknown resource",
        [res(1, 1, **scalars(ext_b=1))],
        res(),
        (UU, (ins(EXT_B),)),
    ),
    enough(
        "kubernetes.io resource capacity enforced",
        [res(1, 1, **scalars(k8s_a=10))],
        res(),
        (UU, (ins(K8S_A),)),
    ),
    enough(
        "kubernetes.io resource capacity enforced for init container",
        [{}],
        res(),
        (UU, (ins(K8S_B),)),
        init=[res(1, 1, **scalars(k8s_b=10))],
    ),
    enough(
        "hugepages resource capacity enforced",
        [res(1, 1, **scalars(huge_a=10))],
        res(),
        (UU, (ins(HUGE_A),)),
    ),
    enough(
        "hugepages resource allocatable enforced for multiple containers",
        [res(1, 1, **scalars(huge_a=3)), res(1, 1, **scalars(huge_a=3))],
        res(**scalars(huge_a=2)),
        (UU, (ins(HUGE_A),)),
    ),
    enough(
        "skip checking ignored extended resource",
        [res(1, 1, **scalars(ext_b=1))],
        res(),
        args={"ignoredResources": [EXT_B]},
    ),
    enough(
        "resources + pod overhead fits",
        [res(1, 1)],
        res(5, 5),
        overhead={"cpu": "3m", "memory": "13"},
    ),
    enough(
        "requests + overhead does not fit for memory",
        [res(1, 1)],
        res(5, 5),
        (U, (ins("memory"),)),
        overhead={"cpu": "1m", "memory": "15"},
    ),
    enough(
        "skip checking ignored extended resource via resource groups",
        [res(1, 1, **scalars(ext_b=1, k8s_a=1))],
        res(),
        (UU, (ins(K8S_A),)),
        args={"ignoredResourceGroups": ["example.com"]},
    ),
    enough(
        "pod-level cpu resource not fit",
        [res(1, 1)],
        res(5, 5),
        (U, (ins("cpu"),)),
        pod_level={"cpu": "7m", "memory": "2"},
    ),
    enough(
        "pod-level memory resource not fit",
        [res(1, 1)],
        res(5, 19),
        (U, (ins("memory"),)),
        pod_level={"cpu": "3m", "memory": "2"},
    ),
    enough(
        "both pod-level and container-level resources fit",
        [res(1, 1)],
        res(5, 5),
        pod_level={"cpu": "1m", "memory": "2"},
    ),
    enough(
        "pod-level hugepages resource not fit",
        [{}],
        res(),
        (UU, (ins(HUGE_A),)),
        pod_level={"cpu": "3m", "memory": "2", HUGE_A: "10"},
    ),
]
#: At v1.28 pod-level requests do not exist: these pods ask for what their containers do.
FITS_AT_128 = {
    "pod-level cpu resource not fit",
    "pod-level memory resource not fit",
    "pod-level hugepages resource not fit",
}


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", ENOUGH_REQUESTS, ids=lambda c: c.name)
def test_enough_requests(case: Enough, version: str) -> None:
    features = features_for(version)
    accounting = features.accounting
    table = NodeTable(
        [Node.from_manifest({"metadata": {"name": "n"}, "status": {"allocatable": ALLOCATABLE}})]
    )
    table.add_pod(Pod.from_manifest(pod_manifest("used", [case.used]), accounting=accounting), "n")
    pod = Pod.from_manifest(case.pod, accounting=accounting)
    pre, status = filter_one("NodeResourcesFit", features, pod, table, case.args)
    assert pre is None
    want = case.want
    if version == "1.28" and case.name in FITS_AT_128:
        want = None
    if want is None:
        assert status is None
        return
    assert status is not None and status.reasons == want[1]
    # v1.28: never UnschedulableAndUnresolvable (no InsufficientResource.Unresolvable).
    assert status.code == (U if version == "1.28" else want[0])


SIDECAR = "Pod has a restartable init container and the SidecarContainers feature is disabled"


@pytest.mark.parametrize(
    ("version", "gates", "pre_filter", "filter_status"),
    [
        # fit_test.go v1.28.0 TestRestartableInitContainers: refused in Filter, gate off.
        ("1.28", {}, None, (UU, (SIDECAR,))),
        ("1.28", {"SidecarContainers": True}, None, None),
        # v1.30-v1.36: in PreFilter (fit.go); the gate is locked on from v1.33.
        ("1.32", {"SidecarContainers": False}, (UU, (SIDECAR,)), None),
        ("1.34", {}, None, None),
        # v1.37: the check is gone with the gate; fit_test.go "allow pod with restartable
        # init containers".
        ("1.37", {}, None, None),
    ],
)
def test_restartable_init_containers(
    version: str, gates: dict[str, bool], pre_filter: Any, filter_status: Any
) -> None:
    features = features_for(version, gates)
    table = NodeTable(
        [
            Node.from_manifest(
                {"metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "2m", "pods": "1"}}}
            )
        ]
    )
    pod = Pod.from_manifest(
        pod_manifest("p", [{}], init=[{}], sidecar=True), accounting=features.accounting
    )
    pre, status = filter_one("NodeResourcesFit", features, pod, table)
    assert (None if pre is None else (pre.code, pre.reasons)) == pre_filter
    assert (None if status is None else (status.code, status.reasons)) == filter_status


def test_v1_37_sidecar_beyond_allocatable_is_unresolvable() -> None:
    """fit_test.go v1.37.2 TestRestartableInitContainers "not allow pod if the total
    requested resources do exceed the node's allocatable resources"."""
    features = features_for("1.37")
    table = NodeTable(
        [
            Node.from_manifest(
                {"metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "2m", "pods": "1"}}}
            )
        ]
    )
    manifest = pod_manifest("p", [{"cpu": "1m"}], init=[{"cpu": "2m"}], sidecar=True)
    pod = Pod.from_manifest(manifest, accounting=features.accounting)
    _, status = filter_one("NodeResourcesFit", features, pod, table)
    assert status is not None and (status.code, status.reasons) == (UU, (ins("cpu"),))


def scores(name: str, features: Features, pod: Pod, table: NodeTable) -> list[int]:
    p = make_plugin(name, features, table)
    state = CycleState()
    rows = np.arange(len(table))
    p.pre_filter(state, pod, table) if hasattr(p, "pre_filter") else None
    if hasattr(p, "pre_score"):
        p.pre_score(state, pod, table, rows)
    return [int(x) for x in p.score_batch(state, pod, table, rows)]


def test_fit_scores_a_pod_as_its_containers_ask_from_v1_33() -> None:
    """fit.go `nodeResourceStrategyTypeMap` builds the scorer without the pod-level flag
    (v1.33 on), so `calculatePodResourceRequest` skips pod-level requests: the pod with
    pod-level cpu 2 scores as one asking 500m; BalancedAllocation's scorer has the flag
    (balanced_allocation.go), so there the 2 cpu count. At v1.32 (PodLevelResources on)
    Fit's scorer read the gate itself."""
    node = Node.from_manifest(
        {
            "metadata": {"name": "n"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        }
    )
    table = NodeTable([node])
    with_pod_level = pod_manifest("a", [{"cpu": "500m", "memory": "1Gi"}], pod_level={"cpu": "2"})
    containers_only = pod_manifest("b", [{"cpu": "500m", "memory": "1Gi"}])
    for version, fit_same in (("1.34", True), ("1.37", True), ("1.32", False)):
        features = features_for(version, {"PodLevelResources": True})
        a = Pod.from_manifest(with_pod_level, accounting=features.accounting)
        b = Pod.from_manifest(containers_only, accounting=features.accounting)
        assert (
            scores("NodeResourcesFit", features, a, table)
            == scores("NodeResourcesFit", features, b, table)
        ) is fit_same
        assert scores("NodeResourcesBalancedAllocation", features, a, table) != scores(
            "NodeResourcesBalancedAllocation", features, b, table
        )


def test_a_placed_pods_pod_level_requests_fill_its_node_from_v1_34() -> None:
    """CalculateResource: the node's Requested and NonZeroRequested count a placed pod's
    pod-level requests; at v1.28 its containers'."""
    node = Node.from_manifest(
        {
            "metadata": {"name": "n"},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        }
    )
    placed = pod_manifest("placed", [{"cpu": "1"}], pod_level={"cpu": "3500m"})
    incoming = pod_manifest("p", [{"cpu": "1"}])
    for version, fits in (("1.28", True), ("1.34", False), ("1.37", False)):
        features = features_for(version)
        table = NodeTable([node])
        table.add_pod(Pod.from_manifest(placed, accounting=features.accounting), "n")
        pod = Pod.from_manifest(incoming, accounting=features.accounting)
        _, status = filter_one("NodeResourcesFit", features, pod, table)
        assert (status is None) is fits
        if not fits:
            assert status is not None and (status.code, status.reasons) == (U, (ins("cpu"),))


@pytest.mark.parametrize(("version", "conflict"), [("1.28", False), ("1.34", True), ("1.37", True)])
def test_sidecar_host_ports(version: str, conflict: bool) -> None:
    """node_ports_test.go (v1.37.2) TestNodePorts "TCP hostPort conflict from sidecar
    initContainer": the incoming sidecar's port; and a placed pod's sidecar port is used
    (`NodeInfo.updateUsedPorts` with `GetHostPorts`). v1.28 reads app containers only."""
    features = features_for(version)
    port = {"containerPort": 8001, "hostPort": 8001, "protocol": "TCP"}
    sidecar = {
        "metadata": {"name": "s", "namespace": "default", "uid": "uid-s"},
        "spec": {
            "containers": [{"name": "c"}],
            "initContainers": [
                {"name": "init-container", "restartPolicy": "Always", "ports": [port]}
            ],
        },
    }
    plain = {
        "metadata": {"name": "m1", "namespace": "default", "uid": "uid-m1"},
        "spec": {"containers": [{"name": "c", "ports": [{**port, "hostIP": "0.0.0.0"}]}]},
    }
    node = Node.from_manifest(
        {"metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "4", "pods": "110"}}}
    )
    for placed, incoming in ((plain, sidecar), (sidecar, plain)):
        table = NodeTable([node])
        table.add_pod(Pod.from_manifest(placed, accounting=features.accounting), "n")
        pod = Pod.from_manifest(incoming, accounting=features.accounting)
        pre, status = filter_one("NodePorts", features, pod, table)
        if pre is not None:
            assert pre.is_skip and not conflict  # v1.28: the sidecar asks for no port
            continue
        assert (status is not None) is conflict
