"""`PodRequests` as component-helpers v0.34.4 and v0.37.2 compute it (model/podresources.py).

Ported from k8s.io/component-helpers resource/helpers_test.go: TestPodResourceRequests
(both versions: the status forms differ, v1.34 per container, v1.37 over the totals),
TestPodLevelResourceRequests and TestPodRequestsAndLimitsVerticalScalingWrappers (the
requests). A case is a pod (containers, init containers, overhead, pod-level requests,
status) and the options upstream's test passes; its want holds what upstream's test
expects, as the scheduler counts it (cpu in millicores).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from eventsched.model.accounting import (
    RESIZE_AGGREGATE,
    RESIZE_NONE,
    RESIZE_PER_CONTAINER,
)
from eventsched.model.podresources import PodShape, pod_requests
from eventsched.model.resizestatus import read_resize_status
from eventsched.model.resources import parse_resource_list

ALWAYS = "Always"
INFEASIBLE = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]


def rl(**amounts: str) -> dict[str, int]:
    """A resource list from quantities (`hugepages_2Mi` for hugepages-2Mi)."""
    return parse_resource_list({k.replace("_", "-"): v for k, v in amounts.items()})


def c(name: str = "", restart: str | None = None, **requests: str) -> dict[str, Any]:
    return {"name": name, "requests": rl(**requests), "sidecar": restart == ALWAYS}


def cs(
    name: str, allocated: Mapping[str, str] | None = None, actual: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """A container status: `allocatedResources` and `resources.requests` when given."""
    status: dict[str, Any] = {"name": name}
    if allocated is not None:
        status["allocatedResources"] = dict(allocated)
    if actual is not None:
        status["resources"] = {"requests": dict(actual)}
    return status


@dataclass(frozen=True)
class Case:
    name: str
    want: dict[str, int]
    containers: list[dict[str, Any]] = field(default_factory=list)
    init: list[dict[str, Any]] = field(default_factory=list)
    overhead: dict[str, int] | None = None
    pod_level: dict[str, int] | None = None
    status: dict[str, Any] = field(default_factory=dict)
    #: UseStatusResources
    use_status: bool = False
    exclude_overhead: bool = False
    skip_pod_level: bool = False
    non_missing: dict[str, int] | None = None
    pod_level_resize: bool = False


def run(case: Case, resize_form: str) -> dict[str, int]:
    shape = PodShape(
        containers=[x["requests"] for x in case.containers],
        init_containers=[(x["requests"], x["sidecar"]) for x in case.init],
        overhead=case.overhead,
        pod_requests=case.pod_level,
        names=[x["name"] for x in case.containers],
        init_names=[x["name"] for x in case.init],
    )
    status = read_resize_status(case.status, "Pod test") if case.use_status else None
    return pod_requests(
        shape,
        status,
        resize_form if case.use_status else RESIZE_NONE,
        pod_level=not case.skip_pod_level,
        pod_level_resize=case.pod_level_resize,
        non_missing=case.non_missing,
        exclude_overhead=case.exclude_overhead,
    )


def _status(
    containers: list[dict[str, Any]] | None = None,
    init: list[dict[str, Any]] | None = None,
    conditions: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "containerStatuses": containers or [],
        "initContainerStatuses": init or [],
        "conditions": conditions or [],
    }


# from component-helpers resource/helpers_test.go TestPodResourceRequests (v0.34.4 and v0.37.2)
POD_RESOURCE_REQUESTS = [
    Case("nil options, larger init container", rl(cpu="4"), [c(cpu="1")], [c(cpu="4")]),
    Case("nil options, larger containers", rl(cpu="5"), [c(cpu="2"), c(cpu="3")], [c(cpu="2")]),
    Case(
        "pod overhead excluded",
        rl(cpu="5"),
        [c(cpu="2"), c(cpu="3")],
        [c(cpu="2")],
        overhead=rl(cpu="1"),
        exclude_overhead=True,
    ),
    Case(
        "pod overhead included",
        rl(cpu="6", memory="1Gi"),
        [c(cpu="2"), c(cpu="3")],
        [c(cpu="2")],
        overhead=rl(cpu="1", memory="1Gi"),
    ),
    Case(
        "resized, infeasible",
        rl(cpu="2"),
        [c("container-1", cpu="4")],
        status=_status([cs("container-1", actual={"cpu": "2"})], conditions=INFEASIBLE),
        use_status=True,
    ),
    Case(
        "resized, infeasible & in-progress",
        rl(cpu="4"),
        [c("container-1", cpu="6")],
        status=_status(
            [cs("container-1", allocated={"cpu": "4"}, actual={"cpu": "2"})],
            conditions=INFEASIBLE,
        ),
        use_status=True,
    ),
    Case(
        "resized, no resize status",
        rl(cpu="4"),
        [c("container-1", cpu="4")],
        status=_status([cs("container-1", actual={"cpu": "2"})]),
        use_status=True,
    ),
    Case(
        "resized: per-resource 3-way maximum",
        rl(cpu="30m", memory="30M", ephemeral_storage="30G"),
        [c("container-1", cpu="30m", memory="20M", ephemeral_storage="10G")],
        status=_status(
            [
                cs(
                    "container-1",
                    allocated={"cpu": "20m", "memory": "10M", "ephemeral-storage": "30G"},
                    actual={"cpu": "10m", "memory": "30M", "ephemeral-storage": "20G"},
                )
            ]
        ),
        use_status=True,
    ),
    Case(
        "resized, infeasible, but don't use status",
        rl(cpu="4"),
        [c("container-1", cpu="4")],
        status=_status([cs("container-1", actual={"cpu": "2"})], conditions=INFEASIBLE),
    ),
    Case(
        "resized, restartable init container, infeasible",
        rl(cpu="2"),
        init=[c("restartable-init-1", ALWAYS, cpu="4")],
        status=_status(init=[cs("restartable-init-1", actual={"cpu": "2"})], conditions=INFEASIBLE),
        use_status=True,
    ),
    Case(
        "resized, restartable init container, no resize status",
        rl(cpu="4"),
        init=[c("restartable-init-1", ALWAYS, cpu="4")],
        status=_status(init=[cs("restartable-init-1", actual={"cpu": "2"})]),
        use_status=True,
    ),
    Case(
        "resized, restartable init container, infeasible, but don't use status",
        rl(cpu="4"),
        init=[c("restartable-init-1", ALWAYS, cpu="4")],
        status=_status(init=[cs("restartable-init-1", actual={"cpu": "2"})], conditions=INFEASIBLE),
    ),
    Case(
        "restartable init container",
        rl(cpu="2"),
        [c("container-1", cpu="1")],
        [c("restartable-init-1", ALWAYS, cpu="1")],
    ),
    Case(
        "multiple restartable init containers",
        rl(cpu="7"),
        [c("container-1", cpu="1")],
        [
            c("init-1", cpu="5"),
            c("restartable-init-1", ALWAYS, cpu="1"),
            c("restartable-init-2", ALWAYS, cpu="2"),
            c("restartable-init-3", ALWAYS, cpu="3"),
        ],
    ),
    Case(
        "multiple restartable and regular init containers",
        rl(cpu="8"),
        [c("container-1", cpu="1")],
        [
            c("init-1", cpu="5"),
            c("restartable-init-1", ALWAYS, cpu="1"),
            c("restartable-init-2", ALWAYS, cpu="2"),
            c("init-2", cpu="5"),
            c("restartable-init-3", ALWAYS, cpu="3"),
        ],
    ),
    Case(
        "restartable-init, init and regular",
        rl(cpu="210"),
        [c("container-1", cpu="100")],
        [c("restartable-init-1", ALWAYS, cpu="10"), c("init-1", cpu="200")],
    ),
]

# v0.37.2 only; at v0.34.4 a status without `resources` is not read, so 1 + 2 as well.
AGGREGATE_OF_SUMS = Case(
    "aggregate request resolves max of sums instead of sum of maxes",
    rl(cpu="3"),
    [c("c1", cpu="1"), c("c2", cpu="2")],
    status=_status([cs("c1", allocated={"cpu": "2"}), cs("c2", allocated={"cpu": "1"})]),
    use_status=True,
)


@pytest.mark.parametrize("case", [*POD_RESOURCE_REQUESTS, AGGREGATE_OF_SUMS], ids=lambda c: c.name)
@pytest.mark.parametrize("form", [RESIZE_PER_CONTAINER, RESIZE_AGGREGATE])
def test_pod_resource_requests(case: Case, form: str) -> None:
    assert run(case, form) == case.want


def test_the_sum_of_maxima_became_the_maximum_of_sums() -> None:
    """v1.34 takes each container's most of spec, actual and allocated, and sums them;
    v1.37 takes the most of the three sums (v137-diff 1.4: c1 spec 1 allocated 2, c2
    spec 2 allocated 1, both reporting `resources`: 4 against 3)."""
    case = Case(
        "sum of maxima",
        {},
        [c("c1", cpu="1"), c("c2", cpu="2")],
        status=_status(
            [
                cs("c1", allocated={"cpu": "2"}, actual={"cpu": "1"}),
                cs("c2", allocated={"cpu": "1"}, actual={"cpu": "2"}),
            ]
        ),
        use_status=True,
    )
    assert run(case, RESIZE_PER_CONTAINER) == rl(cpu="4")
    assert run(case, RESIZE_AGGREGATE) == rl(cpu="3")


# from component-helpers resource/helpers_test.go TestPodLevelResourceRequests (v0.37.2)
POD_LEVEL_RESOURCE_REQUESTS = [
    Case("nil", {}),
    Case(
        "pod level memory resource with SkipPodLevelResources true",
        {},
        pod_level=rl(memory="2Mi"),
        skip_pod_level=True,
    ),
    Case(
        "pod level memory resource with SkipPodLevelResources false",
        rl(memory="2Mi"),
        pod_level=rl(memory="2Mi"),
    ),
    Case(
        "pod level memory and container level cpu resources with SkipPodLevelResources false",
        rl(memory="2Mi", cpu="2m"),
        [c(cpu="2m")],
        pod_level=rl(memory="2Mi"),
    ),
    Case(
        "pod level unsupported resources set at both pod-level and container-level with "
        "SkipPodLevelResources false",
        rl(storage="3Mi"),
        [c(storage="3Mi")],
        pod_level=rl(storage="2Mi"),
    ),
    Case(
        "pod level unsupported resources set at pod-level with SkipPodLevelResources false",
        rl(memory="3Mi"),
        [c(memory="3Mi")],
        pod_level=rl(storage="2Mi"),
    ),
    Case(
        "only container level resources set with SkipPodLevelResources false",
        rl(memory="3Mi", cpu="2m"),
        [c(memory="3Mi", cpu="2m")],
    ),
    Case(
        "both container-level and pod-level resources set with SkipPodLevelResources false",
        rl(memory="6Mi", cpu="8m"),
        [c(memory="3Mi", cpu="2m")],
        pod_level=rl(memory="6Mi", cpu="8m"),
    ),
    Case(
        "container-level resources and init container set with SkipPodLevelResources false",
        rl(memory="5Mi", cpu="4m"),
        [c(memory="3Mi", cpu="2m")],
        [c(memory="5Mi", cpu="4m")],
    ),
    Case(
        "container-level resources and init container set with SkipPodLevelResources true",
        rl(memory="5Mi", cpu="4m"),
        [c(memory="3Mi", cpu="2m")],
        [c(memory="5Mi", cpu="4m")],
        skip_pod_level=True,
    ),
    Case(
        "container-level resources and sidecar container set with SkipPodLevelResources false",
        rl(memory="8Mi", cpu="6m"),
        [c(memory="3Mi", cpu="2m")],
        [c(restart=ALWAYS, memory="5Mi", cpu="4m")],
    ),
    Case(
        "container-level resources, init and sidecar container set with "
        "SkipPodLevelResources false",
        rl(memory="11Mi", cpu="12m"),
        [c(memory="3Mi", cpu="2m")],
        [c(restart=ALWAYS, memory="5Mi", cpu="4m"), c(memory="6Mi", cpu="8m")],
    ),
    Case(
        "pod-level resources, container-level resources, init and sidecar container set "
        "with SkipPodLevelResources false",
        rl(memory="15Mi", cpu="18m"),
        [c(memory="3Mi", cpu="2m")],
        [c(restart=ALWAYS, memory="5Mi", cpu="4m"), c(memory="6Mi", cpu="8m")],
        pod_level=rl(memory="15Mi", cpu="18m"),
    ),
    Case(
        "pod-level resources, hugepage request/limit single page size",
        rl(memory="10Mi", hugepages_2Mi="2Mi"),
        pod_level=rl(memory="10Mi", hugepages_2Mi="2Mi"),
    ),
    Case(
        "pod-level resources, hugepage request/limit multiple page sizes",
        rl(cpu="1", hugepages_2Mi="2Mi", hugepages_1Gi="1Gi"),
        pod_level=rl(cpu="1", hugepages_2Mi="2Mi", hugepages_1Gi="1Gi"),
    ),
    Case(
        "pod-level resources, container-level resources, hugepage request/limit single page size",
        rl(cpu="1", hugepages_2Mi="10Mi"),
        [c(hugepages_2Mi="6Mi")],
        pod_level=rl(cpu="1", hugepages_2Mi="10Mi"),
    ),
    Case(
        "pod-level resources, container-level resources, hugepage request/limit multiple "
        "page sizes",
        rl(cpu="1", hugepages_2Mi="10Mi", hugepages_1Gi="2Gi"),
        [c(cpu="1", hugepages_1Gi="2Gi")],
        pod_level=rl(cpu="1", hugepages_2Mi="10Mi", hugepages_1Gi="2Gi"),
    ),
    Case(
        "pod-level resources, container-level resources, hugepage request/limit multiple "
        "page sizes between pod-level and container-level",
        rl(cpu="1", memory="4Mi", hugepages_2Mi="10Mi", hugepages_1Gi="1Gi"),
        [c(memory="4Mi", hugepages_1Gi="1Gi")],
        pod_level=rl(cpu="1", hugepages_2Mi="10Mi"),
    ),
]


@pytest.mark.parametrize("case", POD_LEVEL_RESOURCE_REQUESTS, ids=lambda c: c.name)
def test_pod_level_resource_requests(case: Case) -> None:
    assert run(case, RESIZE_AGGREGATE) == case.want


# from component-helpers resource/helpers_test.go TestPodRequestsAndLimitsVerticalScalingWrappers
# (v0.37.2; the requests)
VERTICAL_SCALING_WRAPPERS = [
    Case(
        "pod level requests/limits with PLR vertical scaling enabled and status populated",
        rl(cpu="3.5"),
        [c("c1", cpu="1")],
        pod_level=rl(cpu="2"),
        status={"allocatedResources": {"cpu": "3"}, "resources": {"requests": {"cpu": "3.5"}}},
        use_status=True,
        pod_level_resize=True,
    ),
    Case(
        "pod level requests/limits with PLR vertical scaling enabled and infeasible resize",
        rl(cpu="4"),
        [c("c1", cpu="1")],
        pod_level=rl(cpu="10"),
        status={
            "conditions": INFEASIBLE,
            "allocatedResources": {"cpu": "3"},
            "resources": {"requests": {"cpu": "4"}},
        },
        use_status=True,
        pod_level_resize=True,
    ),
    Case(
        "container limits aggregation with infeasible resize",
        {},
        [c("c1")],
        status={
            "conditions": INFEASIBLE,
            "containerStatuses": [{"name": "c1", "resources": {"limits": {"cpu": "6"}}}],
        },
        use_status=True,
    ),
    Case(
        "non missing container requests applied to init container",
        rl(cpu="1", memory="100Mi"),
        init=[c("i1", cpu="1")],
        non_missing=rl(memory="100Mi"),
    ),
    Case(
        "non missing container requests applied to regular container",
        rl(cpu="1", memory="100Mi"),
        [c("c1", cpu="1")],
        non_missing=rl(memory="100Mi"),
    ),
]


@pytest.mark.parametrize("case", VERTICAL_SCALING_WRAPPERS, ids=lambda c: c.name)
def test_pod_requests_vertical_scaling_wrappers(case: Case) -> None:
    assert run(case, RESIZE_AGGREGATE) == case.want


def test_a_request_given_as_zero_is_not_defaulted() -> None:
    """`applyNonMissing`: "If the requests for those resources are explicitly set, even if
    zero, they will not be modified" (PodResourcesOptions.NonMissingContainerRequests)."""
    case = Case(
        "explicit zero",
        {},
        [c("c1", cpu="0"), c("c2")],
        non_missing=rl(cpu="100m", memory="200Mi"),
    )
    assert run(case, RESIZE_NONE) == rl(cpu="100m", memory="400Mi")
