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

The checks read the API itself (`read_volume`, `read_claim` through the
handle), never the view: the binding cycle runs on a binder thread. Where
upstream reads its informers' latest API objects (`GetAPIPV`) and waits for the
version it wrote, a GET is never older than the write. What upstream also
checks there and eventsched does not: the volume's node affinity against the
node's current labels (a provisioned one's too), and that the pod still exists
(a pod deleted while it waits is found gone by Bind).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from eventsched.framework import VolumeApi
from eventsched.model.changes import ApiError
from eventsched.model.pvbinding import (
    Assumption,
    ClaimAssumption,
    VolumeAssumption,
    bind_volume_to_claim,
    claim_ref,
)
from eventsched.model.volumes import PersistentVolume, PersistentVolumeClaim

#: `wait.Poll`'s interval in BindPodVolumes.
POLL_INTERVAL = 1.0
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
            if check_bindings(api, volumes.static_bindings) and check_provisions(
                api, volumes.dynamic_provisions, node_name
            ):
                return
        except BindingFailed as exc:
            raise BindingFailed(f"binding volumes: {exc}") from exc
        wait = POLL_INTERVAL if deadline is None else min(POLL_INTERVAL, deadline - monotonic())
        if wait <= 0 or stop.wait(wait):
            raise BindingFailed(f"binding volumes: {TIMED_OUT}")


def check_bindings(api: VolumeApi, bindings: Sequence[BindingInfo]) -> bool:
    """`checkBindings`: True when every claim is fully bound; BindingFailed when a
    volume's claimRef was dropped or the API could not be read."""
    for binding in bindings:
        try:
            volume = api.read_volume(binding.volume.name)
            claim = api.read_claim(binding.claim.namespace, binding.claim.name)
        except ApiError as exc:
            raise BindingFailed(f"failed to check binding: {exc.message}") from exc
        if volume.claim_ref is None or not volume.claim_ref.uid:
            raise BindingFailed(f'ClaimRef got reset for pv "{volume.name}"')
        if not claim.is_bound:
            return False
    return True


def check_provisions(
    api: VolumeApi, claims: Sequence[PersistentVolumeClaim], node_name: str
) -> bool:
    """`checkBindings` for the claims to provision: True when every one is fully bound;
    BindingFailed when its selected node was reset or changed (the provisioner gave up)
    or the API could not be read. Upstream also checks the bound volume's node affinity
    against the node; eventsched does not (see the module)."""
    for wanted in claims:
        try:
            claim = api.read_claim(wanted.namespace, wanted.name)
        except ApiError as exc:
            raise BindingFailed(
                f'failed to get pvc "{wanted.namespace}/{wanted.name}": {exc.message}'
            ) from exc
        if claim.selected_node != node_name:
            raise BindingFailed(f'provisioning failed for PVC "{claim.name}"')
        if not claim.is_bound:
            return False
    return True
