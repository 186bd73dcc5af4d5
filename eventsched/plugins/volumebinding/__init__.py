"""VolumeBinding: the pod's claims must be bound, or bindable, on the node (kube-scheduler v1.28).

PreFilter (`podHasPVCs`, `GetPodVolumeClaims`, claims.py): a pod without
claims is Skipped. A claim that is missing, lost, being deleted, or (generic
ephemeral) not the pod's is UnschedulableAndUnresolvable with upstream's
message; so is an unbound claim of an Immediate class (or pre-bound by
`spec.volumeName` and not yet bound): "pod has unbound immediate
PersistentVolumeClaims". The bound claims' local volumes (`kubernetes.io/hostname
In` node affinity) name the only candidate nodes (`GetEligibleNodes`, a
PreFilterResult).

Filter (`FindPodVolumes`, filtering.py), per node, over the NodeTable at once:
bound claims' volumes must admit the node (an in-tree volume translated to its CSI
driver's zone key where the node's CSINode lists its plugin as migrated:
model/csitopology.py); each unbound WaitForFirstConsumer
claim must find an available PersistentVolume there (the smallest that
matches and whose node affinity admits the node, none given to two claims,
none another pod's reservation assumed). The node's static bindings are kept
for Reserve.

Reserve (`AssumePodVolumes`, binder.py): the chosen volumes, pre-bound to
their claims, are assumed: `reserved` records them (`ASSUMED_VOLUMES_KEY`) and
the view's fold takes them from every later pod until `unreserved` gives them
back (`RevertAssumedPodVolumes`) or the volume is observed again (the update
PreBind wrote). Unreserve has nothing of its own to undo: the `unreserved`
event does it, live and in replay alike.

PreBind (`BindPodVolumes`): each volume's `spec.claimRef` (and
`pv.kubernetes.io/bound-by-controller`) is written through the cluster adapter
(`Handle.volumes`), then the claims are polled every second until the PV
controller has bound them, for at most `bindTimeoutSeconds` (default 600):
"binding volumes: timed out waiting for the condition". Each poll reads the
node and its CSINode again: a volume whose node affinity no longer admits
the node's current labels fails it ("binding volumes: pv ... node affinity
doesn't match node ...", binder.py). A failure is the
binding cycle's Error; Unreserve follows. Upstream writes no rollback, nor
does eventsched: the volume keeps its claimRef, and the next attempt finds it
pre-bound to the claim.

Dynamic provisioning: a claim no available volume matches, whose class has a
provisioner admitting the node (allowedTopologies, and CSIStorageCapacity
where the CSIDriver asks for it: filtering.py), is provisioned there:
Filter passes the node, Reserve assumes the claim with the
`volume.kubernetes.io/selected-node` annotation naming it (recorded in
`reserved`'s `volumes` as `{"claimRef", "selectedNode"}`, folded into the
view's PVC assume cache, so later pods sharing the claim go to that node),
and PreBind writes the annotation (`Handle.volumes.select_node`) and waits as
above for the external provisioner and the PV controller to bind the claim;
a provisioner that removes the annotation fails the wait at once
("binding volumes: provisioning failed for PVC ...").

Score: v1.28's VolumeCapacityPriority gate is off, so PreScore is Skip; so it is until
1.32. From 1.33 the StorageCapacityScoring gate (alpha, off until 1.36; beta and on in 1.37)
gives the plugin a scorer and a default `shape` (scoring.py); with it on PreScore never
Skips, so every pod, with claims or without, has VolumeBinding in its score table (0 on
every node for a pod without claims). With it off a `shape` is refused.

Filter messages: from 1.33 a bound volume whose node affinity refuses the node says
"node(s) didn't match PersistentVolume's node affinity" (kubernetes#129887), before it
"node(s) had volume node affinity conflict". From 1.29 a volume matches a claim only
with the same volume attributes class where the VolumeAttributesClass gate is on (GA in
1.34), and only without one where it is off (model/volumematching.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from eventsched.framework import (
    ASSUMED_VOLUMES_KEY,
    CSI_DRIVER_ADD,
    CSI_DRIVER_UPDATE,
    CSI_NODE_ADD,
    CSI_NODE_UPDATE,
    CSI_STORAGE_CAPACITY_ADD,
    CSI_STORAGE_CAPACITY_UPDATE,
    LEGACY_FEATURES,
    NODE_ADD,
    NODE_UPDATE,
    PV_ADD,
    PV_UPDATE,
    PVC_ADD,
    PVC_UPDATE,
    SKIP,
    STORAGE_CLASS_ADD,
    STORAGE_CLASS_UPDATE,
    BatchFilterResult,
    ClusterEvent,
    CycleState,
    Features,
    Handle,
    PluginArgsError,
    PreFilterResult,
    Status,
    check_args,
)
from eventsched.model import Indexes, IntArray, NodeTable, Pod
from eventsched.plugins.volumebinding.binder import (
    BindingFailed,
    BindingInfo,
    PodVolumes,
    assume_pod_volumes,
    bind_pod_volumes,
)
from eventsched.plugins.volumebinding.claims import (
    ClaimRefusal,
    PodVolumeClaims,
    eligible_nodes,
    pod_volume_claims,
)
from eventsched.plugins.volumebinding.filtering import (
    ERR_REASON_BIND_CONFLICT,
    ERR_REASON_NODE_CONFLICT,
    ERR_REASON_NODE_CONFLICT_1_33,
    ERR_REASON_NOT_ENOUGH_SPACE,
    ERR_REASON_PV_NOT_EXIST,
    Masks,
    NodeBindings,
    VersionRules,
    find_pod_volumes,
)
from eventsched.plugins.volumebinding.scoring import node_score, parse_shape, scaled

NAME = "VolumeBinding"
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
DEFAULT_BIND_TIMEOUT_SECONDS = 600
_STATE_KEY = NAME

__all__ = [
    "DEFAULT_BIND_TIMEOUT_SECONDS",
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NODE_CONFLICT_1_33",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "ERR_UNBOUND_IMMEDIATE",
    "NAME",
    "BindingInfo",
    "PodVolumeClaims",
    "PodVolumes",
    "VolumeBinding",
    "eligible_nodes",
    "pod_volume_claims",
]


@dataclass(slots=True)
class _State:
    """`stateData`: the pod's claims, each passing node's volumes to bind, and Reserve's
    verdict that nothing needs binding. Shared by clones, as upstream's."""

    claims: PodVolumeClaims | None
    by_node: NodeBindings = field(default_factory=dict)
    all_bound: bool = False

    def clone(self) -> _State:
        return self


