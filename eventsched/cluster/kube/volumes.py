"""VolumeBinding's PreBind requests on a real API server: pre-bind a volume, select a claim's
node, read a volume, a claim, a node and its CSINode.

kube-scheduler's `bindAPIUpdate` updates the PersistentVolume it assumed,
`GetBindVolumeToClaim` applied: `spec.claimRef` names the claim (kind,
namespace, name, UID, as `reference.GetReference` gives it) and, unless the
volume was bound to the claim already, `pv.kubernetes.io/bound-by-controller:
"yes"`. Its update carries the resourceVersion of the copy it assumed; here
the volume is read (GET) and updated (PUT) with the resourceVersion read, and
refused as the API would refuse a stale update when another claim holds it
meanwhile. The PV controller of kube-controller-manager does the rest; PreBind
polls the volume and the claim with GETs until it has.

A claim to provision is updated with the `volume.kubernetes.io/selected-node`
annotation (kube-scheduler updates the claim it assumed; here it is read and
updated with the resourceVersion read). The external provisioner watches for
it, creates the volume, and the PV controller binds the claim.
"""

from __future__ import annotations

import copy
from typing import Any

from eventsched.cluster.kube.convert import to_object
from eventsched.cluster.kube.ratelimit import TokenBucket
from eventsched.cluster.kube.rest import Answer, Rest, limited_request, resource_path
from eventsched.model import Node
from eventsched.model.changes import ApiError
from eventsched.model.errors import ManifestError
from eventsched.model.pvbinding import BOUND_BY_CONTROLLER_ANNOTATION
from eventsched.model.volumes import (
    CSI_NODE,
    PV,
    PVC,
    SELECTED_NODE_ANNOTATION,
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
)

VOLUMES = "persistentvolumes"
CLAIMS = "persistentvolumeclaims"
NODES = "nodes"
CSI_NODES = "storage.k8s.io/v1/csinodes"


class VolumeRequests:
    """The three requests, through the adapter's connection pool and rate limit."""

    def __init__(self, rest: Rest, limiter: TokenBucket) -> None:
        self._rest = rest
        self._limiter = limiter

    def bind_volume(self, volume: str, claim: PersistentVolumeClaim) -> None:
        current = self._get(resource_path(VOLUMES, name=volume))
        spec = current.get("spec") or {}
        ref = spec.get("claimRef") or None
        if ref is not None and not _names(ref, claim):
            raise ApiError(
                409,
                f'Operation cannot be fulfilled on persistentvolumes "{volume}": the object has '
                "been modified; please apply your changes to the latest version and try again",
            )
        updated = bind_to_claim(current, claim)
        if updated is None:
            return
        answer = self._request("PUT", resource_path(VOLUMES, name=volume), updated)
        if not answer.ok:
            raise ApiError(answer.status, answer.message)

    def select_node(self, claim: PersistentVolumeClaim, node_name: str) -> None:
        path = resource_path(CLAIMS, claim.namespace, claim.name)
        current = self._get(path)
        annotations = current.setdefault("metadata", {}).setdefault("annotations", {})
        if annotations.get(SELECTED_NODE_ANNOTATION) == node_name:
            return
        annotations[SELECTED_NODE_ANNOTATION] = node_name
        answer = self._request("PUT", path, current)
        if not answer.ok:
            raise ApiError(answer.status, answer.message)

    def read_volume(self, name: str) -> PersistentVolume:
        found = to_object(self._get(resource_path(VOLUMES, name=name)), PV)
        if not isinstance(found, PersistentVolume):
            raise ApiError(0, f'persistentvolume "{name}" cannot be read')
        return found

    def read_claim(self, namespace: str, name: str) -> PersistentVolumeClaim:
        found = to_object(self._get(resource_path(CLAIMS, namespace, name)), PVC)
        if not isinstance(found, PersistentVolumeClaim):
            raise ApiError(0, f'persistentvolumeclaim "{namespace}/{name}" cannot be read')
        return found

    def read_node(self, name: str) -> Node:
        try:
            return Node.from_manifest(self._get(resource_path(NODES, name=name)))
        except ManifestError as exc:
            raise ApiError(0, f'node "{name}" cannot be read: {exc}') from exc

    def read_csi_node(self, name: str) -> CSINode:
        found = to_object(self._get(resource_path(CSI_NODES, name=name)), CSI_NODE)
        if not isinstance(found, CSINode):
            raise ApiError(0, f'csinode "{name}" cannot be read')
        return found

    def _get(self, path: str) -> dict[str, Any]:
        answer = self._request("GET", path)
        if not answer.ok or not isinstance(answer.body, dict):
            raise ApiError(answer.status, answer.message)
        return answer.body

    def _request(self, method: str, path: str, body: Any = None) -> Answer:
        return limited_request(self._rest, self._limiter, method, path, body)


def bind_to_claim(volume: dict[str, Any], claim: PersistentVolumeClaim) -> dict[str, Any] | None:
    """`GetBindVolumeToClaim` on the API object: the updated copy, None when unchanged."""
    spec = volume.get("spec") or {}
    ref = spec.get("claimRef") or None
    updated = copy.deepcopy(volume)
    dirty = False
    if ref is None or (ref.get("namespace"), ref.get("name"), ref.get("uid")) != (
        claim.namespace,
        claim.name,
        claim.uid,
    ):
        updated.setdefault("spec", {})["claimRef"] = {
            "kind": "PersistentVolumeClaim",
            "apiVersion": "v1",
            "namespace": claim.namespace,
            "name": claim.name,
            "uid": claim.uid,
        }
        dirty = True
    annotations = updated.setdefault("metadata", {}).setdefault("annotations", {})
    if (
        ref is None or not _names(ref, claim)
    ) and BOUND_BY_CONTROLLER_ANNOTATION not in annotations:
        annotations[BOUND_BY_CONTROLLER_ANNOTATION] = "yes"
        dirty = True
    return updated if dirty else None


def _names(ref: dict[str, Any], claim: PersistentVolumeClaim) -> bool:
    """`IsVolumeBoundToClaim`: the claimRef names the claim (and its UID, when set)."""
    return (
        ref.get("name") == claim.name
        and ref.get("namespace") == claim.namespace
        and (not ref.get("uid") or ref.get("uid") == claim.uid)
    )
