"""`eventsched run`'s lifecycle: leases, readiness, SIGTERM, restarts.

Tests on `kube_server` run against the emulator and, when its binaries are
present (EVENTSCHED_KUBE_BIN), a real kube-apiserver; those on `apiserver`
need the emulator's failure injection.
"""

from __future__ import annotations

import json
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from eventsched.cli.runner import EXIT_LEASE_LOST, Runner
from eventsched.cluster.kube import REQUIRED_ACCESS
from eventsched.config.file import LeaderElectionConfig, SchedulerConfig
from eventsched.events import EventStore
from eventsched.plugins import in_tree_registry
from tests.kube.apiserver import ApiServer
from tests.kube.realserver import EmulatedApiServer, KubeServer
from tests.kube.test_kube_scheduler import bindings, node, node_of, pod
from tests.processes import child_env, terminate

FAST_LEASE = LeaderElectionConfig(
    lease_duration=3, renew_deadline=2, retry_period=1, resource_namespace="eventsched"
)


class Running:
    """A Runner on a thread, with its exit status once it returns."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner
        self.status: int | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        self.status = self.runner.run()

    def stop(self) -> int | None:
        self.runner.stop.set()
        self.thread.join(15)
        return self.status


def runner(store: EventStore, api: client.ApiClient, identity: str) -> Runner:
    config = SchedulerConfig(leader_election=FAST_LEASE)
    return Runner(store, config, api, in_tree_registry(), identity=identity)


def bound_pods(server: KubeServer) -> set[str]:
    """Names of the bound pods in "default", in one list request (not a GET per pod, which on
    a real server is slow enough to miss the moment a test waits for)."""
    return {
        p["metadata"]["name"]
        for p in server.list("pods", "default")
        if (p.get("spec") or {}).get("nodeName")
    }


def bound_once(store: EventStore, names: list[str]) -> None:
    """Each pod has exactly one `bound` event and no Binding of ours was refused as a repeat."""
    bound = [e.name for e in store.read(kinds=["bound"])]
    assert sorted(bound) == sorted(names), bound
    conflicts = [e.name for e in store.read(kinds=["bind_failed"]) if e.data.get("code") == 409]
    assert not conflicts, f"Bindings posted for pods already bound: {conflicts}"


def test_only_the_lease_holder_schedules_and_a_standby_takes_over(
    kube_server: KubeServer, api_client: client.ApiClient, store: EventStore
) -> None:
    kube_server.create(node("node-a"))
    first = Running(runner(store, api_client, "replica-1"))
    kube_server.wait_for(lambda: first.runner.state.role == "leading")
    second = Running(runner(store, api_client, "replica-2"))
    kube_server.wait_for(lambda: second.runner.state.role == "standby")
    kube_server.create(pod("p1"))
    kube_server.wait_for(lambda: node_of(kube_server, "p1") == "node-a")
    assert second.runner.state.role == "standby"
    assert all(ok for _, ok, _ in second.runner.readiness())  # a standby is ready
    lease = kube_server.get("leases", "eventsched", "eventsched")
    assert lease["spec"]["holderIdentity"] == "replica-1"
    master = "leader_election_master_status"
    assert first.runner.metrics.registry.get_sample_value(master, {"name": "eventsched"}) == 1
    assert second.runner.metrics.registry.get_sample_value(master, {"name": "eventsched"}) == 0

    assert first.stop() == 0
    kube_server.create(pod("p2"))
    # A graceful stop releases the lease (holderIdentity emptied): the standby takes it.
    kube_server.wait_for(lambda: node_of(kube_server, "p2") == "node-a", timeout=15)
    assert second.runner.state.role == "leading"
    assert kube_server.get("leases", "eventsched", "eventsched")["spec"]["holderIdentity"] == (
        "replica-2"
    )
    assert second.runner.metrics.registry.get_sample_value(master, {"name": "eventsched"}) == 1
    assert second.stop() == 0
    bound_once(store, ["p1", "p2"])
    if isinstance(kube_server, EmulatedApiServer):
        assert len(bindings(kube_server, "p1")) == len(bindings(kube_server, "p2")) == 1
        granted = {(a.api_group, a.resource, v) for a in REQUIRED_ACCESS for v in a.verbs}
        assert kube_server.access_used() <= granted  # leases included


def test_a_lease_taken_by_another_holder_stops_scheduling_at_once(
    kube_server: KubeServer, api_client: client.ApiClient, store: EventStore
) -> None:
    """Another replica writes itself into the Lease: the leader cannot renew and stops."""
    kube_server.create(node("node-a"))
    leader = Running(runner(store, api_client, "replica-1"))
    kube_server.wait_for(lambda: leader.runner.state.role == "leading")
    kube_server.wait_for(
        lambda: leader.runner.scheduler is not None and leader.runner.scheduler.ready
    )
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    kube_server.patch(
        "leases",
        "eventsched",
        {"spec": {"holderIdentity": "intruder", "renewTime": now, "leaseDurationSeconds": 60}},
        "eventsched",
        content_type="application/merge-patch+json",
    )
    leader.thread.join(15)
    assert leader.status == EXIT_LEASE_LOST
    assert leader.runner.state.lease_lost
    assert not all(ok for _, ok, _ in leader.runner.liveness())
    assert kube_server.get("leases", "eventsched", "eventsched")["spec"]["holderIdentity"] == (
        "intruder"
    )
    # Nothing is left that could schedule: the process's run returned (the thread
    # above ended with its exit status) and the scheduler it ran is stopped. A positive
    # signal, where creating a pod and sleeping to see it stay pending was not.
    assert not leader.thread.is_alive()
    assert leader.runner.scheduler is not None and not leader.runner.scheduler.ready


def test_losing_the_lease_stops_scheduling_at_once(
    apiserver: ApiServer, api_client: client.ApiClient, store: EventStore
) -> None:
    apiserver.create(node("node-a"))
    leader = Running(runner(store, api_client, "replica-1"))
    apiserver.wait_for(lambda: leader.runner.state.role == "leading")
    apiserver.wait_for(
        lambda: leader.runner.scheduler is not None and leader.runner.scheduler.ready
    )
    # The API server stops accepting renewals: after renewDeadline the lease is lost.
    apiserver.fail_next("*", r"/leases", 500, times=10_000)
    leader.thread.join(15)
    assert leader.status == EXIT_LEASE_LOST
    assert leader.runner.state.lease_lost
    assert not all(ok for _, ok, _ in leader.runner.liveness())
    # Nothing is left that could schedule: the process's run returned (the thread
    # above ended with its exit status) and the scheduler it ran is stopped. A positive
    # signal, where creating a pod and sleeping to see it stay pending was not.
    assert not leader.thread.is_alive()
    assert leader.runner.scheduler is not None and not leader.runner.scheduler.ready


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def kubeconfig(tmp_path: Path, url: str) -> Path:
    path = tmp_path / "kubeconfig"
    path.write_text(
        f"""apiVersion: v1
