"""Reserve and PreBind's half of VolumeBinding: assume, write and wait (binder.go, v1.28).

- `assume_pod_volumes` (`AssumePodVolumes`): each static binding Filter found
  for the node, pre-bound with `GetBindVolumeToClaim`; those that changed are
  assumed; each claim to provision is assumed with the
  `volume.kubernetes.io/selected-node` annotation naming the node. eventsched's
  assume caches are the view: the assumptions go into the `reserved` event
  (`ASSUMED_VOLUMES_KEY`), whose fold makes later pods of the run skip the
  volumes (and see the claims' selected node), and `unreserved` undoes them
  (`RevertAssumedPodVolumes`).
- `bind_pod_volumes` (`BindPodVolumes`): `bindAPIUpdate` updates each volume,
  then writes each claim to provision with the selected-node annotation (an
  error returned as the API gave it), then polls `checkBindings` every second
  until every claim is fully bound (`spec.volumeName` and the bind-completed
  annotation, which the PV controller sets once the provisioner has created
  the volume) or `bindTimeoutSeconds` passes: "binding volumes: timed out
  waiting for the condition" (0: no limit, as `wait.Poll`'s poller). A
  claimRef the PV controller dropped ends the wait at once: "binding volumes:
  ClaimRef got reset for pv ..."; so does a selected-node annotation the
  provisioner removed (it gives up that way): "binding volumes: provisioning
  failed for PVC ...".

Each poll also checks every volume's node affinity against the node's current
labels, as `checkBindings` does: a pre-bound volume's, and the volume a claim
to provision was bound to (none yet, or not found: keep polling). An in-tree
volume is checked translated to CSI where the node's CSINode lists its plugin
as migrated (model/csitopology.py). A volume that no longer admits the node
ends the wait: "binding volumes: pv "NAME" node affinity doesn't match node
"NODE": no matching NodeSelectorTerms" (a node that cannot be read: "failed to
get node ..."; a CSINode that cannot be read counts as none, as upstream).

The checks read the API itself (`read_volume`, `read_claim`, `read_node`,
`read_csi_node` through the handle), never the view: the binding cycle runs
on a binder thread. Where upstream reads its informers' latest API objects
(`GetAPIPV`, the node and CSINode listers) and waits for the version it
wrote, a GET is never older than the write nor than the informer. What
upstream also checks there and eventsched does not: that the pod still exists
(a pod deleted while it waits is found gone by Bind).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from eventsched.framework import VolumeApi
from eventsched.model import Node, NodeTable
from eventsched.model.changes import ApiError
from eventsched.model.csitopology import Untranslatable, affinity_on
from eventsched.model.pvbinding import (
    Assumption,
    ClaimAssumption,
    VolumeAssumption,
    bind_volume_to_claim,
    claim_ref,
)
from eventsched.model.volumes import CSINode, PersistentVolume, PersistentVolumeClaim
from eventsched.model.volumetopology import NodeSelector

#: `wait.Poll`'s interval in BindPodVolumes.
POLL_INTERVAL = 1.0
NOT_FOUND = 404
#: `wait.ErrWaitTimeout`.
TIMED_OUT = "timed out waiting for the condition"


@dataclass(frozen=True, slots=True)
class BindingInfo:
    """`BindingInfo`: a claim and the available volume Filter matched it with on a node."""

    claim: PersistentVolumeClaim
    volume: PersistentVolume


@dataclass(frozen=True, slots=True)
class PodVolumes:
    """`PodVolumes`: what Filter found for a node: claims matched with available volumes
    (`StaticBindings`) and claims whose volume is to be provisioned (`DynamicProvisions`)."""

    static_bindings: tuple[BindingInfo, ...] = ()
    dynamic_provisions: tuple[PersistentVolumeClaim, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.static_bindings or self.dynamic_provisions)


class BindingFailed(Exception):
    """BindPodVolumes' error, worded as kube-scheduler's."""


@dataclass(frozen=True, slots=True)
class CheckedNode:
    """The node as one poll of `checkBindings` reads it: its labels and its CSINode."""

    name: str
    table: NodeTable  #: the node alone, nameless (as `CheckNodeAffinity` sees it)
    csi_node: CSINode | None

    @classmethod
    def read(cls, api: VolumeApi, node_name: str) -> CheckedNode:
        try:
            node = api.read_node(node_name)
        except ApiError as exc:
            raise BindingFailed(f'failed to get node "{node_name}": {exc.message}') from exc
        try:
            csi_node: CSINode | None = api.read_csi_node(node_name)
        except ApiError:
            csi_node = None  # upstream logs it and goes on without one
        return cls(node_name, NodeTable([Node("", labels=node.labels)]), csi_node)

    def check_affinity(self, volume: PersistentVolume, failed_translation: str) -> None:
        """`tryTranslatePVToCSI` then `CheckNodeAffinity`: BindingFailed when the volume
        does not admit the node (or its translation fails: `failed_translation` prefixes
        the translator's error)."""
        try:
            terms = affinity_on(volume, self.csi_node)
        except Untranslatable as exc:
            raise BindingFailed(f"{failed_translation}could not translate pv: {exc}") from exc
        if terms is not None and not NodeSelector.compile(terms).mask(self.table)[0]:
            raise BindingFailed(
                f'pv "{volume.name}" node affinity doesn\'t match node "{self.name}": '
                "no matching NodeSelectorTerms"
            )


def assume_pod_volumes(volumes: PodVolumes, node_name: str) -> tuple[Assumption, ...]:
    """What `AssumePodVolumes` assumes: the volumes `GetBindVolumeToClaim` changed, and
    every claim to provision with the node selected."""
    assumed: list[Assumption] = []
    for binding in volumes.static_bindings:
        pre_bound = bind_volume_to_claim(binding.volume, binding.claim)
        if pre_bound is not None:
            assumed.append(VolumeAssumption(binding.volume.name, claim_ref(binding.claim)))
    for claim in volumes.dynamic_provisions:
        assumed.append(ClaimAssumption(claim_ref(claim), node_name))
    return tuple(assumed)


def bind_pod_volumes(
    api: VolumeApi,
    volumes: PodVolumes,
    node_name: str,
    timeout: float,
    stop: threading.Event,
    monotonic: Callable[[], float],
) -> None:
    """`BindPodVolumes`: update every volume and every claim to provision, then wait for
    the provisioner and the PV controller to bind every claim. `stop` (the scheduler
    shutting down) ends the wait as a timeout does."""
    try:
        for binding in volumes.static_bindings:
            api.bind_volume(binding.volume.name, binding.claim)
        for claim in volumes.dynamic_provisions:
            api.select_node(claim, node_name)
    except ApiError as exc:
        raise BindingFailed(exc.message) from exc
    deadline = None if timeout == 0 else monotonic() + timeout
    while True:
        try:
            node = CheckedNode.read(api, node_name)
            if check_bindings(api, volumes.static_bindings, node) and check_provisions(
                api, volumes.dynamic_provisions, node
            ):
                return
        except BindingFailed as exc:
            raise BindingFailed(f"binding volumes: {exc}") from exc
        wait = POLL_INTERVAL if deadline is None else min(POLL_INTERVAL, deadline - monotonic())
        if wait <= 0 or stop.wait(wait):
            raise BindingFailed(f"binding volumes: {TIMED_OUT}")


def check_bindings(api: VolumeApi, bindings: Sequence[BindingInfo], node: CheckedNode) -> bool:
    """`checkBindings`: True when every claim is fully bound; BindingFailed when a
    volume no longer admits the node, its claimRef was dropped, or the API could not be
    read."""
    for binding in bindings:
        try:
            volume = api.read_volume(binding.volume.name)
            claim = api.read_claim(binding.claim.namespace, binding.claim.name)
        except ApiError as exc:
            raise BindingFailed(f"failed to check binding: {exc.message}") from exc
        node.check_affinity(volume, "failed to translate pv to csi: ")
        if volume.claim_ref is None or not volume.claim_ref.uid:
            raise BindingFailed(f'ClaimRef got reset for pv "{volume.name}"')
        if not claim.is_bound:
            return False
    return True


def check_provisions(
    api: VolumeApi, claims: Sequence[PersistentVolumeClaim], node: CheckedNode
) -> bool:
    """`checkBindings` for the claims to provision: True when every one is fully bound;
    BindingFailed when its selected node was reset or changed (the provisioner gave up),
    the volume it was bound to does not admit the node, or the API could not be read."""
    for wanted in claims:
        try:
            claim = api.read_claim(wanted.namespace, wanted.name)
        except ApiError as exc:
            raise BindingFailed(
                f'failed to get pvc "{wanted.namespace}/{wanted.name}": {exc.message}'
            ) from exc
        if claim.selected_node != node.name:
            raise BindingFailed(f'provisioning failed for PVC "{claim.name}"')
        if claim.volume_name:
            try:
                volume = api.read_volume(claim.volume_name)
            except ApiError as exc:
                if exc.code == NOT_FOUND:
                    return False  # not seen yet, or deleted: the claim will be unbound
                raise BindingFailed(
                    f'failed to get pv "{claim.volume_name}" from cache: {exc.message}'
                ) from exc
            node.check_affinity(volume, "")
        if not claim.is_bound:
            return False
    return True
