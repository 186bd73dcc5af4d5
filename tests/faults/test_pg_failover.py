"""PostgreSQL failover mid-run: the primary killed, its streaming standby promoted.

The scheduler is given libpq's multi-host URL with target_session_attrs=read-write,
so it follows whichever server is the primary. The two servers are real, made for
the test (tests/faults/pgcluster.py); the primary's server is killed as a lost
machine's would be (`pg_ctl stop -m immediate`) and the standby promoted
(`pg_ctl promote`). Nothing in the scheduler or the store is patched.

- Synchronous replication: every batch appended (acknowledged) before the kill is
  in the promoted standby's log, byte for byte (its batch hash), and every pod
  whose Binding was sent has its decision there.
- Asynchronous replication, with the standby cut off from the primary before the
  kill so that the log's tail is certainly lost: the scheduler says so once,
  relists the cluster, records the lost tail's placements as `pod_observed` on
  their nodes, and binds no pod twice.

In both, the scheduler binds again within 10 s of the promotion, without a restart.
"""

from __future__ import annotations

import json
import signal
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from eventsched.cli.main import main
from eventsched.cluster import SimulatedCluster
from eventsched.events import EventStore, upgrade
from eventsched.events.chain import ChainPoint
from tests.faults.pgcluster import ReplicatedPair, unavailable
from tests.faults.test_database_faults import (
    Feeder,
    Running,
    bound_count,
    single_profile_config,
)
from tests.kube.apiserver import ApiServer
from tests.kube.test_kube_runner import free_port, get, kubeconfig, start_process
from tests.kube.test_kube_scheduler import bindings, node_of
from tests.kube.test_kube_scheduler import node as kube_node
from tests.kube.test_kube_scheduler import pod as kube_pod
from tests.scheduler.helpers import node, pod
from tests.waiting import wait_for

pytestmark = pytest.mark.skipif(unavailable() is not None, reason=str(unavailable()))

TAIL_LOST = "event log tail lost after a database failover; resynchronising with the cluster"


def make_pair(*, synchronous: bool) -> Iterator[ReplicatedPair]:
    pair = ReplicatedPair(synchronous=synchronous).start()
    try:
        upgrade(pair.primary.url())
        yield pair
    finally:
        pair.close()


@pytest.fixture
def sync_pair() -> Iterator[ReplicatedPair]:
    yield from make_pair(synchronous=True)


@pytest.fixture
def async_pair() -> Iterator[ReplicatedPair]:
    yield from make_pair(synchronous=False)


def last_appended(run: Running) -> ChainPoint:
    appended = run.store.appender.appended
    assert appended is not None, "the scheduler has appended nothing"
    return appended


def fail_over(
    pair: ReplicatedPair, run: Running, cluster: SimulatedCluster, feeder: Feeder
) -> float:
    """Kill the primary, promote the standby; a pod created then is bound within 10 s (the
    seconds it took are returned), and every pod is bound in the end."""
    pair.kill_primary()
    wait_for("the scheduler to notice the primary is gone", lambda: run.scheduler.log_down, 10)
    pair.promote_standby()
    promoted = time.monotonic()
    cluster.add_pod(pod("after-promotion", cpu="100m"))
    wait_for(
        "a pod created after the promotion to be bound within 10 s",
        lambda: bool(getattr(cluster.get_pod("default/after-promotion"), "node_name", "")),
        10,
        run.state,
    )
    took = time.monotonic() - promoted
    feeder.thread.join(10)
    wait_for("every pod bound", lambda: bound_count(cluster) == 121, 20, run.state)
    return took


def check_log_after_failover(log: EventStore, cluster: SimulatedCluster) -> list[str]:
    """Gap-free, chained, each pod bound once; returns the pods bound with no `bound` event."""
    per_pod = Counter(key for key, _ in cluster.bindings)
    assert all(count == 1 for count in per_pod.values()), f"bound twice: {per_pod}"
    assert cluster.bind_calls == len(cluster.bindings), "a Binding was posted for a bound pod"
    events = list(log.read())
    assert [e.position for e in events] == list(range(1, len(events) + 1)), "positions have gaps"
    report = log.verify_chain()
    assert report.ok, report.detail
    bound = {(f"{e.namespace}/{e.name}", e.node) for e in events if e.kind == "bound"}
    assert len(bound) == len({key for key, _ in bound}), "a pod has two bound events"
    return sorted(key for key, node_name in cluster.bindings if (key, node_name) not in bound)


def read_on_standby(pair: ReplicatedPair, capsys: pytest.CaptureFixture[str]) -> None:
    """query, explain and replay run on the hot standby, where any write would fail
    ("cannot execute ... in a read-only transaction"), while the primary is written."""
    url = pair.standby.url()
    capsys.readouterr()
    assert main(["query", "--format", "csv", "SELECT count(*) FROM events", "--db", url]) == 0
    assert int(capsys.readouterr().out.splitlines()[1]) > 0
    assert main(["explain", "default/p-000", "--db", url]) == 0
    assert "Bound to n" in capsys.readouterr().out
    assert main(["replay", "--db", url]) == 0
    assert "hash chain: ok" in capsys.readouterr().out


