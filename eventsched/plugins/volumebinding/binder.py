"""Reserve and PreBind's half of VolumeBinding: assume, write and wait (binder.go, v1.28).

- `assume_pod_volumes` (`AssumePodVolumes`): each static binding Filter found
  for the node, pre-bound with `GetBindVolumeToClaim`; those that changed are
  assumed. eventsched's assume cache is the view: the assumptions go into the
  `reserved` event (`ASSUMED_VOLUMES_KEY`), whose fold makes later pods of the
  run skip the volumes, and `unreserved` undoes them (`RevertAssumedPodVolumes`).
- `bind_pod_volumes` (`BindPodVolumes`): `bindAPIUpdate` updates each volume
  (its error returned as the API gave it), then polls `checkBindings` every
  second until every claim is fully bound (`spec.volumeName` and the
  bind-completed annotation, which the PV controller sets) or `bindTimeoutSeconds`
  passes: "binding volumes: timed out waiting for the condition" (0: no limit,
  as `wait.Poll`'s poller). A claimRef the PV controller dropped ends the wait
  at once: "binding volumes: ClaimRef got reset for pv ...".

The checks read the API itself (`read_volume`, `read_claim` through the
handle), never the view: the binding cycle runs on a binder thread. Where
upstream reads its informers' latest API objects (`GetAPIPV`) and waits for the
version it wrote, a GET is never older than the write. What upstream also
checks there and eventsched does not: the volume's node affinity against the
node's current labels, and that the pod still exists (a pod deleted while it
waits is found gone by Bind).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from eventsched.framework import VolumeApi
from eventsched.model.changes import ApiError
from eventsched.model.pvbinding import VolumeAssumption, bind_volume_to_claim, claim_ref
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


class BindingFailed(Exception):
    """BindPodVolumes' error, worded as kube-scheduler's."""


def assume_pod_volumes(bindings: Sequence[BindingInfo]) -> tuple[VolumeAssumption, ...]:
    """The volumes `AssumePodVolumes` assumes: those `GetBindVolumeToClaim` changed."""
    assumed: list[VolumeAssumption] = []
    for binding in bindings:
        pre_bound = bind_volume_to_claim(binding.volume, binding.claim)
        if pre_bound is not None:
            assumed.append(VolumeAssumption(binding.volume.name, claim_ref(binding.claim)))
    return tuple(assumed)


def bind_pod_volumes(
    api: VolumeApi,
    bindings: Sequence[BindingInfo],
    timeout: float,
    stop: threading.Event,
    monotonic: Callable[[], float],
) -> None:
    """`BindPodVolumes`: update every volume, then wait for the PV controller to bind
    every claim. `stop` (the scheduler shutting down) ends the wait as a timeout does."""
    for binding in bindings:
        try:
            api.bind_volume(binding.volume.name, binding.claim)
        except ApiError as exc:
            raise BindingFailed(exc.message) from exc
    deadline = None if timeout == 0 else monotonic() + timeout
    while True:
        try:
            if check_bindings(api, bindings):
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
