"""eventsched and the real kube-scheduler of one version, side by side on that version's
control plane (tests/reference), on the pod of the measured bug: `spec.resources.requests`
cpu 6, its one container asking 1, and a node of 4 cpu.

v1.28's API server has no `spec.resources` (it drops the field), so both schedulers bind
the pod; v1.34's and v1.37's keep it (PodLevelResources beta), and both schedulers leave
it pending with NodeResourcesFit's "Insufficient cpu". eventsched decides as the version
the control plane reports, as `eventsched run` does (`Features.accounting`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from eventsched.cluster.kube import KubeCluster
from eventsched.config import default_profile
from eventsched.config.featuregates import features_for
from eventsched.events import EventStore
from eventsched.plugins import in_tree_registry
from eventsched.scheduler import Scheduler, SchedulerOptions
from tests.kube.realserver import RealApiServer
from tests.kube.upstream import UPSTREAM, kube_scheduler

OURS = "eventsched"
REASON = "0/1 nodes are available: 1 Insufficient cpu."


def big_pod(name: str, scheduler: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "schedulerName": scheduler,
            "resources": {"requests": {"cpu": "6"}},
            "containers": [
                {"name": "c", "image": "pause", "resources": {"requests": {"cpu": "1"}}}
            ],
        },
    }


@contextmanager
def eventsched_running(server: RealApiServer, store: EventStore, minor: str) -> Iterator[None]:
    features = features_for(minor)
    cluster = KubeCluster(server.client(), [OURS], accounting=features.accounting)
    scheduler = Scheduler(
        store,
        cluster,
        [default_profile(OURS, features=features)],
        in_tree_registry(),
        SchedulerOptions(initial_backoff=0.2, max_backoff=0.4),
    )
    stop = threading.Event()
    assert scheduler.start(stop=stop)
    loop = threading.Thread(target=scheduler.run, kwargs={"stop": stop}, daemon=True)
    loop.start()
    try:
        yield
    finally:
        stop.set()
        loop.join(10)
        scheduler.stop()


def scheduled(server: RealApiServer, name: str) -> Callable[[], dict[str, Any] | None]:
    """The pod's PodScheduled condition once its scheduler has set it."""

    def condition() -> dict[str, Any] | None:
        pod = server.get("pods", name) or {}
        conditions = (pod.get("status") or {}).get("conditions") or []
        return next((c for c in conditions if c["type"] == "PodScheduled"), None)

    return condition


@pytest.mark.parametrize("minor", ["1.28", "1.34", "1.37"])
def test_both_schedulers_count_the_pod_level_cpu_from_v1_34(
    minor: str,
    reference_planes: Callable[[str], RealApiServer],
    store: EventStore,
    tmp_path: Path,
) -> None:
    server = reference_planes(minor)
    server.reset()
    if server.control_plane.binaries.scheduler is None:
        pytest.skip(f"the Kubernetes {minor} build has no kube-scheduler")
    server.create(
        {
            "metadata": {"name": "small", "labels": {"kubernetes.io/hostname": "small"}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
        },
        kind="nodes",
    )
    server.create(big_pod("ours", OURS))
    server.create(big_pod("theirs", UPSTREAM))
    kept = (server.get("pods", "ours") or {})["spec"].get("resources")
    assert (kept is not None) is (minor != "1.28")  # v1.28 drops the unknown field
    with eventsched_running(server, store, minor), kube_scheduler(server, tmp_path):
        ours = server.wait_for(scheduled(server, "ours"), timeout=60)
        theirs = server.wait_for(scheduled(server, "theirs"), timeout=60)
    if minor == "1.28":
        assert ours["status"] == theirs["status"] == "True"
        assert (server.get("pods", "ours") or {})["spec"]["nodeName"] == "small"
        assert (server.get("pods", "theirs") or {})["spec"]["nodeName"] == "small"
        return
    print("MSG", minor, ours["message"], "|", theirs["message"])
    for condition in (ours, theirs):
        assert (condition["status"], condition["reason"]) == ("False", "Unschedulable")
        assert condition["message"].startswith(REASON), condition["message"]
    for name in ("ours", "theirs"):
        assert not (server.get("pods", name) or {})["spec"].get("nodeName")