kind: Config
clusters: [{{name: emu, cluster: {{server: "{url}"}}}}]
users: [{{name: u, user: {{token: t}}}}]
contexts: [{{name: c, context: {{cluster: emu, user: u}}}}]
current-context: c
"""
    )
    return path


def get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()
    except OSError:
        return 0, ""


def slow_client_config(tmp_path: Path) -> Path:
    """QPS 20, burst 1: a Binding and an Event per pod, so about 10 pods/s; SIGTERM lands mid-run."""
    path = tmp_path / "config.yaml"
    path.write_text(
        """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {qps: 20, burst: 1}
leaderElection: {leaderElect: false}
profiles: [{schedulerName: eventsched}]
"""
    )
    return path


def start_process(
    db_url: str,
    kubeconfig: Path,
    port: int,
    config: Path,
    log: Path | None = None,
    extra: tuple[str, ...] = (),
) -> subprocess.Popen[str]:
    """`eventsched run` (with `extra` arguments); its output to `log` (appended) if given,
    else to a pipe, which the caller must keep read: a full pipe blocks the process at its
    next log line."""
    out = log.open("a") if log is not None else None
    try:
        return _popen(db_url, kubeconfig, port, config, out, extra)
    finally:
        if out is not None:
            out.close()  # the child has its own copy


def _popen(
    db_url: str, kubeconfig: Path, port: int, config: Path, out: Any, extra: tuple[str, ...] = ()
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "eventsched.cli.main",
            "--db",
            db_url,
            "--log-format",
            "json",
            "--log-level",
            "info",
            "run",
            "--config",
            str(config),
            "--kubeconfig",
            str(kubeconfig),
            "--http-address",
            f"127.0.0.1:{port}",
            "--secure-port",
            "0",
            *extra,
        ],
        stdout=out if out is not None else subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=child_env(),
    )


def test_run_binds_pods_serves_probes_and_a_crash_mid_run_binds_nothing_twice(
    kube_server: KubeServer, db_url: str, store: EventStore, tmp_path: Path
) -> None:
    """The issue's "done when": `eventsched run --kubeconfig K`, killed mid-run, restarted, SIGTERM."""
    for name in ("node-a", "node-b"):
        kube_server.create(node(name, cpu="64"))
    kube = kube_server.kubeconfig(tmp_path / "kubeconfig")
    config = slow_client_config(tmp_path)
    port = free_port()
    log = tmp_path / "run.log"  # both processes' output; a pipe nobody reads would fill up
    proc = start_process(db_url, kube, port, config, log)
    try:
        kube_server.wait_for(lambda: get(port, "/readyz")[0] == 200, timeout=30)
        for i in range(40):
            kube_server.create(pod(f"w-{i}", cpu="100m"))
        kube_server.wait_for(lambda: len(bound_pods(kube_server)) >= 10)
        proc.kill()  # a crash mid-run: decisions in flight, bindings half done
        proc.wait(20)
        first_run = bound_pods(kube_server)

        port = free_port()
        proc = start_process(db_url, kube, port, config, log)
        kube_server.wait_for(lambda: get(port, "/readyz")[0] == 200, timeout=30)
        kube_server.wait_for(lambda: len(bound_pods(kube_server)) == 40, timeout=30)
        code, metrics = get(port, "/metrics")
        assert code == 200
        assert (
            'scheduler_schedule_attempts_total{profile="eventsched",result="scheduled"}' in metrics
        )
        # client-go's metrics for the API client: the Bindings (POST, 201), counted and timed.
        host = r'host="[^"]+"'
        assert re.search(
            rf'rest_client_requests_total{{code="201",{host},method="POST"}} [1-9]', metrics
        )
        assert re.search(
            rf'rest_client_request_duration_seconds_count{{{host},verb="POST"}} [1-9]', metrics
        )
        assert 'scheduler_scheduler_cache_size{type="nodes"} 2.0' in metrics
        assert 'eventsched_log_chain_checks_total{result="ok"}' in metrics  # the watch began
        assert get(port, "/readyz?verbose")[1].splitlines()[-1] == "readyz check passed"
        assert terminate(proc, lambda: log.read_text(errors="replace")) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(20)
        output = log.read_text(errors="replace")
    assert "Traceback" not in output, output

    names = [f"w-{i}" for i in range(40)]
    if isinstance(kube_server, EmulatedApiServer):
        for name in names:
            assert len(bindings(kube_server, name)) == 1, f"{name} was bound twice"
    bound_once(store, names)  # every binding is in the log, once
    assert 10 <= len(first_run) < 40  # the first process was stopped mid-run
    # The crash left reservations open; the second process closed them from what the API showed.
    assert any(e.data.get("reconciled") for e in store.read(kinds=["bound", "unreserved"]))


