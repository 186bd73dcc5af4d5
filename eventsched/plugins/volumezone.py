"""VolumeZone: a bound volume's zone and region labels against the node's (kube-scheduler v1.28).

PreFilter finds the PersistentVolume bound to each of the pod's claims
(`persistentVolumeClaim` volumes only) and keeps its topology labels, in
upstream's order: `failure-domain.beta.kubernetes.io/zone`,
`failure-domain.beta.kubernetes.io/region`, `topology.kubernetes.io/zone`,
`topology.kubernetes.io/region`; a value is a `__`-separated set of zones. An
unbound claim of a WaitForFirstConsumer class is skipped (VolumeBinding
handles it); any other unbound claim, a missing claim, class or volume is
UnschedulableAndUnresolvable with upstream's message. Nothing to check: Skip.

Filter: a node with none of the four labels passes (a single-zone cluster);
otherwise each kept label must be on the node with one of the volume's
values, a beta label of the volume being looked up as the GA label when the
node lacks it (`translateToGALabel`, in v1.28.0: the real kube-scheduler
binary places such a pod): "node(s) had no available volume zone"
(UnschedulableAndUnresolvable). Vectorized over the NodeTable's label columns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from eventsched.framework import (
    LEGACY_FEATURES,
    NODE_ADD,
    NODE_UPDATE,
    PV_ADD,
    PV_UPDATE,
    PVC_ADD,
    PVC_UPDATE,
    SKIP,
    STORAGE_CLASS_ADD,
    BatchFilterResult,
    ClusterEvent,
    CycleState,
    Features,
    Handle,
    PreFilterResult,
    Status,
    check_args,
)
from eventsched.model import BoolArray, Indexes, NodeTable, Pod
from eventsched.model.podvolumes import (
    PV_RESOURCE,
    PVC_RESOURCE,
    STORAGE_CLASS_RESOURCE,
    not_found,
    pod_claims,
)
from eventsched.model.storage import StorageObjects
from eventsched.model.volumes import WAIT_FOR_FIRST_CONSUMER
from eventsched.model.volumetopology import zone_values

NAME = "VolumeZone"
ERR_REASON_CONFLICT = "node(s) had no available volume zone"
_STATE_KEY = "PreFilterVolumeZone"

TOPOLOGY_LABELS = (
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
)
#: `translateToGALabel`: a beta label and the GA label it stands for.
GA_LABEL = {TOPOLOGY_LABELS[0]: TOPOLOGY_LABELS[2], TOPOLOGY_LABELS[1]: TOPOLOGY_LABELS[3]}


@dataclass(frozen=True, slots=True)
class VolumeTopology:
    """One topology label of a bound volume (`pvTopology`)."""

    volume: str
    key: str
    values: frozenset[str]


class _Unresolvable(Exception):
    pass


class VolumeZone:
    name = NAME

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        check_args(NAME, args)

    def events_to_register(self) -> Sequence[ClusterEvent]:
        """v1.28: a new class (WaitForFirstConsumer), a node added or relabelled, a claim
        added or bound, a volume added or relabelled."""
        return (STORAGE_CLASS_ADD, NODE_ADD, NODE_UPDATE, PVC_ADD, PVC_UPDATE, PV_ADD, PV_UPDATE)

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status | None]:
        try:
            topologies = volume_topologies(pod, table.objects.storage)
        except _Unresolvable as exc:
            return None, Status.unresolvable(str(exc))
        if not topologies:
            return None, SKIP
        state.write(_STATE_KEY, topologies)
        return None, None

    def filter_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> BatchFilterResult:
        topologies: tuple[VolumeTopology, ...] | None = state.get(_STATE_KEY)
        if topologies is None:
            try:
                topologies = volume_topologies(pod, table.objects.storage)
            except _Unresolvable as exc:
                return BatchFilterResult(
                    np.zeros(len(rows), dtype=np.int64), [Status.unresolvable(str(exc))]
                )
        constrained = np.zeros(len(rows), dtype=bool)
        for key in TOPOLOGY_LABELS:
            constrained |= table.label_codes(key)[1][rows] >= 0
        matches = np.ones(len(rows), dtype=bool)
        for topology in topologies:
            matches &= _has_value(table, rows, topology)
        return BatchFilterResult.from_mask(
            ~constrained | matches, Status.unresolvable(ERR_REASON_CONFLICT)
        )


def _has_value(table: NodeTable, rows: Indexes, topology: VolumeTopology) -> BoolArray:
    """Nodes whose label `topology.key` (or, absent a beta one, its GA label) is one of the
    volume's values: integer label codes compared, no per-node Python."""
    codes, column = table.label_codes(topology.key)
    column = column[rows]
    wanted = [codes[v] for v in topology.values if v in codes]
    found = np.isin(column, wanted)
    ga = GA_LABEL.get(topology.key)
    if ga is not None:
        ga_codes, ga_column = table.label_codes(ga)
        ga_wanted = [ga_codes[v] for v in topology.values if v in ga_codes]
        found |= (column < 0) & np.isin(ga_column[rows], ga_wanted)
    return found


def volume_topologies(pod: Pod, storage: StorageObjects) -> tuple[VolumeTopology, ...]:
    """`getPVbyPod`: the topology labels of the volumes bound to the pod's claims."""
    found: list[VolumeTopology] = []
    for ref in pod_claims(pod, ephemeral=False):
        if not ref.claim:
            raise _Unresolvable("PersistentVolumeClaim had no name")
        claim = storage.claim(pod.namespace, ref.claim)
        if claim is None:
            raise _Unresolvable(not_found(PVC_RESOURCE, ref.claim))
        if not claim.volume_name:
            if not claim.storage_class:
                raise _Unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
            storage_class = storage.classes.get(claim.storage_class)
            if storage_class is None:
                raise _Unresolvable(not_found(STORAGE_CLASS_RESOURCE, claim.storage_class))
            if storage_class.binding_mode == WAIT_FOR_FIRST_CONSUMER:
                continue  # unbound: VolumeBinding finds or provisions its volume
            raise _Unresolvable("PersistentVolume had no name")
        volume = storage.volumes.get(claim.volume_name)
        if volume is None:
            raise _Unresolvable(not_found(PV_RESOURCE, claim.volume_name))
        for key in TOPOLOGY_LABELS:
            value = volume.labels.get(key)
            zones = None if value is None else zone_values(value)
            if zones is not None:  # a label that does not parse is ignored, as upstream logs it
                found.append(VolumeTopology(volume.name, key, zones))
    return tuple(found)
