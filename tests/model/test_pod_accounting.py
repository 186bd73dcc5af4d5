"""What a pod counts for on its node at v1.28, v1.34 and v1.37 (`Pod.from_manifest` with
`Features.accounting`): kube-scheduler's `PodInfo.CalculateResource`.

Ported from kubernetes pkg/scheduler/framework/types_test.go (v1.34.4, v1.37.2):
TestPodInfoCalculateResources (the cases without DRA) and
TestCalculatePodResourcesWithResize, run at each version with its default gates. Their
wants are upstream's at v1.34 and v1.37; at v1.28 pod-level resources did not exist and
InPlacePodVerticalScaling was off (alpha), so the containers' spec alone counts, with
eventsched's v1.28 arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from eventsched.config.featuregates import features_for
from eventsched.model import Pod
from eventsched.model.accounting import LEGACY_ACCOUNTING
from eventsched.model.resources import DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST

MI = 1024 * 1024
VERSIONS = ("1.28", "1.34", "1.37")
DEF_CPU, DEF_MEM = DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST


def req(cpu: int = 0, mem_mi: int = 0, **other: int) -> dict[str, int]:
    """Expected requests: cpu in millicores, memory in MiB (left out when 0)."""
    out = {k.replace("_", "-"): v for k, v in other.items()}
    if cpu:
        out["cpu"] = cpu
    if mem_mi:
        out["memory"] = mem_mi * MI
    return out


def r(cpu: str | None = None, memory: str | None = None, **other: str) -> dict[str, str]:
    out = {k.replace("_", "-"): v for k, v in other.items()}
    if cpu is not None:
        out["cpu"] = cpu
    if memory is not None:
        out["memory"] = memory
    return out


@dataclass(frozen=True)
class Want:
    requests: dict[str, int]
    non_zero: tuple[int, int]


@dataclass(frozen=True)
class Case:
    name: str
    containers: list[dict[str, Any]]
    want: Want
    #: The want at v1.28 where it differs.
    want_128: Want | None = None
    init: list[dict[str, Any]] = field(default_factory=list)
    pod_level: dict[str, str] | None = None
    status: dict[str, Any] = field(default_factory=dict)

    def manifest(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"containers": self.containers}
        if self.init:
            spec["initContainers"] = self.init
        if self.pod_level is not None:
            spec["resources"] = {"requests": self.pod_level}
        meta = {"name": "p", "namespace": "default", "uid": "uid-p"}
        return {"metadata": meta, "spec": spec, "status": self.status}


def container(name: str, requests: dict[str, str] | None, sidecar: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "resources": {"requests": requests or {}}}
    if sidecar:
        out["restartPolicy"] = "Always"
    return out


# from pkg/scheduler/framework/types_test.go TestPodInfoCalculateResources
CALCULATE_RESOURCES = [
    Case("requestless container", [container("", None)], Want({}, (DEF_CPU, DEF_MEM))),
    Case(
        "1X container with requests",
        [container("", r("500m", "500Mi"))],
        Want(req(500, 500), (500, 500 * MI)),
    ),
    Case(
        "2X container with requests",
        [container("a", r("500m", "500Mi")), container("b", r("700m", "800Mi"))],
        Want(req(1200, 1300), (1200, 1300 * MI)),
    ),
    Case(
        "1X container and 1X init container with pod-level requests",
        [container("", r("500m", "500Mi"))],
        Want(req(1200, 1200), (1200, 1200 * MI)),
        Want(req(500, 500), (500, 500 * MI)),
        init=[container("i", r("500m", "500Mi"))],
        pod_level=r("1200m", "1200Mi"),
    ),
    Case(
        "1X container and 1X sidecar container with pod-level requests",
        [container("", r("500m", "500Mi"))],
        Want(req(1200, 1200), (1200, 1200 * MI)),
        Want(req(1000, 1000), (1000, 1000 * MI)),
        init=[container("s", r("500m", "500Mi"), sidecar=True)],
        pod_level=r("1200m", "1200Mi"),
    ),
    Case(
        "1X container with pod-level memory requests",
        [container("", None)],
        Want(req(0, 1200), (DEF_CPU, 1200 * MI)),
        Want({}, (DEF_CPU, DEF_MEM)),
        init=[container("i", None)],
        pod_level=r(memory="1200Mi"),
    ),
    Case(
        "1X container with pod-level cpu requests",
        [container("", None)],
        Want(req(500), (500, DEF_MEM)),
        Want({}, (DEF_CPU, DEF_MEM)),
        init=[container("i", None)],
        pod_level=r("500m"),
    ),
    Case(
        "1X container unsupported resources and pod-level supported resources",
        [container("", r(ephemeral_storage="800Mi"))],
        Want(req(500, ephemeral_storage=800 * MI), (500, DEF_MEM)),
        Want(req(ephemeral_storage=800 * MI), (DEF_CPU, DEF_MEM)),
        init=[container("i", r(ephemeral_storage="500Mi"))],
        pod_level=r("500m"),
    ),
]


def resized(
    requests: dict[str, str],
    status_requests: dict[str, str],
    *,
    pod_level: dict[str, str] | None = None,
    pod_level_status: dict[str, str] | None = None,
    init: tuple[dict[str, str], dict[str, str]] | None = None,
    sidecar: tuple[dict[str, str], dict[str, str]] | None = None,
    condition: dict[str, str] | None = None,
) -> dict[str, Any]:
    """TestCalculatePodResourcesWithResize's `preparePodInfo`: c1 (and i1, s1) with their
    status `resources.requests`, the pod's own status resources, a condition."""
    status: dict[str, Any] = {
        "phase": "Running",
        "containerStatuses": [{"name": "c1", "resources": {"requests": status_requests}}],
    }
    initial: list[dict[str, Any]] = []
    statuses: list[dict[str, Any]] = []
    for name, pair, is_sidecar in (("i1", init, False), ("s1", sidecar, True)):
        if pair is not None:
            initial.append(container(name, pair[0], sidecar=is_sidecar))
            statuses.append({"name": name, "resources": {"requests": pair[1]}})
    if statuses:
        status["initContainerStatuses"] = statuses
    if pod_level_status is not None:
        status["resources"] = {"requests": pod_level_status}
    if condition is not None:
        status["conditions"] = [{"status": "True", **condition}]
    return {
        "containers": [container("c1", requests)],
        "init": initial,
        "pod_level": pod_level,
        "status": status,
    }