def test_synchronous_standby_promoted_keeps_every_acknowledged_decision(
    sync_pair: ReplicatedPair, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster = SimulatedCluster([node(f"n{i}", cpu="64", memory="256Gi") for i in range(4)], [])
    run = Running(sync_pair.multihost_url(), cluster)
    feeder = Feeder(cluster, count=120, interval=0.02)
    try:
        wait_for("30 pods bound before the failover", lambda: bound_count(cluster) >= 30)
        read_on_standby(sync_pair, capsys)
        acknowledged = last_appended(run)
        bound_before = list(cluster.bindings)
        took = fail_over(sync_pair, run, cluster, feeder)
    finally:
        run.stop()
    assert took < 10, f"bound again {took:.1f} s after the promotion"
    print(f"bound again {took:.2f} s after the promotion")
    with EventStore.connect(sync_pair.standby.url()) as promoted:
        assert promoted.batch_committed(acknowledged.batch, acknowledged.hash), (
            f"batch {acknowledged.batch}, appended before the kill, is not in the promoted log"
        )
        unlogged = check_log_after_failover(promoted, cluster)
        assert not unlogged, f"bound with no decision in the log: {unlogged}"
        reserved = {(f"{e.namespace}/{e.name}", e.node) for e in promoted.read(kinds=["reserved"])}
    missing = [b for b in bound_before if b not in reserved]
    assert not missing, f"Bindings sent before the kill whose reservation is lost: {missing}"


def test_asynchronous_standby_promoted_without_the_tail_resynchronises(
    async_pair: ReplicatedPair,
) -> None:
    cluster = SimulatedCluster([node(f"n{i}", cpu="64", memory="256Gi") for i in range(4)], [])
    with structlog.testing.capture_logs() as logs:
        run = Running(async_pair.multihost_url(), cluster)
        feeder = Feeder(cluster, count=120, interval=0.02)
        try:
            wait_for("20 pods bound", lambda: bound_count(cluster) >= 20)
            async_pair.stop_standby_replication()
            before = bound_count(cluster)
            wait_for("20 more pods bound", lambda: bound_count(cluster) >= before + 20)
            lost = last_appended(run)
            took = fail_over(async_pair, run, cluster, feeder)
        finally:
            run.stop()
    assert took < 10, f"bound again {took:.1f} s after the promotion"
    print(f"bound again {took:.2f} s after the promotion")
    said = [entry for entry in logs if entry["event"] == TAIL_LOST]
    assert len(said) == 1, f"the lost tail was said {len(said)} times"
    assert said[0]["appended_batch"] >= lost.batch
    head = said[0]["log_position"]
    assert head < lost.position
    assert said[0]["lost_events"] == said[0]["appended_position"] - head

    with EventStore.connect(async_pair.standby.url()) as promoted:
        assert not promoted.batch_committed(lost.batch, lost.hash), "the tail was not lost"
        unlogged = check_log_after_failover(promoted, cluster)
        observed = {
            (f"{e.namespace}/{e.name}", e.node)
            for e in promoted.read(after=head, kinds=["pod_observed"])
            if e.node
        }
    assert unlogged, "no placement of the lost tail is missing its bound event"
    placed = dict(cluster.bindings)
    not_observed = [key for key in unlogged if (key, placed[key]) not in observed]
    assert not not_observed, f"lost placements not recorded as observed: {not_observed}"


def test_run_process_follows_the_promoted_standby_and_resynchronises(
    async_pair: ReplicatedPair, apiserver: ApiServer, tmp_path: Path
) -> None:
    """`eventsched run --db` with libpq's comma-separated hosts, on the API-server emulator:
    the asynchronous failover loses a tail, the process says so once and binds on."""
    for name in ("node-a", "node-b"):
        apiserver.create(kube_node(name, cpu="64"))
    config = single_profile_config(tmp_path)
    port, output = free_port(), tmp_path / "run.log"
    url = async_pair.multihost_url().replace("postgresql+psycopg://", "postgresql://")
    proc = start_process(url, kubeconfig(tmp_path, apiserver.url), port, config, output)
    groups = {when: [f"{when}-{i}" for i in range(5)] for when in ("before", "lost", "after")}

    def bind_all(names: list[str], within: float) -> None:
        wait_for(f"{names[0]}.. bound", lambda: all(node_of(apiserver, n) for n in names), within)

    try:
        wait_for("/readyz to pass", lambda: get(port, "/readyz")[0] == 200, 30)
        for name in groups["before"]:
            apiserver.create(kube_pod(name, cpu="100m"))
        bind_all(groups["before"], 10)
        async_pair.stop_standby_replication()
        for name in groups["lost"]:
            apiserver.create(kube_pod(name, cpu="100m"))
        bind_all(groups["lost"], 10)
        async_pair.kill_primary()
        wait_for("/readyz to fail", lambda: get(port, "/readyz")[0] == 503, 10)
        async_pair.promote_standby()
        for name in groups["after"]:
            apiserver.create(kube_pod(name, cpu="100m"))
        bind_all(groups["after"], 10)
        wait_for("/readyz to pass again", lambda: get(port, "/readyz")[0] == 200, 10)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    lines = [json.loads(line) for line in output.read_text().splitlines() if line.startswith("{")]
    assert sum(1 for line in lines if line.get("event") == TAIL_LOST) == 1, output.read_text()
    names = [name for group in groups.values() for name in group]
    twice = {n: len(bindings(apiserver, n)) for n in names if len(bindings(apiserver, n)) != 1}
    assert not twice, f"Bindings per pod: {twice}"
    with EventStore.connect(async_pair.standby.url()) as promoted:
        assert promoted.verify_chain().ok
        bound = {e.name for e in promoted.read(kinds=["bound"])}
        observed = {e.name: e.node for e in promoted.read(kinds=["pod_observed"]) if e.node}
    assert set(groups["after"]) <= bound
    for name in set(names) - bound:
        assert observed.get(name) == node_of(apiserver, name), f"{name}: not recorded anywhere"
