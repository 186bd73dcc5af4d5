"""PostgreSQL going away mid-run: the scheduler stops binding, says it is not ready, retries, resumes.

The fault is real: the scheduler reaches PostgreSQL through a TCP proxy
(tests/faults/tcpproxy.py) that the test cuts and restores, or its server
sessions are terminated the way a restart terminates them. Nothing in the
scheduler or the store is patched.

The last test runs `eventsched run` as a process against the API-server
emulator (tests/kube/apiserver.py) and watches what an operator sees:
/readyz, /healthz, /metrics and the Bindings the API server received.

PostgreSQL only: SQLite is a file in the scheduler's own process, so
there is no connection to lose; its failures (disk full, a lock held past
the busy timeout) reach the same `_flush` path that these tests exercise.

What is checked, from the log and the cluster:
- no Binding is posted unless the pod's reservation is durable (read
  through a direct connection at the moment of the bind call);
- while the log cannot be written, no Binding is posted, the scheduler
  is not ready, and it retries with a growing delay;
- once the database is back it resumes by itself: every pod is bound
  exactly once and has exactly one `bound` event, after its `selected`
  and `reserved`; positions are gap-free, the hash chain verifies, and
  no decision or observation is recorded twice.
"""

from __future__ import annotations

import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from eventsched.cluster import BindOutcome, SimulatedCluster
from eventsched.config import default_profile
from eventsched.events import (
    AppendInDoubtError,
    EventRecord,
    EventStore,
    EventStoreError,
    StoredEvent,
    upgrade,
)
from eventsched.metrics import SchedulerMetrics
from eventsched.model import Pod
from eventsched.plugins import in_tree_registry
from eventsched.scheduler import Scheduler, SchedulerOptions
from tests.conftest import _reset_postgres_schema
from tests.faults.tcpproxy import TcpProxy
from tests.kube.apiserver import ApiServer
from tests.kube.test_kube_runner import free_port, get, kubeconfig, start_process
from tests.kube.test_kube_scheduler import bindings, node_of
from tests.kube.test_kube_scheduler import node as kube_node
from tests.kube.test_kube_scheduler import pod as kube_pod
from tests.loginvariants import ONCE_PER_ATTEMPT
from tests.scheduler.helpers import node, pod
from tests.waiting import wait_for

APPLICATION_NAME = "eventsched-fault-test"


@pytest.fixture
def pg_url(postgres_server: str, postgres_schema: tuple[str, str]) -> str:
    """This session's PostgreSQL schema, emptied and upgraded: the direct (unproxied) URL."""
    url, schema = postgres_schema
    _reset_postgres_schema(postgres_server, schema)
    upgrade(url)
    return url


@pytest.fixture
def proxy(postgres_server: str) -> Iterator[TcpProxy]:
    server = make_url(postgres_server)
    with TcpProxy(server.host or "127.0.0.1", server.port or 5432) as started:
        yield started


def through(proxy: TcpProxy, url: str) -> str:
    """`url` with the proxy as its server, tagged so the test can find its sessions, and
    without TLS: the proxy finds a COMMIT in the bytes it forwards, and libpq's default
    (`sslmode=prefer`) encrypts them where the server has a certificate (Debian's
    postgresql package makes one)."""
    parsed = make_url(url).set(host="127.0.0.1", port=proxy.port)
    parsed = parsed.update_query_dict({"application_name": APPLICATION_NAME, "sslmode": "disable"})
    return parsed.render_as_string(hide_password=False)


