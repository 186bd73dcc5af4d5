"""The Kubernetes version a profile decides as, and the feature gates that change its decisions.

Upstream's plugins receive `feature.Features` (pkg/scheduler/framework/plugins/feature): one
boolean per gate they read, copied from the process's gates when the framework is built.
`Features` is the same thing, with the Kubernetes minor version beside it. A field's
metadata names the upstream gate; its default is the gate's value in v1.28, the version
eventsched decided as before it knew any other, so a profile built without features (and
a log written before they were logged) decides as it always did.

`eventsched.config.featuregates` builds one from a version and `--feature-gates`, with
upstream's per-version defaults; a profile's `config_loaded` record carries it, so
`replay` decides as the log says.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from eventsched.model.accounting import (
    RESIZE_ACTUAL,
    RESIZE_AGGREGATE,
    RESIZE_ALLOCATED,
    RESIZE_NONE,
    RESIZE_PER_CONTAINER,
    Accounting,
)

#: The version eventsched decided as before versions were chosen (and every log without one).
LEGACY_VERSION = "1.28"


def _gate(name: str, v128: bool) -> Any:
    return field(default=v128, metadata={"gate": name})


@dataclass(frozen=True, slots=True)
class Features:
    """The version decided as ("1.37") and the gates eventsched reads, by upstream name."""

    version: str = LEGACY_VERSION
    #: Pod-level `spec.resources` count as the pod's requests (1.32 alpha, 1.34 beta).
    pod_level_resources: bool = _gate("PodLevelResources", False)
    #: A resized pod counts the larger of its spec's and its allocated resources (1.27 alpha,
    #: 1.33 beta, 1.35 GA).
    in_place_pod_vertical_scaling: bool = _gate("InPlacePodVerticalScaling", False)
    #: A pod's own `status.resources` and `status.allocatedResources` count when it is
    #: resized (1.35 alpha, 1.36 beta).
    in_place_pod_level_resources_vertical_scaling: bool = _gate(
        "InPlacePodLevelResourcesVerticalScaling", False
    )
    #: Init containers with restartPolicy Always run beside the app containers (1.28
    #: alpha, 1.29 beta, 1.33 GA, gate gone in 1.36: always on). Off, NodeResourcesFit
    #: refuses a pod that has one.
    sidecar_containers: bool = _gate("SidecarContainers", False)
    #: The conditions the scheduler writes (PodScheduled, DisruptionTarget) carry the pod's
    #: metadata.generation as observedGeneration (1.33 alpha, 1.34 beta, 1.35 GA).
    pod_observed_generation_tracking: bool = _gate("PodObservedGenerationTracking", False)
    #: DynamicResources is in the default profile (1.26 alpha, 1.32 beta, 1.34 GA); eventsched
    #: does not implement it (config/pluginsets.py names it where it is left out).
    dynamic_resource_allocation: bool = _gate("DynamicResourceAllocation", False)
    #: NodeDeclaredFeatures is in the default profile and filters (1.35 alpha, 1.36 beta, 1.37 GA).
    node_declared_features: bool = _gate("NodeDeclaredFeatures", False)
    #: VolumeBinding scores by free storage capacity (1.33 alpha, 1.37 beta); it took over
    #: VolumeCapacityPriority's shape argument, inverted.
    storage_capacity_scoring: bool = _gate("StorageCapacityScoring", False)
    #: VolumeBinding matches a claim's volumeAttributesClassName (1.29 alpha, 1.34 GA).
    volume_attributes_class: bool = _gate("VolumeAttributesClass", False)
    #: NodeVolumeLimits refuses nodes without a CSI driver that says so (1.35 alpha, 1.37 beta).
    volume_limit_scaling: bool = _gate("VolumeLimitScaling", False)
    #: PodTopologySpread merges a constraint's `matchLabelKeys` into its selector (1.27 beta);
    #: the API server does too at creation with the SelectorMerge gate (1.34 beta), and so
    #: does pod (anti-)affinity's with MatchLabelKeysInPodAffinity (1.31 beta, 1.33 GA):
    #: `eventsched simulate` merges them into manifest pods as that API server would
    #: (model/admission.py).
    match_label_keys_in_pod_topology_spread: bool = _gate("MatchLabelKeysInPodTopologySpread", True)
    match_label_keys_in_pod_topology_spread_selector_merge: bool = _gate(
        "MatchLabelKeysInPodTopologySpreadSelectorMerge", False
    )
    match_label_keys_in_pod_affinity: bool = _gate("MatchLabelKeysInPodAffinity", False)
    #: Gates that only add plugins eventsched does not implement to the default profile
    #: (GangScheduling; TopologyPlacementGenerator and PodGroupPodsCount; DeferredPodScheduling).
    generic_workload: bool = _gate("GenericWorkload", False)
    topology_aware_workload_scheduling: bool = _gate("TopologyAwareWorkloadScheduling", False)
    in_place_pod_vertical_scaling_scheduler_preemption: bool = _gate(
        "InPlacePodVerticalScalingSchedulerPreemption", False
    )

    def since(self, minor: str) -> bool:
        """Whether the version decided as is `minor` ("1.34") or newer: behaviour upstream
        changed without a gate (a message, a tie-break) is keyed by the version."""
        return _minor_number(self.version) >= _minor_number(minor)

    @property
    def accounting(self) -> Accounting:
        """How a pod's resources are counted at this version with these gates
        (model/accounting.py names each rule and the version it came with)."""
        minor = _minor_number(self.version)
        return Accounting(
            pod_level=self.pod_level_resources and minor >= 32,
            resize=_resize_form(minor) if self.in_place_pod_vertical_scaling else RESIZE_NONE,
            pod_level_resize=(
                self.in_place_pod_level_resources_vertical_scaling
                and self.in_place_pod_vertical_scaling
                and minor >= 35
            ),
            non_missing=minor >= 32,
            fit_score_skips_pod_level=minor >= 33,
            sidecar_host_ports=minor >= 34,
        )

    @classmethod
    def gate_names(cls) -> tuple[str, ...]:
        """The upstream names of the gates these features carry, in field order."""
        return tuple(f.metadata["gate"] for f in fields(cls) if "gate" in f.metadata)

    def gates(self) -> dict[str, bool]:
        """Each gate's value by its upstream name."""
        return {f.metadata["gate"]: getattr(self, f.name) for f in _GATE_FIELDS}

    def enabled(self, gate: str) -> bool:
        """The value of the gate named `gate` (KeyError when these features do not carry it)."""
        return bool(getattr(self, _FIELD_OF_GATE[gate]))

    def with_gates(self, version: str, gates: Mapping[str, bool]) -> Features:
        """These features at `version`, with the named gates set (others keep their value)."""
        return replace(
            self, version=version, **{_FIELD_OF_GATE[name]: bool(v) for name, v in gates.items()}
        )

    @property
    def is_legacy(self) -> bool:
        """Deciding as v1.28 did: what a record without features means."""
        return self == LEGACY

    def to_record(self) -> dict[str, Any]:
        """What a profile's `config_loaded` record keeps (`kubernetesVersion`, `featureGates`)."""
        return {"kubernetesVersion": self.version, "featureGates": self.gates()}

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Features:
        """The features a profile record names; v1.28's when it names none (an older log).

        A gate the record names that these features do not carry is left out: it was
        logged by an eventsched that read it, and this one decides without it.
        """
        version = record.get("kubernetesVersion")
        if not version:
            return LEGACY
        gates = record.get("featureGates") or {}
        known = {name: bool(v) for name, v in gates.items() if name in _FIELD_OF_GATE}
        return LEGACY.with_gates(str(version), known)


def _minor_number(version: str) -> int:
    return int(version.split(".")[1])


def _resize_form(minor: int) -> str:
    """How a resized pod's status counts at a minor version (model/accounting.py)."""
    if minor <= 31:
        return RESIZE_ALLOCATED
    if minor == 32:
        return RESIZE_ACTUAL
    if minor <= 36:
        return RESIZE_PER_CONTAINER
    return RESIZE_AGGREGATE


_GATE_FIELDS = tuple(f for f in fields(Features) if "gate" in f.metadata)
_FIELD_OF_GATE = {f.metadata["gate"]: f.name for f in _GATE_FIELDS}
LEGACY = Features()
