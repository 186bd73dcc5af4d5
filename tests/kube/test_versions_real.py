"""Each reference Kubernetes version's control plane (tests/reference): it starts, says its
version, kube-scheduler of that version places a pod on it, `run` decides as that version
unless told otherwise, and kube-controller-manager (v1.34 and v1.37 builds) does what a
test would otherwise play by hand."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from eventsched.cli.versionflags import cluster_features
from eventsched.config.featuregates import VersionError
from tests.kube.realserver import RealApiServer
from tests.waiting import wait_for

SCHEDULER_CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
profiles:
- schedulerName: default-scheduler
"""


def _pod(name: str, cpu: str = "100m") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]
        },
    }


def _flags(
    kubeconfig: Path, version: str | None = None, gates: str | None = None
) -> argparse.Namespace:
    return argparse.Namespace(
        kubeconfig=str(kubeconfig), config=None, kubernetes_version=version, feature_gates=gates
    )


def test_the_control_plane_says_its_version_and_eventsched_decides_as_it(
    versioned_server: RealApiServer, tmp_path: Path
) -> None:
    minor = versioned_server.control_plane.binaries.minor
    info = versioned_server.call("GET", "/version")
    assert info["gitVersion"] == versioned_server.control_plane.binaries.version
    assert f"{info['major']}.{info['minor']}" == minor
    kubeconfig = versioned_server.kubeconfig(tmp_path / "kubeconfig")
    # Without --kubernetes-version, the API server's; with it, the flag's.
    assert cluster_features(_flags(kubeconfig)).version == minor
    assert cluster_features(_flags(kubeconfig, "1.30")).version == "1.30"
    # Gates are that version's: PodLevelResources came in 1.32.
    if minor == "1.28":
        with pytest.raises(VersionError, match="unrecognized feature gate: PodLevelResources"):
            cluster_features(_flags(kubeconfig, gates="PodLevelResources=false"))
    else:
        assert cluster_features(_flags(kubeconfig)).pod_level_resources is True
        features = cluster_features(_flags(kubeconfig, gates="PodLevelResources=false"))
        assert features.pod_level_resources is False


def test_kube_scheduler_of_the_same_version_places_a_pod(
    versioned_server: RealApiServer, tmp_path: Path
) -> None:
    if versioned_server.control_plane.binaries.scheduler is None:
        pytest.skip("this build has no kube-scheduler")
    versioned_server.create({"metadata": {"name": "n1"}}, kind="nodes")
    versioned_server.create(_pod("p"))
    config = tmp_path / "kube-scheduler.yaml"
    config.write_text(SCHEDULER_CONFIG)
    proc = versioned_server.control_plane.start_kube_scheduler(config)
    try:

        def bound() -> str:
            pod = versioned_server.get("pods", "p") or {}
            return str((pod.get("spec") or {}).get("nodeName") or "")

        assert wait_for("kube-scheduler to bind p", bound, timeout=60) == "n1"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_run_refuses_a_wrong_version_or_gate_in_one_line(
    versioned_server: RealApiServer, tmp_path: Path
) -> None:
    # The flag is what a user gives when the server is outside the range; a wrong one
    # is refused before anything starts.
    kubeconfig = versioned_server.kubeconfig(tmp_path / "kubeconfig")
    with pytest.raises(VersionError, match=r"Kubernetes 1\.27 is not supported"):
        cluster_features(_flags(kubeconfig, "1.27"))
    done = subprocess.run(
        [
            sys.executable, "-m", "eventsched.cli.main", "--db", f"sqlite:///{tmp_path / 'l.db'}",
            "run", "--kubeconfig", str(kubeconfig), "--leader-elect", "false",
            "--feature-gates", "NoSuchGate=true",
        ],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "unrecognized feature gate: NoSuchGate" in lines[0], done.stderr


@pytest.mark.parametrize("minor", ["1.34", "1.37"])
def test_the_controller_manager_empties_a_deleted_namespace_and_binds_a_claim(
    minor: str, reference_planes, tmp_path: Path
) -> None:
    server: RealApiServer = reference_planes(minor)
    server.reset()
    proc = server.control_plane.start_controller_manager()
    try:
        server.ensure_namespace("doomed")
        server.create({**_pod("p"), "metadata": {"name": "p", "namespace": "doomed"}})
        server.call("DELETE", "/api/v1/namespaces/doomed")

        def namespace_gone() -> bool:
            status, _ = server.request("GET", "/api/v1/namespaces/doomed")
            return status == 404

        wait_for("the namespace controller to delete doomed and its pod", namespace_gone, 60)
        server._namespaces.discard("doomed")
        # The PV binder binds an Immediate claim to a matching volume: no test plays it.
        server.create(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolume",
                "metadata": {"name": "pv1"},
                "spec": {
                    "capacity": {"storage": "1Gi"},
                    "accessModes": ["ReadWriteOnce"],
                    "hostPath": {"path": "/tmp/pv1"},
                    "storageClassName": "manual",
                },
            }
        )
        server.create(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": "c1", "namespace": "default"},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}},
                    "storageClassName": "manual",
                },
            }
        )

        def claim_bound() -> str:
            claim = server.get("persistentvolumeclaims", "c1") or {}
            return str((claim.get("status") or {}).get("phase") or "")

        assert wait_for("the PV binder to bind c1", lambda: claim_bound() == "Bound", 60)
        assert (server.get("persistentvolumeclaims", "c1") or {})["spec"]["volumeName"] == "pv1"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