class CheckedCluster(SimulatedCluster):
    """A simulated cluster that, at each Binding, asks the database itself whether it may.

    The question goes over a direct connection, not the proxy, so it is
    answered during a cut too: a Binding for a pod whose reservation on that
    node is not durable is recorded in `violations`.
    """

    def __init__(self, witness: EventStore, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.witness = witness
        self.violations: list[str] = []

    def bind(self, pod: Pod, node_name: str) -> BindOutcome:
        open_on: str | None = None
        for event in self.witness.read_uid(pod.uid):
            if event.kind == "reserved":
                open_on = event.node
            elif event.kind in ("bound", "unreserved"):
                open_on = None
        if open_on != node_name:
            self.violations.append(
                f"{pod.key} bound to {node_name} without a durable reservation there"
            )
        return super().bind(pod, node_name)


class Feeder:
    """Creates pods at a steady pace on a thread, as a Deployment scaling up would."""

    def __init__(self, cluster: SimulatedCluster, count: int, interval: float) -> None:
        self.cluster = cluster
        self.names = [f"p-{i:03d}" for i in range(count)]
        self.interval = interval
        self.created = 0
        self.thread = threading.Thread(target=self._run, name="feeder", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        for name in self.names:
            self.cluster.add_pod(pod(name, cpu="100m"))
            self.created += 1
            time.sleep(self.interval)


class Running:
    """A Scheduler over the proxied log, its loop on a thread."""

    def __init__(self, url: str, cluster: SimulatedCluster) -> None:
        self.store = EventStore.connect(url)
        self.metrics = SchedulerMetrics()
        self.scheduler = Scheduler(
            self.store,
            cluster,
            [default_profile()],
            in_tree_registry(),
            SchedulerOptions(initial_backoff=0.05, max_backoff=0.1, log_retry=0.1),
            metrics=self.metrics,
        )
        self.stopping = threading.Event()
        self.scheduler.start()
        self.thread = threading.Thread(
            target=self.scheduler.run, args=(self.stopping,), name="loop", daemon=True
        )
        self.thread.start()

    def state(self) -> str:
        """What the scheduler is doing, for a failure message."""
        s = self.scheduler
        return (
            f"queues {s.queue.counts()}, bindings in flight {s.bindings}, "
            f"log_down {s.log_down}, ready {s.ready}, loop alive {self.thread.is_alive()}, "
            f"unwritten events {s.journal.unwritten}, decided {len(s.binding.decided)}, {s.stats}, "
            f"append failures {self.failures}, "
            f"last failures {sorted({m for _, m in s.last_failure.values()})[:3]}"
        )

    @property
    def failures(self) -> float:
        return self.metrics.log_append_failures._value.get()

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(15)
        assert not self.thread.is_alive(), "the scheduling loop did not stop within 15 s"
        self.scheduler.stop()
        self.store.close()


def bound_count(cluster: SimulatedCluster) -> int:
    return sum(1 for p in cluster.list_pods() if p.node_name)


def check_log(store: EventStore, cluster: CheckedCluster, names: list[str]) -> None:
    """The log after the fault: complete, in order, nothing twice."""
    assert not cluster.violations, "\n".join(cluster.violations)
    per_pod = Counter(key for key, _ in cluster.bindings)
    assert set(per_pod) == {f"default/{n}" for n in names}
    assert all(count == 1 for count in per_pod.values()), f"bound twice: {per_pod}"

    events = list(store.read())
    assert [e.position for e in events] == list(range(1, len(events) + 1)), "positions have gaps"
    report = store.verify_chain()
    assert report.ok, report.detail

    twice = Counter((e.attempt, e.kind) for e in events if e.attempt and e.kind in ONCE_PER_ATTEMPT)
    repeated = sorted(key for key, count in twice.items() if count > 1)
    assert not repeated, (
        f"{len(repeated)} (attempt, kind) pairs recorded twice, e.g. {repeated[:3]}: "
        "a batch was appended again after its COMMIT succeeded"
    )
    last_seen: dict[str, object] = {}
    for e in events:
        if e.kind == "pod_observed":
            assert last_seen.get(e.uid or "") != e.data, (
                f"{e.namespace}/{e.name} observed twice in a row with the same data "
                f"(position {e.position}): a batch was appended again"
            )
            last_seen[e.uid or ""] = e.data

    by_pod: dict[str, list[StoredEvent]] = {}
    for e in events:
        if e.name:
            by_pod.setdefault(e.name, []).append(e)
    for name in names:
        kinds = [e.kind for e in by_pod[name]]
        assert kinds.count("bound") == 1, f"{name}: {kinds.count('bound')} bound events"
        bound = next(e for e in by_pod[name] if e.kind == "bound")
        same_attempt = [e.kind for e in by_pod[name] if e.attempt == bound.attempt]
        assert same_attempt.index("selected") < same_attempt.index("reserved"), name
        assert same_attempt.index("reserved") < same_attempt.index("bound"), name
        assert bound.node == cluster.get_pod(f"default/{name}").node_name  # type: ignore[union-attr]


def test_cut_database_stops_binding_retries_with_backoff_and_resumes(
    pg_url: str, proxy: TcpProxy
) -> None:
    witness = EventStore.connect(pg_url)
    cluster = CheckedCluster(
        witness, [node(f"n{i}", cpu="64", memory="256Gi") for i in range(4)], []
    )
    run = Running(through(proxy, pg_url), cluster)
    feeder = Feeder(cluster, count=150, interval=0.01)
    try:
        wait_for("20 pods bound before the cut", lambda: bound_count(cluster) >= 20)
        proxy.cut()
        cut_at = time.monotonic()
        wait_for("the scheduler to notice the log is down", lambda: run.scheduler.log_down, 5)
        noticed = time.monotonic() - cut_at
        assert not run.scheduler.ready
        # Binding cycles whose decision was durable before the cut may still finish.
        wait_for("in-flight binding cycles to finish", lambda: run.scheduler.bindings == 0, 5)
        binds = cluster.bind_calls
        failures: list[tuple[float, float]] = [(time.monotonic(), run.failures)]
        deadline = time.monotonic() + 2.5
        while time.monotonic() < deadline:
            if run.failures != failures[-1][1]:
                failures.append((time.monotonic(), run.failures))
            time.sleep(0.005)
        assert cluster.bind_calls == binds, (
            f"{cluster.bind_calls - binds} Bindings posted while the log could not be written"
        )
        assert feeder.created > bound_count(cluster), "pods should be waiting during the cut"
        assert run.scheduler.log_down and not run.scheduler.ready
        # Backoff: 0.1 s doubling; in 2.5 s that is a handful of tries, not one per loop.
        tries = [t for t, _ in failures[1:]]
        assert 2 <= len(tries) <= 6, f"{len(tries)} failed appends in 2.5 s: {failures}"
        gaps = [b - a for a, b in pairwise(tries)]
        assert all(later > earlier for earlier, later in pairwise(gaps)), (
            f"the retry delay does not grow: gaps {gaps}"
        )

        proxy.restore()
        wait_for("the log to be writable again", lambda: not run.scheduler.log_down, 10)
        assert run.scheduler.ready
        feeder.thread.join(10)
        wait_for("all 150 pods bound", lambda: bound_count(cluster) == 150, 20, run.state)
    finally:
        proxy.restore()
        run.stop()
    assert noticed < 5
    check_log(witness, cluster, feeder.names)
    witness.close()


def test_restarted_server_sessions_are_replaced_and_nothing_is_recorded_twice(
    pg_url: str, proxy: TcpProxy
) -> None:
    """The server ends every session of ours (as a restart does) twice mid-run."""
    witness = EventStore.connect(pg_url)
    admin = sa.create_engine(pg_url, isolation_level="AUTOCOMMIT")
    cluster = CheckedCluster(
        witness, [node(f"n{i}", cpu="64", memory="256Gi") for i in range(4)], []
    )
    run = Running(through(proxy, pg_url), cluster)
    feeder = Feeder(cluster, count=100, interval=0.01)
    terminate = sa.text(
        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
        "WHERE application_name = :name"
    )
    try:
        for threshold in (20, 50):

            def enough(at_least: int = threshold) -> bool:
                return bound_count(cluster) >= at_least

            wait_for(f"{threshold} pods bound", enough, 10, run.state)
            with admin.connect() as conn:
                ended = conn.execute(terminate, {"name": APPLICATION_NAME}).scalar_one()
            assert ended >= 1, "no session of the scheduler was found to terminate"
        feeder.thread.join(10)
        wait_for("all 100 pods bound", lambda: bound_count(cluster) == 100, 20, run.state)
    finally:
        run.stop()
        admin.dispose()
    check_log(witness, cluster, feeder.names)
    witness.close()


def test_store_reports_a_lost_commit_answer_as_in_doubt_and_settles_it(
    pg_url: str, proxy: TcpProxy
) -> None:
    """The store cannot know; it says so (AppendInDoubtError) and can tell once the database answers."""
    with EventStore.connect(through(proxy, pg_url)) as store:
        store.append([EventRecord("maintenance", data={"n": 1})])
        proxy.cut_after_commit()
        with pytest.raises(AppendInDoubtError) as raised:
            store.append_stored([EventRecord("maintenance", data={"n": 2})])
        assert proxy.commit_swallowed.is_set()
        doubt = raised.value
        assert [e.position for e in doubt.stored] == [2]
        with pytest.raises(EventStoreError):
            store.batch_committed(doubt.batch, doubt.batch_hash)  # still cut: no answer yet
        proxy.restore()
        assert store.batch_committed(doubt.batch, doubt.batch_hash)
        assert not store.batch_committed(doubt.batch, "0" * 64)
        assert [e.data for e in store.read()] == [{"n": 1}, {"n": 2}]
        assert list(store.read())[1] == doubt.stored[0]


def test_a_commit_whose_answer_is_lost_is_not_appended_twice(pg_url: str, proxy: TcpProxy) -> None:
    """The ambiguous fault: the COMMIT succeeds on the server, the scheduler never hears so."""
    witness = EventStore.connect(pg_url)
    cluster = CheckedCluster(
        witness, [node(f"n{i}", cpu="64", memory="256Gi") for i in range(4)], []
    )
    run = Running(through(proxy, pg_url), cluster)
    feeder = Feeder(cluster, count=80, interval=0.01)
    try:
        wait_for("10 pods bound", lambda: bound_count(cluster) >= 10)
        proxy.cut_after_commit()
        wait_for("a COMMIT answered by the server and dropped", proxy.commit_swallowed.is_set, 5)
        wait_for("the scheduler to notice the log is down", lambda: run.scheduler.log_down, 5)
        time.sleep(0.3)
        proxy.restore()
        feeder.thread.join(10)
        wait_for("all 80 pods bound", lambda: bound_count(cluster) == 80, 20, run.state)
    finally:
        proxy.restore()
        run.stop()
    check_log(witness, cluster, feeder.names)
    witness.close()


def metric(port: int, name: str) -> float:
    (value,) = metrics(port, name)
    return value


def metrics(port: int, *names: str) -> list[float]:
    """The values of `names` from one scrape of /metrics (consistent with each other)."""
    code, text = get(port, "/metrics")
    assert code == 200, f"/metrics answered {code}"
    return [_value(text, name) for name in names]


def _value(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"{name} is not in /metrics")


def single_profile_config(tmp_path: Path) -> Path:
    """A configuration for one `eventsched run` without leader election."""
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        "leaderElection: {leaderElect: false}\n"
        "profiles: [{schedulerName: eventsched}]\n"
    )
    return config


def test_run_process_is_not_ready_while_its_database_is_cut_and_resumes_by_itself(
    pg_url: str, proxy: TcpProxy, apiserver: ApiServer, tmp_path: Path
) -> None:
    """`eventsched run` with --db through the proxy: what an operator sees during the outage."""
    for name in ("node-a", "node-b"):
        apiserver.create(kube_node(name, cpu="64"))
    config = single_profile_config(tmp_path)
    port = free_port()
    proc = start_process(through(proxy, pg_url), kubeconfig(tmp_path, apiserver.url), port, config)
    before = [f"before-{i}" for i in range(5)]
    during = [f"during-{i}" for i in range(10)]

    def readyz() -> str:
        code, body = get(port, "/readyz?verbose")
        return f"/readyz answered {code}: {body.strip()!r}"

    try:
        wait_for("/readyz to pass", lambda: get(port, "/readyz")[0] == 200, 30, readyz)
        for name in before:
            apiserver.create(kube_pod(name, cpu="100m"))
        wait_for("the first pods bound", lambda: all(node_of(apiserver, n) for n in before), 10)

        time.sleep(1.0)  # the bound pods' updates are observed and logged: now it is idle
        proxy.cut()  # nothing to append, so only the readiness ping can notice
        wait_for("/readyz to fail while idle", lambda: get(port, "/readyz")[0] == 503, 5, readyz)
        assert "[-]event-log-reachable failed" in get(port, "/readyz?verbose")[1]
        assert get(port, "/healthz")[0] == 200, "liveness must not fail: a restart would not help"

        for name in during:
            apiserver.create(kube_pod(name, cpu="100m"))
        wait_for(
            "an append to fail",
            lambda: "[-]event-log-writable failed" in get(port, "/readyz?verbose")[1],
            10,
            readyz,
        )
        assert metric(port, "eventsched_log_append_failures_total") >= 1
        assert metric(port, "eventsched_log_unreachable") == 1
        time.sleep(1.5)  # the scheduler retries meanwhile; it must not act on its decisions
        posted = [n for n in during if bindings(apiserver, n)]
        assert not posted, f"Bindings posted while the log could not be written: {posted}"
        assert get(port, "/healthz")[0] == 200

        proxy.restore()
        wait_for("/readyz to pass again", lambda: get(port, "/readyz")[0] == 200, 15, readyz)
        wait_for(
            "the pods created during the outage to be bound",
            lambda: all(node_of(apiserver, n) for n in during),
            15,
        )
        assert metric(port, "eventsched_log_unreachable") == 0
        assert metric(port, "eventsched_log_bytes_total") > 0
        # The decisions made during the outage waited for it: a batch lagged over a second.
        # (One scrape: a batch appended between two, a `bound` say, would count in both.)
        within, lag_count = metrics(
            port,
            'eventsched_log_lag_seconds_bucket{le="1.024"}',
            "eventsched_log_lag_seconds_count",
        )
        assert within < lag_count
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
    finally:
        proxy.restore()
        if proc.poll() is None:
            proc.kill()
        output = proc.stdout.read() if proc.stdout else ""
    assert "Traceback" not in output, output
    assert "cannot write the event log; scheduling paused" in output
    assert "event log writable again; scheduling resumes" in output
    for name in before + during:
        assert len(bindings(apiserver, name)) == 1, (
            f"{name}: {len(bindings(apiserver, name))} Bindings"
        )
    with EventStore.connect(pg_url) as store:
        bound = Counter(e.name for e in store.read(kinds=["bound"]))
        assert bound == Counter(before + during), bound
        attempts = Counter(
            (e.attempt, e.kind)
            for e in store.read(kinds=["attempt_started", "selected", "reserved", "bound"])
        )
        assert max(attempts.values()) == 1, "an attempt's event was recorded twice"
        assert store.verify_chain().ok
