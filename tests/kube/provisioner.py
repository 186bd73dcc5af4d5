"""An external provisioner, as far as the scheduler's dynamic provisioning needs it.

No provisioner runs beside the test API servers, so a test that has volumes
provisioned plays one in a thread through the server's own API, as an
external-provisioner sidecar does: a claim with the `volume.kubernetes.io/selected-node`
annotation and no volume gets a PersistentVolume `pvc-<claim uid>` (its class, size
and access modes, a CSI source of the class's provisioner, node affinity on the
selected node's hostname) pre-bound to it by `spec.claimRef`; the PV controller
(tests/kube/pvcontroller.py) then binds the two. As sig-storage-lib-external-provisioner's
`shouldProvision`, it takes only claims the PV controller has handed to its driver
(the `volume.kubernetes.io/storage-provisioner` annotation).

`paused` holds it (a claim waits for its volume); `fail(n)` makes the next n
attempts fail as a provisioner whose driver answers a rescheduling error does
(`rescheduleProvisioning`): a Warning `ProvisioningFailed` Event on the claim,
"failed to provision volume with StorageClass ...", and the selected-node
annotation removed, which tells the scheduler to choose again.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Any

from tests.kube.apiserver import MERGE_PATCH
from tests.kube.pvcontroller import STORAGE_PROVISIONER, PollingController
from tests.kube.realserver import KubeServer

SELECTED_NODE = "volume.kubernetes.io/selected-node"
HOSTNAME = "kubernetes.io/hostname"
#: What the driver answers a failing CreateVolume with, in the Event's message.
DRIVER_ERROR = "rpc error: code = ResourceExhausted desc = no space left in the pool"


class Provisioner(PollingController):
    """Provisions volumes for claims with a selected node while the `with` block runs."""

    def __init__(self, server: KubeServer, driver: str, interval: float = 0.05) -> None:
        super().__init__("provisioner", interval)
        self.server = server
        self.driver = driver
        #: (claim namespace/name, selected node, volume) in the order provisioned.
        self.provisioned: list[tuple[str, str, str]] = []
        #: (claim namespace/name, selected node) of each failed attempt, in order.
        self.failed: list[tuple[str, str]] = []
        #: Set: claims wait, nothing is provisioned.
        self.paused = threading.Event()
        self._failures = 0

    def fail(self, attempts: int) -> None:
        """The next `attempts` provisioning attempts fail (see the module)."""
        self._failures = attempts

    def sync(self) -> None:
        """One pass over every claim."""
        if self.paused.is_set():
            return
        for claim in self.server.list("persistentvolumeclaims"):
            meta = claim["metadata"]
            annotations = meta.get("annotations") or {}
            node = annotations.get(SELECTED_NODE)
            if not node or (claim.get("spec") or {}).get("volumeName"):
                continue
            if annotations.get(STORAGE_PROVISIONER) != self.driver:
                continue
            key = f"{meta['namespace']}/{meta['name']}"
            if self._failures > 0:
                self._failures -= 1
                self._give_up(claim)
                self.failed.append((key, node))
                continue
            name = f"pvc-{meta['uid']}"
            if self.server.get("persistentvolumes", name) is None:
                self.server.create(self._volume(name, claim, node))
                self.provisioned.append((key, node, name))

    def _give_up(self, claim: dict[str, Any]) -> None:
        """`rescheduleProvisioning`, and the Event the provision controller records."""
        meta = claim["metadata"]
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.server.create(
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"generateName": f"{meta['name']}.", "namespace": meta["namespace"]},
                "involvedObject": {
                    "kind": "PersistentVolumeClaim",
                    "apiVersion": "v1",
                    "namespace": meta["namespace"],
                    "name": meta["name"],
                    "uid": meta["uid"],
                },
                "type": "Warning",
                "reason": "ProvisioningFailed",
                "message": (
                    f'failed to provision volume with StorageClass "{claim["spec"]["storageClassName"]}": '
                    f"{DRIVER_ERROR}"
                ),
                "source": {"component": f"{self.driver}_external-provisioner"},
                "firstTimestamp": now,
                "lastTimestamp": now,
                "count": 1,
            },
            "core_events",
        )
        self.server.patch(
            "persistentvolumeclaims",
            meta["name"],
            {"metadata": {"annotations": {SELECTED_NODE: None}}},
            meta["namespace"],
            MERGE_PATCH,
        )

    def _volume(self, name: str, claim: dict[str, Any], node: str) -> dict[str, Any]:
        meta, spec = claim["metadata"], claim["spec"]
        term = {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": [node]}]}
        return {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": name},
            "spec": {
                "capacity": {"storage": spec["resources"]["requests"]["storage"]},
                "accessModes": spec["accessModes"],
                "persistentVolumeReclaimPolicy": "Delete",
                "storageClassName": spec["storageClassName"],
                "csi": {"driver": self.driver, "volumeHandle": name},
                "nodeAffinity": {"required": {"nodeSelectorTerms": [term]}},
                "claimRef": {
                    "kind": "PersistentVolumeClaim",
                    "apiVersion": "v1",
                    "namespace": meta["namespace"],
                    "name": meta["name"],
                    "uid": meta["uid"],
                },
            },
        }
