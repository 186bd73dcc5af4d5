"""What the crash tests share: the scheduler as a process, the cluster they give it, the checks.

The scheduler runs as `eventsched run` in its own process, against an API
server (the emulator, tests/kube/apiserver.py, and a real kube-apiserver
when its binaries are present: the `kube_server` fixture) and against its
own PostgreSQL database, so SIGKILL kills exactly what a crash kills: threads,
buffered decisions, the open transaction, half-done binding cycles. Nothing
in the product is patched or hooked; the tests choose the moment of the kill
by holding a request at the emulator or by slowing the database down.

`check_consistency` asserts what must hold after any crash and restart,
using only public behaviour: the server's objects (and the emulator's
request log, where the server is the emulator), SQL
over `events` (and `event_batches`, whose contiguity the hash chain also
proves), the EventStore API and `eventsched.events.rebuild`.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from eventsched.events import EventStore, rebuild
from tests.kube.apiserver import ApiServer
from tests.kube.realserver import KubeServer
from tests.loginvariants import ONCE_PER_ATTEMPT
from tests.processes import child_env, terminate
from tests.waiting import wait_for

ROOT = Path(__file__).resolve().parents[2]
#: The scheduler's sessions carry this, so a test can find them in pg_stat_activity.
APPLICATION_NAME = "eventsched-crash-test"
#: StickyNode's identity label: identities differ from pod names, so a first
#: placement recorded under the wrong identity is caught.
IDENTITY_LABEL = "crash.eventsched.io/identity"
BINDING_OF = "/pods/{name}/binding"


def scheduler_config(path: Path, qps: int = 20) -> Path:
    """QPS-limited client (a Binding and an Event per pod: about qps/2 pods/s), StickyNode by label.

    The slow client keeps binding cycles in flight, and Bindings queued
    behind the rate limiter, at any moment a kill lands.
    """
    path.write_text(
        f"""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {{qps: {qps}, burst: 1}}
leaderElection: {{leaderElect: false}}
profiles:
  - schedulerName: eventsched
    plugins:
      multiPoint:
        enabled:
          - name: StickyNode
            weight: 10
    pluginConfig:
      - name: StickyNode
        args: {{identity: "label:{IDENTITY_LABEL}", policy: preferred}}