class VolumeBinding:
    name = NAME

    def __init__(
        self, args: Mapping[str, Any], handle: Handle, features: Features = LEGACY_FEATURES
    ) -> None:
        check_args(NAME, args, ("bindTimeoutSeconds", "shape"))
        timeout = args.get("bindTimeoutSeconds", DEFAULT_BIND_TIMEOUT_SECONDS)
        if not isinstance(timeout, int) or isinstance(timeout, bool):
            raise PluginArgsError("bindTimeoutSeconds", "must be an integer")
        if timeout < 0:
            raise PluginArgsError(
                "bindTimeoutSeconds", "invalid BindTimeoutSeconds, should not be a negative value"
            )
        self.bind_timeout_seconds = timeout
        self.handle = handle
        self._masks = Masks()
        self.rules = VersionRules(
            ERR_REASON_NODE_CONFLICT_1_33 if features.since("1.33") else ERR_REASON_NODE_CONFLICT,
            features.volume_attributes_class if features.since("1.29") else None,
        )
        #: The shape as the args give it (0..10 scores), defaulted; () without a scorer.
        self.shape_args: tuple[tuple[int, int], ...] = ()
        self.scores = features.since("1.33") and features.storage_capacity_scoring
        if self.scores:
            sorted_reason = (
                "values must be sorted in increasing order"
                if features.since("1.34")
                else "utilization values must be sorted in increasing order"
            )
            self.shape_args = parse_shape(args.get("shape"), sorted_reason=sorted_reason)
        elif args.get("shape") is not None:
            raise PluginArgsError(
                "shape",
                "unexpected field `shape`, remove it or turn on the feature gate "
                "StorageCapacityScoring"
                if features.since("1.33")
                else "unsupported when VolumeCapacityPriority is disabled",
            )
        self._shape = scaled(self.shape_args)

    def events_to_register(self) -> Sequence[ClusterEvent]:
        """v1.28: classes, claims and volumes added or updated, nodes added or relabelled,
        CSINodes, CSIDrivers and CSIStorageCapacities added or updated."""
        return (
            STORAGE_CLASS_ADD,
            STORAGE_CLASS_UPDATE,
            PVC_ADD,
            PVC_UPDATE,
            PV_ADD,
            PV_UPDATE,
            NODE_ADD,
            NODE_UPDATE,
            CSI_NODE_ADD,
            CSI_NODE_UPDATE,
            CSI_DRIVER_ADD,
            CSI_DRIVER_UPDATE,
            CSI_STORAGE_CAPACITY_ADD,
            CSI_STORAGE_CAPACITY_UPDATE,
        )

    # -- PreFilter, Filter ---------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status | None]:
        storage = table.objects.storage
        try:
            claims = pod_volume_claims(pod, storage)
        except ClaimRefusal as exc:
            return None, Status.unresolvable(str(exc))
        if claims is None:
            state.write(_STATE_KEY, _State(None))
            return None, SKIP
        if claims.immediate:
            return None, Status.unresolvable(ERR_UNBOUND_IMMEDIATE)
        state.write(_STATE_KEY, _State(claims))
        eligible = eligible_nodes(claims.bound, storage)
        return (None if eligible is None else PreFilterResult(eligible)), None

    def filter_batch(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> BatchFilterResult:
        s: _State | None = state.get(_STATE_KEY)
        if s is None or s.claims is None:
            return BatchFilterResult(np.full(len(rows), -1, dtype=np.int64), [])
        return find_pod_volumes(s.claims, table, rows, self._masks, s.by_node, self.rules)

    # -- Score ---------------------------------------------------------------------------

    def pre_score(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes
    ) -> Status | None:
        """Skip without a scorer (VolumeCapacityPriority off in v1.28, StorageCapacityScoring
        off before 1.37); with one, never (upstream Skips only when the gate is off)."""
        if not self.scores:
            return SKIP
        if state.get(_STATE_KEY) is None:
            return Status.as_error(f"{_STATE_KEY!r} not found in CycleState")
        return None

    def score_batch(self, state: CycleState, pod: Pod, table: NodeTable, rows: Indexes) -> IntArray:
        scores = np.zeros(len(rows), dtype=np.int64)
        s: _State | None = state.get(_STATE_KEY)
        if not self.scores or s is None or not s.by_node:
            return scores
        storage = table.objects.storage
        for i, row in enumerate(rows):
            node = table.node(int(row))
            volumes = s.by_node.get(node.name)
            if volumes is not None:
                scores[i] = node_score(self._shape, volumes, node, storage)
        return scores

    # -- Reserve, PreBind ----------------------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """`Reserve`: the node's static bindings and dynamic provisions are assumed (see
        the module); a node with none (no claim to bind) has all its volumes bound."""
        s: _State | None = state.get(_STATE_KEY)
        if s is None:
            return Status.as_error(f"{_STATE_KEY!r} not found in CycleState")
        volumes = s.by_node.get(node_name)
        s.all_bound = not volumes
        if volumes:
            state.write(ASSUMED_VOLUMES_KEY, assume_pod_volumes(volumes, node_name))
        return None

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Nothing here: the view's fold of `unreserved` gives the assumed volumes back."""

    def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        """`PreBind`: write the bindings and wait for the PV controller (see the module)."""
        s: _State | None = state.get(_STATE_KEY)
        if s is None:
            return Status.as_error(f"{_STATE_KEY!r} not found in CycleState")
        if s.all_bound:
            return None
        volumes = s.by_node.get(node_name)
        if volumes is None:
            return Status.as_error(f'no pod volumes found for node "{node_name}"')
        if self.handle.volumes is None:
            return Status.as_error("no volume binder configured on the framework handle")
        try:
            bind_pod_volumes(
                self.handle.volumes,
                volumes,
                node_name,
                self.bind_timeout_seconds,
                self.handle.shutting_down,
                self.handle.monotonic,
            )
        except BindingFailed as exc:
            return Status.as_error(exc)
        return None
