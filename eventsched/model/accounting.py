"""Which of kube-scheduler's rules count a pod's resources: the options of its accounting.

kube-scheduler counts a pod on its node as `PodInfo.CalculateResource` does (its requests,
and the cpu and memory NodeResourcesFit scores with: "non-zero", each container lacking a
request counting a default), with `resourcehelper.PodRequests` underneath. What that
gives changed between v1.28 and v1.37, by version and by feature gate; `Accounting`
names each change, `Features.accounting` (framework/features.py) chooses them for a
version and its gates, and `Pod.from_manifest` reads a pod with them
(model/podresources.py does the arithmetic). The default is v1.28's, the accounting
eventsched did before it knew versions: a pod read without options reads as it did.

`resize` is how a running pod's status counts (InPlacePodVerticalScaling), in the form
of the version decided as (component-helpers' `resource/helpers.go`, and before v1.32
kubernetes' `pkg/api/v1/resource/helpers.go`):

- `RESIZE_ALLOCATED` (v1.27-v1.31): per app container, its `allocatedResources`, at least
  its spec's unless `status.resize` is Infeasible;
- `RESIZE_ACTUAL` (v1.32): per app container with status `resources`, its
  `resources.requests`, at least its spec's unless `status.resize` is Infeasible;
- `RESIZE_PER_CONTAINER` (v1.33-v1.36): per app and sidecar container with status
  `resources`, the most of its spec's (unless the PodResizePending condition says
  Infeasible), actual and allocated requests;
- `RESIZE_AGGREGATE` (v1.37): the most of the pod's spec, allocated and actual totals,
  each summed over the containers (the sum of maxima became the maximum of sums).
"""

from __future__ import annotations

from dataclasses import dataclass

RESIZE_NONE = ""
RESIZE_ALLOCATED = "allocated"
RESIZE_ACTUAL = "actual"
RESIZE_PER_CONTAINER = "per-container"
RESIZE_AGGREGATE = "aggregate"
RESIZE_FORMS = (
    RESIZE_NONE,
    RESIZE_ALLOCATED,
    RESIZE_ACTUAL,
    RESIZE_PER_CONTAINER,
    RESIZE_AGGREGATE,
)


@dataclass(frozen=True, slots=True)
class Accounting:
    """The rules a pod's requests are counted by; the defaults are v1.28's."""

    #: PodLevelResources (v1.32 alpha, v1.34 beta): `spec.resources.requests` of cpu,
    #: memory and hugepages-* replace what the containers ask for.
    pod_level: bool = False
    #: How the status of a resized pod counts (InPlacePodVerticalScaling); RESIZE_NONE:
    #: the spec alone.
    resize: str = RESIZE_NONE
    #: InPlacePodLevelResourcesVerticalScaling (v1.35 alpha, v1.36 beta): the pod-level
    #: `status.resources` and `status.allocatedResources` count as well.
    pod_level_resize: bool = False
    #: v1.32 on: the non-zero defaults are `getNonMissingContainerRequests`' (a request
    #: given as 0 stays 0; with pod-level requests only a resource asked for nowhere is
    #: defaulted), added to each container; before, eventsched's v1.28 form.
    non_missing: bool = False
    #: v1.33 on: NodeResourcesFit's scorer is built without the pod-level flag, so the
    #: pod it scores is counted as its containers ask (`fit.go` `nodeResourceStrategyTypeMap`).
    fit_score_skips_pod_level: bool = False
    #: v1.34 on (kubernetes#132040): a sidecar's host ports are the pod's as well
    #: (`schedutil.GetHostPorts`), for NodePorts and a node's used ports.
    sidecar_host_ports: bool = False

    def __post_init__(self) -> None:
        if self.resize not in RESIZE_FORMS:
            raise ValueError(f"unknown resize form {self.resize!r}")
        newer = self.pod_level or self.pod_level_resize or self.resize == RESIZE_AGGREGATE
        if newer and not self.non_missing:
            raise ValueError("pod-level resources and the v1.37 resize form are v1.32+ rules")

    @property
    def is_legacy(self) -> bool:
        """Counting as v1.28 does (eventsched's accounting before versions)."""
        return self == LEGACY_ACCOUNTING

    @property
    def uses_status(self) -> bool:
        """Whether a pod's status can change what it counts (UseStatusResources)."""
        return self.resize != RESIZE_NONE


LEGACY_ACCOUNTING = Accounting()
