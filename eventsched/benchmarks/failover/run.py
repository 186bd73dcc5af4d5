"""One scenario's run: its settings, control plane, database, watch and replicas."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kubernetes.client

from eventsched.benchmarks.bindwatch import BindWatch
from eventsched.benchmarks.controlplane import ControlPlane
from eventsched.benchmarks.failover.checks import Checks, check
from eventsched.benchmarks.failover.postgres import fresh_database
from eventsched.benchmarks.failover.replicas import Replica
from eventsched.benchmarks.failover.smalldisk import SmallDisk
from eventsched.benchmarks.kube import NAMESPACE, _create_pods, _nodes, _pod
from eventsched.benchmarks.kubebinaries import kube_binaries

DEFAULT_SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"


@dataclass(frozen=True, slots=True)
class Settings:
    nodes: int = 100
    pods: int = 1000
    server: str = DEFAULT_SERVER
    #: clientConnection.qps / burst; None: eventsched's defaults (50 / 100), no --config
    qps: float | None = None
    burst: int | None = None
    #: restart scenarios: seconds the server stays stopped (0: a plain restart)
    down: float = 0.0
    #: copy the replicas' and kube-apiserver's logs here (a folder per scenario)
    keep_logs: Path | None = None
    #: pg-restart: pods created this many a second while it runs (the others: all up front)
    rate: float = 20.0
    #: apiserver-restart: SIGKILL (a crash) instead of SIGTERM
    kill_apiserver: bool = False
    #: leaderElection.leaseDuration in seconds (renewDeadline 2/3 of it, retryPeriod 1/5);
    #: None: eventsched's defaults (15 / 10 / 2)
    lease: int | None = None
    #: kill-9: how many kills; api-faults: seconds of faults and the share of requests faulted
    kills: int = 20
    fault_seconds: float = 60.0
    fault_share: float = 0.2
    #: the random moments (kill-9) and answers (api-faults)
    seed: int = 1
    #: disk-full: the tablespace's filesystem size (MiB) and how long it stays full
    disk_mib: int = 64

    def config_file(self, workdir: Path) -> Path | None:
        if self.qps is None and self.burst is None and self.lease is None:
            return None
        connection: dict[str, float] = {}
        if self.qps is not None:
            connection["qps"] = self.qps
        if self.burst is not None:
            connection["burst"] = self.burst
        path = workdir / "eventsched.yaml"
        config: dict[str, object] = {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "clientConnection": connection,
        }
        if self.lease is not None:
            config["leaderElection"] = {
                "leaseDuration": f"{self.lease}s",
                "renewDeadline": f"{max(1, self.lease * 2 // 3)}s",
                "retryPeriod": f"{max(1, self.lease // 5)}s",
            }
        path.write_text(json.dumps(config) + "\n")  # JSON is YAML
        return path


class Run:
    """A control plane with nodes and pending pods, a fresh database, a watch of binds."""

    def __init__(
        self,
        stack: contextlib.ExitStack,
        settings: Settings,
        upfront: bool,
        disk: SmallDisk | None = None,
    ) -> None:
        """upfront: all pods created before the replicas start, else none (see `feed`);
        disk: the database goes in its tablespace."""
        binaries = kube_binaries()
        if binaries is None:
            raise SystemExit("set EVENTSCHED_KUBE_BIN to kube-apiserver's directory (etcd on PATH)")
        self.settings = settings
        self.pods = settings.pods
        self.down = settings.down
        self.kill_apiserver = settings.kill_apiserver
        self.cp = stack.enter_context(ControlPlane(binaries))
        self.cp.make_ready_nodes(_nodes(settings.nodes))
        _create_pods(self.cp, settings.pods if upfront else 0, "eventsched")
        self.rate = settings.rate
        self.config = settings.config_file(self.cp.workdir)
        self.disk = disk
        tablespace = None if disk is None else disk.tablespace
        self.url = stack.enter_context(fresh_database(settings.server, tablespace))
        self.watch = BindWatch(self.cp, NAMESPACE, patient=True)
        stack.callback(self.watch.close)
        self.watch.start(settings.pods)
        self.clock = time.monotonic()
        self.wall = time.time()  # the same moment on the Unix clock
        self.replicas: list[Replica] = []
        #: pods whose Binding a fault proxy answered 409, once per answer (api-faults)
        self.injected_409: list[str] = []
        self._stack = stack

    def now(self) -> float:
        return time.monotonic() - self.clock

    def feed(self) -> None:
        """Create the pods on a thread, `rate` a second, each retried while the API is away."""
        thread = threading.Thread(target=self._feed, name="pod-feed", daemon=True)
        thread.start()

    def _feed(self) -> None:
        client = self.cp.api_client()
        core: Any = kubernetes.client.CoreV1Api(client)
        started = time.monotonic()
        try:
            for i in range(self.pods):
                time.sleep(max(0.0, started + i / self.rate - time.monotonic()))
                _create_pod(core, _pod(f"pod-{i:05d}", "eventsched"))
        finally:
            client.close()

    def replica(self, name: str, kubeconfig: Path | None = None) -> Replica:
        """A replica with the admin kubeconfig, or `kubeconfig` (its log goes beside it)."""
        replica = Replica(
            name, self.url, kubeconfig or self.cp.kubeconfig(), self.config, self.clock
        )
        self._stack.callback(replica.stop)
        self.replicas.append(replica)
        return replica

    def fed_replica(self, bound: int, kubeconfig: Path | None = None) -> Replica:
        """replica-1 (see `replica`), leading; then the pods fed (see `feed`) until
        `bound` of them are bound."""
        replica = self.replica("replica-1", kubeconfig)
        self.wait("replica-1 leads", replica.leading, 60)
        self.feed()
        self.wait_bound(bound, _timeout(self.pods))
        return replica

    def binds(self) -> dict[str, float]:
        """pod name -> when the watch saw it bound, on this run's clock."""
        return {pod: t - self.clock for pod, t in list(self.watch.bound.items())}

    def wait(self, what: str, condition: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            dead = [r.name for r in self.replicas if r.proc.poll() is not None]
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what}: not within {timeout:.0f} s (exited: {dead})")
            time.sleep(0.1)

    def wait_bound(self, count: int, timeout: float) -> None:
        self.wait(f"{count} pods bound", lambda: len(self.watch.bound) >= count, timeout)

    def check(self) -> Checks:
        return check(self.cp, self.url, self.pods, self.injected_409)


def _create_pod(core: Any, body: dict[str, Any], tries: int = 300) -> None:
    for _ in range(tries):
        try:
            core.create_namespaced_pod(NAMESPACE, body, _preload_content=False)
            return
        except kubernetes.client.ApiException as e:
            if e.status == 409:  # created by the try whose answer was lost
                return
        except Exception:  # the API server is away
            pass
        time.sleep(0.2)


def _timeout(pods: int) -> float:
    return max(120.0, pods / 5)
