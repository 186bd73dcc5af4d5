"""A real Kubernetes control plane (etcd + kube-apiserver) on loopback, for tests and benchmarks.

The binaries come from `kubebinaries.kube_binaries()`; the processes are started and watched
with `processes.py`.

`ControlPlane` runs etcd and kube-apiserver with TLS (the apiserver's self-signed serving
certificate is trusted as the certificate authority), static token authentication and RBAC,
and, when asked, an audit log of every request (`auditlog.py`).
kube-controller-manager runs only when a test starts it (`start_controller_manager`, with the
reference builds of tests/reference); otherwise nothing creates service accounts or deletes a
namespace's contents. Nodes stay as written (`make_ready_nodes` makes them schedulable).

Self-contained: standard library, the official ``kubernetes`` client and ``openssl``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import shutil
import ssl
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Any

import kubernetes.client
import yaml

from eventsched.benchmarks.auditlog import AuditLog
from eventsched.benchmarks.kubebinaries import KubeBinaries
from eventsched.benchmarks.processes import free_port, log_tail, process_cpu_seconds, spawn_logged

NOT_READY_TAINT = "node.kubernetes.io/not-ready"
#: The controllers a test's control plane runs where a cluster's would act: the PV binder
#: (claims and volumes), DRA's claims from templates, a deleted namespace's contents, owners'
#: dependents, and the service accounts and their tokens.
CONTROLLERS = (
    "persistentvolume-binder-controller",
    "resourceclaim-controller",
    "namespace-controller",
    "garbage-collector-controller",
    "serviceaccount-controller",
    "serviceaccount-token-controller",
)
TEST_USER = "eventsched-test"


def _raw(response: Any) -> Any:
    """The JSON body of a call made with _preload_content=False."""
    return json.loads(response.data)


class ControlPlane:
    """etcd + kube-apiserver on loopback ports (free ports picked), TLS, token auth, RBAC.

    Context manager: ``with ControlPlane(kube_binaries()) as cp: ...`` starts and stops it.
    """

    def __init__(
        self,
        binaries: KubeBinaries,
        workdir: Path | None = None,
        *,
        audit: bool = False,
        disabled_admission: tuple[str, ...] = ("ServiceAccount",),
    ) -> None:
        """`audit`: kube-apiserver writes an audit log of every request (`self.audit`).
        `disabled_admission`: the admission plugins kube-apiserver runs without
        (scheduler_perf's server also disables `TaintNodesByCondition` and `Priority`,
        so that its pods may set `spec.priority` without a PriorityClass)."""
        self.binaries = binaries
        self.disabled_admission = disabled_admission
        self._own_workdir = workdir is None
        self.workdir = (
            Path(tempfile.mkdtemp(prefix="eventsched-kube-")) if workdir is None else Path(workdir)
        )
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.pki = self.workdir / "pki"
        self.port = 0
        self.url = ""
        self.ca_file = self.pki / "apiserver.crt"
        self.client_ca_file = self.workdir / "client-ca.crt"
        self.admin_token = secrets.token_hex(16)
        self.user_tokens: dict[str, str] = {
            "admin": self.admin_token,
            TEST_USER: secrets.token_hex(16),
        }
        self._etcd_data: Path | None = None
        self._procs: dict[str, subprocess.Popen[bytes]] = {}
        #: kube-scheduler and kube-controller-manager: API clients, stopped before the server.
        self._clients: list[subprocess.Popen[bytes]] = []
        self._last_cpu: dict[str, float] = {}
        self._logs: list[Path] = []
        self._admin_kubeconfig: Path | None = None
        self._apiserver_argv: list[str] = []
        self.audit = AuditLog(self.workdir) if audit else None

    # -- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> ControlPlane:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _spawn(
        self, name: str, argv: list[str], cpus: frozenset[int] | None = None
    ) -> subprocess.Popen[bytes]:
        log = self.workdir / f"{name}.log"
        self._logs.append(log)
        return spawn_logged(argv, log, cwd=self.workdir, cpus=cpus)

    def _write_credentials(self) -> None:
        self.pki.mkdir(exist_ok=True)
        tokens = self.workdir / "tokens.csv"
        tokens.write_text(
            f'{self.admin_token},admin,admin-uid,"system:masters"\n'
            f"{self.user_tokens[TEST_USER]},{TEST_USER},{TEST_USER}-uid\n"
        )
        tokens.chmod(0o600)
        self._openssl("genrsa", "-out", "sa.key", "2048")
        self._openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub")
        self._openssl(
            "req", "-x509", "-newkey", "rsa:2048", "-nodes",
            "-keyout", "client-ca.key", "-out", self.client_ca_file.name,
            "-days", "3650", "-subj", "/CN=eventsched-test-client-ca",
        )  # fmt: skip

    def _openssl(self, *args: str) -> None:
        done = subprocess.run(
            ["openssl", *args], cwd=self.workdir, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        if done.returncode != 0:
            raise RuntimeError(f"openssl {args[0]} failed: {done.stderr.decode(errors='replace')}")

    def start(self, timeout: float = 90.0) -> ControlPlane:
        """Start etcd and kube-apiserver; wait until /readyz answers ok to the admin token.

        On failure raises RuntimeError with the tail of the process logs and stops what it
        started.
        """
        try:
            self._start(timeout)
        except BaseException as e:
            detail = "\n".join(log_tail(log) for log in self._logs)
            self.stop()
            if isinstance(e, Exception):
                raise RuntimeError(f"control plane did not start: {e}\n{detail}") from e
            raise
        return self

    def _start(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        self._write_credentials()
        shm = Path("/dev/shm")
        if shm.is_dir() and os.access(shm, os.W_OK):
            self._etcd_data = Path(tempfile.mkdtemp(prefix="eventsched-etcd-", dir=shm))
        else:
            self._etcd_data = self.workdir / "etcd-data"
        client, peer = free_port(), free_port()
        self._procs["etcd"] = self._spawn(
            "etcd",
            [
                str(self.binaries.etcd), "--name", "t", "--data-dir", str(self._etcd_data),
                "--listen-client-urls", f"http://127.0.0.1:{client}",
                "--advertise-client-urls", f"http://127.0.0.1:{client}",
                "--listen-peer-urls", f"http://127.0.0.1:{peer}",
                "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
                "--initial-cluster", f"t=http://127.0.0.1:{peer}",
                "--initial-cluster-state", "new",
                "--log-level", "warn",
            ],
        )  # fmt: skip
        self._wait_etcd(client, deadline)
        self.port = free_port()
        self.url = f"https://127.0.0.1:{self.port}"
        w = self.workdir
        self._apiserver_argv = [
            str(self.binaries.apiserver),
            f"--etcd-servers=http://127.0.0.1:{client}",
            "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
            f"--secure-port={self.port}",
            "--endpoint-reconciler-type=none",
            f"--cert-dir={self.pki}",
            f"--token-auth-file={w / 'tokens.csv'}",
            "--authorization-mode=Node,RBAC",
            f"--service-account-key-file={w / 'sa.pub'}",
            f"--service-account-signing-key-file={w / 'sa.key'}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            "--api-audiences=https://kubernetes.default.svc.cluster.local",
            "--service-cluster-ip-range=10.0.0.0/24", "--allow-privileged=true",
            f"--disable-admission-plugins={','.join(self.disabled_admission)}",
            f"--client-ca-file={self.client_ca_file}",
            f"--requestheader-client-ca-file={self.client_ca_file}",
            # Since 1.3x the server refuses a front-proxy CA that is also the client CA
            # unless only named proxies may assert identities; no test client has this name.
            "--requestheader-allowed-names=front-proxy-client",
        ]  # fmt: skip
        if self.audit is not None:
            self._apiserver_argv += self.audit.flags()
        self._procs["kube-apiserver"] = self._spawn("kube-apiserver", self._apiserver_argv)
        self._wait_ready(deadline)

    def restart_apiserver(
        self, down_seconds: float = 0.0, timeout: float = 90.0, kill: bool = False
    ) -> float:
        """Stop kube-apiserver (SIGTERM, as a kubelet stops a static pod, SIGKILL after 30 s;
        or at once with SIGKILL, a crash, when `kill`), leave it down `down_seconds`, start it
        again with the same flags, port and certificates (etcd keeps running), and wait until
        /readyz answers ok.

        Returns the monotonic time it stopped; ready again when this returns.
        """
        proc = self._procs["kube-apiserver"]
        if kill:
            proc.kill()
        else:
            proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        stopped = time.monotonic()
        time.sleep(down_seconds)
        self._procs["kube-apiserver"] = self._spawn("kube-apiserver", self._apiserver_argv)
        self._wait_ready(time.monotonic() + timeout)
        return stopped

    def _check_alive(self) -> None:
        for name, proc in self._procs.items():
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited with status {proc.returncode}")

    def _wait_etcd(self, port: int, deadline: float) -> None:
        while True:
            self._check_alive()
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                    if b"true" in r.read():
                        return
            except (OSError, urllib.error.URLError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("etcd not healthy in time")
            time.sleep(0.1)

    def _wait_ready(self, deadline: float) -> None:
        last = ""
        while True:
            self._check_alive()
            if self.ca_file.is_file():
                try:
                    context = ssl.create_default_context(cafile=str(self.ca_file))
                    request = urllib.request.Request(
                        f"{self.url}/readyz",
                        headers={"Authorization": f"Bearer {self.admin_token}"},
                    )
                    with urllib.request.urlopen(request, timeout=3, context=context) as r:
                        if r.status == 200:
                            return
                except urllib.error.HTTPError as e:
                    last = f"/readyz {e.code}"
                except (OSError, ssl.SSLError, urllib.error.URLError) as e:
                    last = str(e)
            if time.monotonic() > deadline:
                raise RuntimeError(f"kube-apiserver not ready in time ({last})")
            time.sleep(0.2)

    def stop(self) -> None:
        """Terminate every process started (the API clients first), kill after a few seconds."""
        procs = [*self._clients, *reversed(self._procs.values())]
        for proc in procs:
            if proc.poll() is None:
                with contextlib.suppress(OSError):
                    proc.terminate()
        deadline = time.monotonic() + 5
        for proc in procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(OSError):
                    proc.kill()
                proc.wait()
        self._clients.clear()
        self._procs.clear()
        if self._etcd_data is not None and self._etcd_data.parent == Path("/dev/shm"):
            shutil.rmtree(self._etcd_data, ignore_errors=True)
        self._etcd_data = None
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    # -- clients -----------------------------------------------------------------------------

    def kubeconfig(self, path: Path | None = None, token: str | None = None) -> Path:
        """Write a kubeconfig (server url, certificate-authority=ca_file, bearer token)."""
        token = token or self.admin_token
        if path is None:
            if token == self.admin_token and self._admin_kubeconfig is not None:
                return self._admin_kubeconfig
            path = self.workdir / f"kubeconfig-{hashlib.sha256(token.encode()).hexdigest()[:8]}"
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "eventsched-test",
                    "cluster": {"server": self.url, "certificate-authority": str(self.ca_file)},
                }
            ],
            "users": [{"name": "user", "user": {"token": token}}],
            "contexts": [
                {
                    "name": "eventsched-test",
                    "context": {"cluster": "eventsched-test", "user": "user"},
                }
            ],
            "current-context": "eventsched-test",
        }
        path.write_text(json.dumps(config, indent=2) + "\n")  # JSON is YAML
        path.chmod(0o600)
        if token == self.admin_token and self._admin_kubeconfig is None:
            self._admin_kubeconfig = path
        return path

    def api_client(self, token: str | None = None) -> kubernetes.client.ApiClient:
        """The official client, configured like the kubeconfig (verifying against ca_file)."""
        config = kubernetes.client.Configuration()
        config.host = self.url
        config.ssl_ca_cert = str(self.ca_file)
        config.verify_ssl = True
        config.api_key = {"authorization": token or self.admin_token}
        config.api_key_prefix = {"authorization": "Bearer"}
        config.connection_pool_maxsize = 16
        return kubernetes.client.ApiClient(config)

    # -- measurements ------------------------------------------------------------------------

    def cpu_seconds(self) -> dict[str, float]:
        """user+system CPU seconds of each child so far (the last value seen once one exits)."""
        for name, proc in self._procs.items():
            cpu = process_cpu_seconds(proc.pid)
            if cpu is not None:
                self._last_cpu[name] = cpu
        return {name: self._last_cpu.get(name, 0.0) for name in ("etcd", "kube-apiserver")}

    # -- cluster contents --------------------------------------------------------------------

    def make_ready_nodes(self, nodes: list[dict[str, Any]]) -> None:
        """Create Node objects, write their status (Ready, capacity, allocatable) and remove
        the not-ready taint the server adds, so they are schedulable (kube-scheduler too).

        Each item is a Node manifest (at least ``metadata.name``); ``status.allocatable`` /
        ``capacity`` default to 4 cpu, 16Gi memory, 110 pods.
        """
        client = self.api_client()
        try:
            core = kubernetes.client.CoreV1Api(client)
            with ThreadPoolExecutor(max_workers=8) as pool:
                for _ in pool.map(lambda node: self._make_ready_node(core, node), nodes):
                    pass
        finally:
            client.close()

    @staticmethod
    def _make_ready_node(core: kubernetes.client.CoreV1Api, node: dict[str, Any]) -> None:
        body = json.loads(json.dumps(node))  # a copy we can change
        body.setdefault("apiVersion", "v1")
        body.setdefault("kind", "Node")
        wanted = body.pop("status", None) or {}
        name = body["metadata"]["name"]
        created = _raw(core.create_node(body, _preload_content=False))
        created["status"] = ready_node_status(wanted)
        updated = _raw(core.replace_node_status(name, created, _preload_content=False))
        taints = updated.get("spec", {}).get("taints") or []
        kept = [t for t in taints if t.get("key") != NOT_READY_TAINT]
        if len(kept) != len(taints):
            updated["spec"]["taints"] = kept or None
            core.replace_node(name, updated, _preload_content=False)

    # -- kube-controller-manager -------------------------------------------------------------

    def start_controller_manager(
        self, controllers: tuple[str, ...] = CONTROLLERS
    ) -> subprocess.Popen[bytes]:
        """kube-controller-manager running `controllers` (kube-controller-manager's names),
        with the admin kubeconfig and the service-account key the API server verifies;
        its output goes to kube-controller-manager.log. Stopped by `stop()` too."""
        if self.binaries.controller_manager is None:
            raise RuntimeError("no kube-controller-manager binary")
        proc = self._spawn(
            "kube-controller-manager",
            [
                str(self.binaries.controller_manager),
                f"--kubeconfig={self.kubeconfig()}",
                f"--controllers={','.join(controllers)}",
                f"--secure-port={free_port()}",
                "--bind-address=127.0.0.1",
                "--leader-elect=false",
                "--use-service-account-credentials=false",
                f"--service-account-private-key-file={self.workdir / 'sa.key'}",
                f"--root-ca-file={self.ca_file}",
                f"--client-ca-file={self.client_ca_file}",
                f"--requestheader-client-ca-file={self.client_ca_file}",
                # Each controller resyncs its informers quickly: a test waits for it.
                "--min-resync-period=10s",
            ],
        )
        self._clients.append(proc)
        return proc

    # -- kube-scheduler ----------------------------------------------------------------------

    def start_kube_scheduler(
        self,
        config: Path,
        port: int | None = None,
        cpus: frozenset[int] | None = None,
        leader_elect: bool = False,
    ) -> subprocess.Popen[bytes]:
        """kube-scheduler with the admin kubeconfig and the given KubeSchedulerConfiguration;
        its output goes to kube-scheduler.log in the workdir. Stopped by `stop()` too.
        `cpus`: the CPUs it may run on (its GOMAXPROCS follows); `leader_elect`: it takes
        its Lease before it schedules."""
        if self.binaries.scheduler is None:
            raise RuntimeError("no kube-scheduler binary")
        config = self._scheduler_config(config, leader_elect)
        proc = self._spawn(
            "kube-scheduler",
            [
                str(self.binaries.scheduler),
                f"--config={config}",
                f"--kubeconfig={self.kubeconfig()}",
                f"--secure-port={port or free_port()}",
                "--bind-address=127.0.0.1",
                f"--leader-elect={'true' if leader_elect else 'false'}",
                f"--client-ca-file={self.client_ca_file}",
                f"--requestheader-client-ca-file={self.client_ca_file}",
            ],
            cpus,
        )
        self._clients.append(proc)
        return proc

    def _scheduler_config(self, config: Path, leader_elect: bool) -> Path:
        """`config` with this control plane's kubeconfig and `leader_elect` where it does not
        say: newer kube-schedulers take them only from the file when --config is given
        (their --kubeconfig and --leader-elect are then ignored)."""
        document = yaml.safe_load(config.read_text()) or {}
        connection = document.setdefault("clientConnection", {})
        connection.setdefault("kubeconfig", str(self.kubeconfig()))
        document.setdefault("leaderElection", {}).setdefault("leaderElect", leader_elect)
        written = self.workdir / f"kube-scheduler-{len(self._clients)}.yaml"
        written.write_text(yaml.safe_dump(document, sort_keys=False))
        return written


def ready_node_status(wanted: dict[str, Any]) -> dict[str, Any]:
    """A Node's status as a kubelet's registration and first heartbeat write it.

    `wanted` (the manifest's own status) wins; capacity defaults to 4 cpu, 16Gi,
    110 pods, allocatable to capacity, conditions to Ready=True.
    """
    default = {"cpu": "4", "memory": "16Gi", "pods": "110"}
    capacity = wanted.get("capacity") or wanted.get("allocatable") or default
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    ready = {
        "type": "Ready",
        "status": "True",
        "reason": "KubeletReady",
        "message": "kubelet is posting ready status",
        "lastHeartbeatTime": now,
        "lastTransitionTime": now,
    }
    return {
        **wanted,
        "capacity": capacity,
        "allocatable": wanted.get("allocatable") or capacity,
        "conditions": wanted.get("conditions") or [ready],
    }
