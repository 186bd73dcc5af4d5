"""An external provisioner, as far as the scheduler's dynamic provisioning needs it.

No provisioner runs beside the test API servers, so a test that has volumes
provisioned plays one in a thread through the server's own API, as an
external-provisioner sidecar does: a claim with the `volume.kubernetes.io/selected-node`
annotation and no volume gets a PersistentVolume `pvc-<claim uid>` (its class, size
and access modes, a CSI source of the class's provisioner, node affinity on the
selected node's hostname) pre-bound to it by `spec.claimRef`; the PV controller
(tests/kube/pvcontroller.py) then binds the two.
"""

from __future__ import annotations

from typing import Any

from tests.kube.pvcontroller import PollingController
from tests.kube.realserver import KubeServer

SELECTED_NODE = "volume.kubernetes.io/selected-node"
HOSTNAME = "kubernetes.io/hostname"


class Provisioner(PollingController):
    """Provisions volumes for claims with a selected node while the `with` block runs."""

    def __init__(self, server: KubeServer, driver: str, interval: float = 0.05) -> None:
        super().__init__("provisioner", interval)
        self.server = server
        self.driver = driver
        #: (claim namespace/name, selected node, volume) in the order provisioned.
        self.provisioned: list[tuple[str, str, str]] = []

    def sync(self) -> None:
        """One pass over every claim."""
        for claim in self.server.list("persistentvolumeclaims"):
            meta = claim["metadata"]
            node = (meta.get("annotations") or {}).get(SELECTED_NODE)
            if not node or (claim.get("spec") or {}).get("volumeName"):
                continue
            name = f"pvc-{meta['uid']}"
            if self.server.get("persistentvolumes", name) is None:
                self.server.create(self._volume(name, claim, node))
                self.provisioned.append((f"{meta['namespace']}/{meta['name']}", node, name))

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