"""
    )
    return path


def node(name: str, cpu: str = "64") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": cpu, "memory": "64Gi", "pods": "110"}},
    }


def pod(name: str, cpu: str = "100m") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {IDENTITY_LABEL: f"id-{name}"},
        },
        "spec": {
            "schedulerName": "eventsched",
            "containers": [
                {"name": "c", "image": "pause", "resources": {"requests": {"cpu": cpu}}}
            ],
        },
        "status": {"phase": "Pending"},
    }


def identity(name: str) -> str:
    """The identity StickyNode computes for `pod(name)`."""
    return f"default/label:{IDENTITY_LABEL}=id-{name}"


def node_of(server: KubeServer, name: str) -> str:
    found = server.get("pods", name, "default")
    return ((found or {}).get("spec") or {}).get("nodeName") or ""


def assigned(server: KubeServer) -> dict[str, str]:
    """Pod name to node of every bound pod in "default", in one list request.

    One request, not one per pod: on a real server a GET per pod takes long
    enough for the moments the tests wait for to pass while they look.
    """
    return {
        p["metadata"]["name"]: p["spec"]["nodeName"]
        for p in server.list("pods", "default")
        if (p.get("spec") or {}).get("nodeName")
    }


def binding_requests(apiserver: ApiServer, name: str) -> list[Any]:
    path = BINDING_OF.format(name=name)
    return [r for r in apiserver.requests if r.method == "POST" and r.path.endswith(path)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def readyz(port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2) as r:
            return int(r.status)
    except urllib.error.HTTPError as err:
        return int(err.code)
    except OSError:
        return 0


@dataclass
class SchedulerProcess:
    """One `eventsched run` process; its output goes to a file (a full pipe would block it)."""

    db_url: str
    kubeconfig: Path
    config: Path
    log: Path
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    def start(self) -> SchedulerProcess:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "eventsched.cli.main",
                    "--db",
                    self.db_url,
                    "--log-format",
                    "json",
                    "--log-level",
                    "info",
                    "run",
                    "--config",
                    str(self.config),
                    "--kubeconfig",
                    str(self.kubeconfig),
                    "--http-address",
                    f"127.0.0.1:{self.port}",
                    "--secure-port",
                    "0",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=ROOT,
                env=child_env(),
            )
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def wait_ready(self, timeout: float = 30.0) -> None:
        def ready() -> bool:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"the scheduler exited ({self.proc.returncode}):\n{self.output()}"
                )
            return readyz(self.port) == 200

        wait_for("the scheduler to be ready", ready, timeout, self.output)

    def kill(self) -> None:
        """SIGKILL: no handler runs, nothing is flushed, the database connection just drops."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(20)

    def terminate(self) -> int:
        """SIGTERM, the orderly stop: in-flight bindings finish and the log is flushed."""
        assert self.proc is not None
        return terminate(self.proc, self.output)

    def ensure_dead(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(20)

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


def committed(engine: sa.Engine, sql: str, **params: Any) -> list[Any]:
    """Rows of a query over what is committed in the log right now."""
    with engine.connect() as conn:
        return list(conn.execute(sa.text(sql), params).all())


def pods_with(engine: sa.Engine, kind: str) -> set[str]:
    """Names of pods with a committed event of `kind`."""
    return {
        row[0]
        for row in committed(engine, "SELECT DISTINCT name FROM events WHERE kind = :k", k=kind)
    }


@dataclass
class Report:
    """What the checks found, for tests that assert more about one pod."""

    bound_events: dict[str, Any]
    conflicts: list[str]


def check_consistency(server: KubeServer, db_url: str, names: list[str]) -> Report:
    """Everything the issue asks to hold after crashes and restarts, on the real state.

    - every pod is bound in the API, by exactly one successful Binding, to the
      node its one `bound` event names (with the pod's StickyNode identity);
    - the projections rebuilt from the log have each identity's first
      placement at that node and no reservation left open;
    - positions are 1..max without a gap, batches cover them contiguously,
      the hash chain verifies, and no attempt recorded a decision twice.

    Returns the `bound` events and the Bindings answered 409 (an attempt to
    bind an already bound pod: refused by the API, but a sign the scheduler
    lost track of a binding). The emulator's request log has every Binding;
    a real server's 409s are known from the `bind_failed` events they caused
    (a real server binds a pod once at most: the successful Binding is the
    pod's `spec.nodeName`).
    """
    bound_now = assigned(server)
    unbound = sorted(n for n in names if n not in bound_now)
    assert not unbound, f"pods not bound in the API: {unbound}"
    pods: dict[str, dict[str, Any]] = {}
    for name in names:
        found = server.get("pods", name, "default")
        assert found is not None, name
        pods[name] = found
    conflicts: list[str] = []
    if isinstance(server, ApiServer):
        for name in names:
            requests = binding_requests(server, name)
            ok = [r for r in requests if r.status == 201]
            assert len(ok) == 1, f"{name}: {len(ok)} successful Bindings: {requests}"
            assert ok[0].body["target"]["name"] == pods[name]["spec"]["nodeName"], name
            conflicts += [name for r in requests if r.status == 409]
    else:
        with EventStore.connect(db_url) as store:
            conflicts = [
                e.name or ""
                for e in store.read(kinds=["bind_failed"])
                if e.data.get("code") == 409 and e.name in pods
            ]

    with EventStore.connect(db_url) as store:
        bound = [e for e in store.read(kinds=["bound"])]
        per_uid = Counter(e.uid for e in bound)
        twice = {uid: n for uid, n in per_uid.items() if n > 1}
        assert not twice, f"pods with more than one `bound` event: {twice}"
        by_name = {e.name or "": e for e in bound}
        for name, obj in pods.items():
            event = by_name.get(name)
            assert event is not None, f"{name} is bound in the API but has no `bound` event"
            assert event.uid == obj["metadata"]["uid"], name
            assert event.node == obj["spec"]["nodeName"], (
                f"{name}: bound in the API to {obj['spec']['nodeName']}, `bound` names {event.node}"
            )
            assert event.data.get("identity") == identity(name), (name, event.data)

        projections = rebuild(store)
        assert not projections.open_reservations, (
            f"reservations left open: {projections.open_reservations}"
        )
        for name, obj in pods.items():
            placement = projections.first_placements.get(identity(name))
            assert placement is not None, f"first placement of {identity(name)} ({name}) lost"
            assert placement.node == obj["spec"]["nodeName"], (name, placement)
            assert placement.uid == obj["metadata"]["uid"], (name, placement)

        report = store.verify_chain()
        assert report.ok, report.detail

        attempts = Counter(
            (e.attempt, e.kind) for e in store.read(kinds=ONCE_PER_ATTEMPT) if e.attempt
        )
        again = {k: n for k, n in attempts.items() if n > 1}
        assert not again, f"decisions recorded twice: {again}"

        with store.engine.connect() as conn:
            count, low, high = conn.execute(
                sa.text("SELECT count(*), min(position), max(position) FROM events")
            ).one()
            assert (count, low) == (high, 1), f"positions {low}..{high} hold {count} events: a gap"
            batches = conn.execute(
                sa.text(
                    "SELECT batch, first_position, last_position FROM event_batches ORDER BY batch"
                )
            ).all()
        expected = 1
        for number, (batch, first, last) in enumerate(batches, start=1):
            assert batch == number, f"batch {number} missing (next is {batch})"
            assert first == expected and last >= first, (
                f"batch {batch} covers {first}..{last}, expected to start at {expected}"
            )
            expected = last + 1
        assert expected == high + 1, f"batches end at {expected - 1}, events at {high}"
    return Report(by_name, conflicts)
