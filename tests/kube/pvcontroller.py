"""The PV controller of kube-controller-manager, as far as the scheduler's volume binding needs it.

No controller manager runs beside the test API servers (the emulator, or the real
kube-apiserver of tests/kube/realserver.py), so a test that binds volumes plays its
part in a thread, through the server's own API: a new PersistentVolume without a
claimRef becomes Available (`syncVolume`); one whose claimRef names a claim not bound
yet (what VolumeBinding's PreBind writes) gets phase Bound, and the claim gets
`spec.volumeName`, the `pv.kubernetes.io/bind-completed` and
`pv.kubernetes.io/bound-by-controller` annotations and phase Bound, as
`pv_controller.go`'s `bind` does (the volume first, then the claim). An unbound
claim with a selected node whose class has a provisioner is handed to it
(`provisionClaimOperationExternal`'s `setClaimProvisioner`): the
`volume.kubernetes.io/storage-provisioner` annotation (and its beta twin) name
the class's provisioner, which external provisioners wait for.
"""

from __future__ import annotations

import copy
import threading
from types import TracebackType
from typing import Any, Self

from tests.kube.realserver import KubeServer

BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
NO_PROVISIONER = "kubernetes.io/no-provisioner"


class PollingController:
    """A controller played in a thread: `sync` every `interval` seconds while the `with`
    block runs; an error stops it and fails the block."""

    def __init__(self, name: str, interval: float) -> None:
        self.errors: list[BaseException] = []
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def sync(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(10)
        if kind is None:
            assert not self.errors, f"{self._thread.name} failed: {self.errors!r}"

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self.sync()
            except Exception as exc:  # reported when the block ends
                self.errors.append(exc)
                return


class PVController(PollingController):
    """Binds claims to the volumes pre-bound to them while the `with` block runs."""

    def __init__(self, server: KubeServer, interval: float = 0.05) -> None:
        super().__init__("pv-controller", interval)
        self.server = server
        #: (claim namespace/name, volume) in the order they were bound.
        self.bound: list[tuple[str, str]] = []

    def __enter__(self) -> Self:
        # One pass first, before the thread: the volumes already there are Available when
        # the block starts, as a controller manager running all along would have left them.
        # Else its first write (the phase) could land between a test's read of a volume and
        # its update (409 Conflict), a race no cluster with a running controller has.
        self.sync()
        return super().__enter__()

    def sync(self) -> None:
        """One pass over every claim to hand to a provisioner, then over every volume
        (`syncVolume` / `syncUnboundClaim`)."""
        for claim in self.server.list("persistentvolumeclaims"):
            self._hand_to_provisioner(claim)
        for volume in self.server.list("persistentvolumes"):
            ref = (volume.get("spec") or {}).get("claimRef")
            if not ref:
                if (volume.get("status") or {}).get("phase") != "Available":
                    available = copy.deepcopy(volume)
                    available["status"] = {"phase": "Available"}
                    self.server.update(available, "persistentvolumes")
                continue
            claim = self.server.get("persistentvolumeclaims", ref["name"], ref["namespace"])
            if claim is None or (claim.get("spec") or {}).get("volumeName"):
                continue
            if ref.get("uid") and ref["uid"] != claim["metadata"]["uid"]:
                continue
            self._bind(volume, claim)

    def _hand_to_provisioner(self, claim: dict[str, Any]) -> None:
        """`setClaimProvisioner`, for an unbound claim with a selected node (see the module)."""
        meta, spec = claim["metadata"], claim.get("spec") or {}
        annotations = meta.get("annotations") or {}
        if spec.get("volumeName") or not annotations.get(SELECTED_NODE):
            return
        found = self.server.get("storageclasses", spec.get("storageClassName") or "")
        provisioner = (found or {}).get("provisioner")
        if not provisioner or provisioner == NO_PROVISIONER:
            return
        if annotations.get(STORAGE_PROVISIONER) == provisioner:
            return
        self.server.patch(
            "persistentvolumeclaims",
            meta["name"],
            {
                "metadata": {
                    "annotations": {
                        STORAGE_PROVISIONER: provisioner,
                        BETA_STORAGE_PROVISIONER: provisioner,
                    }
                }
            },
            meta["namespace"],
            "application/merge-patch+json",
        )

    def _bind(self, volume: dict[str, Any], claim: dict[str, Any]) -> None:
        name = volume["metadata"]["name"]
        bound_volume = copy.deepcopy(volume)
        bound_volume["status"] = {"phase": "Bound"}
        self.server.update(bound_volume, "persistentvolumes")
        bound_claim = copy.deepcopy(claim)
        bound_claim["spec"]["volumeName"] = name
        annotations = bound_claim["metadata"].setdefault("annotations", {})
        annotations[BIND_COMPLETED] = "yes"
        annotations[BOUND_BY_CONTROLLER] = "yes"
        bound_claim["status"] = {
            "phase": "Bound",
            "accessModes": (volume.get("spec") or {}).get("accessModes", []),
            "capacity": (volume.get("spec") or {}).get("capacity", {}),
        }
        self.server.update(bound_claim, "persistentvolumeclaims")
        meta = claim["metadata"]
        self.bound.append((f"{meta['namespace']}/{meta['name']}", name))