@pytest.mark.parametrize(
    ("extra", "waiting"),
    [
        # The version given, it waits for its lease, as kube-scheduler does.
        (("--kubernetes-version", "1.28"), "cannot read the leader lease; retrying"),
        # Not given, it waits for the API server to say its version first.
        ((), "cannot read the API server's version; retrying"),
    ],
)
def test_an_api_server_down_at_start_is_retried_not_a_silent_exit(
    tmp_path: Path, db_url: str, extra: tuple[str, ...], waiting: str
) -> None:
    """kube-scheduler keeps trying to acquire its lease while the API server is down.

    eventsched's election used to die on the first refused connection
    (AttributeError inside the client library) and the process exit 0 within
    two seconds; urllib3's "Retrying ..." lines went to stderr as plain text.
    """
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "leaderElection: {leaderElect: true, leaseDuration: 3s, renewDeadline: 2s, "
        "retryPeriod: 1s}\n"
    )
    down = kubeconfig(tmp_path, f"https://127.0.0.1:{free_port()}")
    proc = start_process(db_url, down, free_port(), config, extra=extra)
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + 60
    try:
        while sum(waiting in line for line in lines) < 3:
            assert time.monotonic() < deadline, "no third retry:\n" + "".join(lines[-20:])
            line = proc.stdout.readline()
            assert line, f"eventsched exited ({proc.wait()}):\n" + "".join(lines[-20:])
            lines.append(line)
        assert proc.poll() is None
    finally:
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=30)
    lines += rest.splitlines(keepends=True)
    assert proc.returncode == 0
    records = [json.loads(line) for line in lines if line.strip()]  # every line is structured
    retries = [r for r in records if r.get("event") == waiting]
    assert all(r["status"] == 0 and "no answer" in r["error"] for r in retries)  # says why
    assert not any("AttributeError" in json.dumps(r) for r in records)