C500 = r("500m", "500Mi")
C700 = r("700m", "800Mi")
PL700 = r("700m", "500Mi")
IN_PROGRESS = {"type": "PodResizeInProgress"}
DEFERRED = {"type": "PodResizePending", "reason": "Deferred"}
INFEASIBLE = {"type": "PodResizePending", "reason": "Infeasible"}
W500 = Want(req(500, 500), (500, 500 * MI))
W700_500 = Want(req(700, 500), (700, 500 * MI))
W700_800 = Want(req(700, 800), (700, 800 * MI))

# from pkg/scheduler/framework/types_test.go TestCalculatePodResourcesWithResize
WITH_RESIZE = [
    ("Pod with no pending resize", resized(C500, C500), W500, None),
    (
        "Pod with pod-level resources no pending resize",
        resized(C500, PL700, pod_level=PL700, pod_level_status=C500),
        W700_500,
        W500,
    ),
    ("Pod with resize in progress", resized(C500, C500, condition=IN_PROGRESS), W500, None),
    (
        "Pod with pod-level resources and resize in progress",
        resized(C500, PL700, pod_level=PL700, pod_level_status=C500, condition=IN_PROGRESS),
        W700_500,
        W500,
    ),
    ("Pod with deferred resize", resized(C700, C500, condition=DEFERRED), W700_800, None),
    (
        "Pod with pod-level resources and with deferred resize",
        resized(C500, C500, pod_level=C700, pod_level_status=C500, condition=DEFERRED),
        W700_800,
        W500,
    ),
    ("Pod with infeasible resize", resized(C700, C500, condition=INFEASIBLE), W500, W700_800),
    (
        "Pod with init container and no pending resize",
        resized(C500, C500, init=(C700, C700)),
        W700_800,
        None,
    ),
    (
        "Pod with sider container and no pending resize",
        resized(C500, C500, init=(C700, C700), sidecar=(C700, C700)),
        Want(req(1200, 1300), (1200, 1300 * MI)),
        None,
    ),
]

ALL = CALCULATE_RESOURCES + [
    Case(
        name,
        parts["containers"],
        want,
        want_128,
        parts["init"],
        parts["pod_level"],
        parts["status"],
    )
    for name, parts, want, want_128 in WITH_RESIZE
]


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("case", ALL, ids=lambda c: c.name)
def test_calculate_resource(case: Case, version: str) -> None:
    pod = Pod.from_manifest(case.manifest(), accounting=features_for(version).accounting)
    want = case.want_128 if version == "1.28" and case.want_128 is not None else case.want
    assert (pod.requests, pod.non_zero) == (want.requests, want.non_zero)
    again = Pod.from_manifest(case.manifest(), accounting=features_for(version).accounting)
    assert again == pod  # from the memo, the same


def test_v1_28_to_v1_31_count_as_eventsched_always_did() -> None:
    for version in ("1.28", "1.29", "1.30", "1.31"):
        assert features_for(version).accounting == LEGACY_ACCOUNTING


def test_the_status_counts_apart_from_the_spec_memo() -> None:
    """Two replicas of one template, one resized up: each counts its own status."""
    plain = resized(C500, C500)
    grown = resized(C500, r("900m", "500Mi"))
    accounting = features_for("1.37").accounting
    first = Case("a", plain["containers"], W500, status=plain["status"]).manifest()
    second = Case("b", grown["containers"], W500, status=grown["status"]).manifest()
    assert Pod.from_manifest(first, accounting=accounting).requests == req(500, 500)
    assert Pod.from_manifest(second, accounting=accounting).requests == req(900, 500)
    assert Pod.from_manifest(second).requests == req(500, 500)  # v1.28: the spec's


def test_a_request_of_zero_stays_zero_from_v1_32() -> None:
    """getNonMissingContainerRequests/applyNonMissing: only a missing request is
    defaulted; a container asking for 0 cpu counts 0 when scored."""
    case = Case("zero", [container("c", r("0", "64Mi"))], Want({}, (0, 0)))
    pod = Pod.from_manifest(case.manifest(), accounting=features_for("1.37").accounting)
    assert pod.non_zero == (0, 64 * MI)


def test_the_issue_pod_counts_its_pod_level_cpu_from_v1_34() -> None:
    """spec.resources.requests.cpu 6 with a container asking 1: 6 cpu at v1.34 and v1.37
    (and NodeResourcesFit scores its containers' 1), 1 at v1.28 (no such field)."""
    case = Case("issue", [container("c", r("1"))], Want({}, (0, 0)), pod_level=r("6"))
    v128 = Pod.from_manifest(case.manifest(), accounting=features_for("1.28").accounting)
    assert (v128.requests, v128.score_requests) == (req(1000), None)
    for version in ("1.34", "1.37"):
        pod = Pod.from_manifest(case.manifest(), accounting=features_for(version).accounting)
        assert pod.requests == req(6000)
        assert pod.non_zero == (6000, DEF_MEM)
        assert pod.score_requests == {"cpu": 1000, "memory": DEF_MEM}
