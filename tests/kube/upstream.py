"""The real kube-scheduler v1.28 beside a test, on the real API server's control plane.

A test that compares eventsched with upstream runs its setup again, its pods
named for `default-scheduler`, with kube-scheduler started from the control
plane's binaries (the default profile, no leader election) for the `with`
block. A wait that times out inside the block fails with the tail of
kube-scheduler's log and the pods' status.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.kube.realserver import RealApiServer

UPSTREAM = "default-scheduler"


def kube_scheduler_config(path: Path, kubeconfig: Path) -> Path:
    """The default profile; with --config, kube-scheduler takes its kubeconfig from here."""
    path.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        f"clientConnection: {{kubeconfig: {kubeconfig}}}\n"
        "leaderElection: {leaderElect: false}\n"
        f"profiles:\n  - schedulerName: {UPSTREAM}\n"
    )
    return path


@contextmanager
def kube_scheduler(server: RealApiServer, workdir: Path) -> Iterator[None]:
    """kube-scheduler runs while the block does (see the module)."""
    plane = server.control_plane
    config = kube_scheduler_config(workdir / "kube-scheduler.yaml", plane.kubeconfig())
    process = plane.start_kube_scheduler(config)
    try:
        yield
    except TimeoutError as exc:
        log = (plane.workdir / "kube-scheduler.log").read_text(errors="replace")[-6000:]
        pods = {p["metadata"]["name"]: p.get("status") for p in server.list("pods")}
        raise AssertionError(f"{exc}\n{pods}\n--- kube-scheduler.log\n{log}") from None
    finally:
        process.terminate()
        process.wait(timeout=10)
