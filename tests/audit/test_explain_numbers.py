"""The numbers behind explain's reasons, the queue and the cluster as the scheduler saw
it, from logs `eventsched simulate` writes (SQLite and PostgreSQL)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import sqlalchemy as sa

from eventsched.audit import PodExplanation, explain_pod
from eventsched.audit.believed import cluster_as_seen
from eventsched.audit.explainnumbers import explain_numbers
from eventsched.audit.viewat import ViewAt
from eventsched.events import upgrade
from eventsched.events.logreader import LogReader
from eventsched.events.schema import events
from eventsched.plugins import full_registry
from tests.conftest import Done

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def _node(name: str, cpu: str, zone: str, taint: str = "") -> str:
    spec = f"{{taints: [{{key: {taint}, value: x, effect: NoSchedule}}]}}" if taint else "{}"
    return f"""apiVersion: v1
kind: Node
metadata:
  name: {name}
  labels: {{kubernetes.io/hostname: {name}, topology.kubernetes.io/zone: {zone}}}
spec: {spec}
status:
  allocatable: {{cpu: "{cpu}", memory: 8Gi, pods: "110"}}
"""


def _pod(
    name: str, cpu: str, priority: int = 0, extra: str = "", labels: str = "{}", node: str = ""
) -> str:
    on = f"\n  nodeName: {node}" if node else ""
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default, labels: {labels}}}
spec:
  schedulerName: eventsched
  priority: {priority}{on}{extra}
  containers: [{{name: c, image: busybox, resources: {{requests: {{cpu: "{cpu}"}}}}}}]
"""


SPREAD = """
  topologySpreadConstraints:
  - {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule,
     labelSelector: {matchLabels: {app: web}}}"""
ANTI = """
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: db}}}"""


def scenario(tmp_path: Path) -> Path:
    """Three nodes in two zones (t1 tainted); two web pods and a db pod already on a1 (zone
    a), a db pod on b1; then web-3, whose spread keeps it out of zone a, db-3, whose
    anti-affinity keeps it off both untainted nodes, and three 32-cpu pods of priorities
    5, 10 and 1 that fit nowhere."""
    docs = [
        _node("a1", "4", "a"),
        _node("b1", "4", "b"),
        _node("t1", "8", "a", taint="dedicated"),
        _pod("web-1", "1", labels="{app: web}", node="a1"),
        _pod("web-2", "1", labels="{app: web}", node="a1"),
        _pod("db-1", "1", labels="{app: db}", node="a1"),
        _pod("db-2", "1", labels="{app: db}", node="b1"),
        _pod("web-3", "1", extra=SPREAD, labels="{app: web}"),
        _pod("db-3", "1", extra=ANTI, labels="{app: db}"),
        _pod("huge-5", "32", priority=5),
        _pod("huge-10", "32", priority=10),
        _pod("huge-1", "32", priority=1),
    ]
    folder = tmp_path / "manifests"
    folder.mkdir()
    (folder / "cluster.yaml").write_text("---\n".join(docs))
    return folder


def _explained(
    db_url: str, pod: str, namespace: str = "default"
) -> tuple[PodExplanation, ViewAt, LogReader]:
    reader = LogReader.connect(db_url)
    explanation = explain_pod(reader, namespace, pod)
    views = ViewAt(reader)
    explain_numbers(explanation, views, full_registry(), reader.last_position())
    return explanation, views, reader


def _requested_before(db_url: str, node: str, position: int) -> int:
    """The cpu of the pods on `node` before `position`, summed from the log's own rows: pods
    reserved there (assumed: what the scheduler counts before their binding) and not
    unreserved, and pods observed there (placed by others), each at its last observed
    requests. The independent check the fold must pass."""
    engine = sa.create_engine(db_url)
    c = events.c
    with engine.connect() as conn:
        reserved = set(
            conn.execute(
                sa.select(c.uid).where(c.kind == "reserved", c.node == node, c.position < position)
            ).scalars()
        )
        reserved -= set(
            conn.execute(
                sa.select(c.uid).where(c.kind == "unreserved", c.position < position)
            ).scalars()
        )
        observed = set(
            conn.execute(
                sa.select(c.uid).where(
                    c.kind == "pod_observed", c.node == node, c.position < position
                )
            ).scalars()
        )
        total = 0
        for uid in reserved | observed:
            data = conn.execute(
                sa.select(c.data)
                .where(c.kind == "pod_observed", c.uid == uid)
                .order_by(c.position.desc())
                .limit(1)
            ).scalar_one()
            total += int((data.get("requests") or {}).get("cpu", 0))
    engine.dispose()
    return total


def test_too_big_shows_its_cpu_against_each_nodes_room(
    db_url: str, cli: Callable[..., Done]
) -> None:
    upgrade(db_url)
    assert cli("simulate", str(EXAMPLES / "cluster")).code == 0
    explanation, _, reader = _explained(db_url, "too-big")
    reader.close()
    attempt = explanation.attempts[-1]
    cpu = [f for f in attempt.numbers if f.plugin == "NodeResourcesFit"]
    assert {f.node for f in cpu} == {"worker-1", "worker-2", "worker-3"}
    for figure in cpu:
        values = figure.values
        assert values["request"] == 64000
        assert values["requested"] == _requested_before(
            db_url, figure.node, attempt.started_position
        )
        assert values["free"] == values["allocatable"] - values["requested"] < 64000
    # The closest first: the most free cpu.
    assert [f.values["free"] for f in cpu] == sorted((f.values["free"] for f in cpu), reverse=True)
    assert cpu[0].text.startswith("cpu: requests 64, node worker-2 has 15.89 allocatable")
    taints = [f.text for f in attempt.numbers if f.plugin == "TaintToleration"]
    assert any("nvidia.com/gpu=present:NoSchedule" in t for t in taints)
    assert any("worker-4" in f.text for f in attempt.numbers if f.plugin == "NodeUnschedulable")
    queue = explanation.queue
    assert queue is not None and queue.queue == "unschedulable"
    assert any(m.startswith("a node added (NodeResourcesFit") for m in queue.moved_by)
    assert any(m.startswith("a pod on a node deleted (NodeResourcesFit") for m in queue.moved_by)

    text = cli("explain", "default/too-big")
    assert text.code == 0
    assert "NodeResourcesFit: cpu: requests 64, node worker-2 has 15.89 allocatable" in text.out
    assert "Queue (at log position" in text.out and "unschedulable since" in text.out
    as_json = json.loads(cli("explain", "default/too-big", "--json").out)
    assert as_json["queue"]["queue"] == "unschedulable"
    assert as_json["attempts"][-1]["numbers"][0]["values"]["request"] == 64000


def test_scores_spread_anti_affinity_and_the_queue_order(
    db_url: str, cli: Callable[..., Done], tmp_path: Path
) -> None:
    upgrade(db_url)
    assert cli("simulate", str(scenario(tmp_path))).code == 0
    # The anti-affinity pod: each node holding a db pod names it.
    db3, _, reader = _explained(db_url, "db-3")
    reader.close()
    anti = {
        f.node: f.values["matching"]
        for f in db3.attempts[-1].numbers
        if f.plugin == "InterPodAffinity"
    }
    assert anti == {"a1": ["default/db-1"], "b1": ["default/db-2"]}
    # The spread pod: zone a has 2 web pods, zone b none, so a1 would make skew 3.
    web3, _, reader = _explained(db_url, "web-3")
    reader.close()
    assert web3.final_node == "b1"
    spread = [f for f in web3.attempts[0].numbers if f.plugin == "PodTopologySpread"]
    assert spread[0].values["counts"] == {"a": 2, "b": 0}
    assert spread[1].node == "a1" and spread[1].values["skew"] == 3
    # The three huge pods wait in the same queue, ordered by priority.
    huge1, _, reader = _explained(db_url, "huge-1")
    reader.close()
    queue = huge1.queue
    assert queue is not None
    assert queue.place == 3, queue
    assert [a.pod for a in queue.ahead] == ["default/huge-10", "default/huge-5"]
    huge10, _, reader = _explained(db_url, "huge-10")
    reader.close()
    assert huge10.queue is not None and huge10.queue.place == 1


def test_the_cluster_as_the_scheduler_saw_it(db_url: str, cli: Callable[..., Done]) -> None:
    upgrade(db_url)
    assert cli("simulate", str(EXAMPLES / "cluster")).code == 0
    explanation, views, reader = _explained(db_url, "checkout", "shop")
    try:
        head = reader.last_position()
        attempt = explanation.attempts[0]
        seen = cluster_as_seen(views, attempt.started_position - 1, head)
        then = {n.name: n for n in seen.nodes}
        assert explanation.final_node is not None
        assert "shop/checkout" not in then[explanation.final_node].pods
        changed = {c.node: c for c in seen.changes}
        assert "+shop/checkout" in "; ".join(changed[explanation.final_node].described())
        # At the head nothing has changed since.
        assert cluster_as_seen(views, head, head).changes == []
    finally:
        reader.close()
    out = cli("explain", "shop/checkout", "--at", str(attempt.started_position))
    assert out.code == 0 and "The cluster as the scheduler saw it at log position" in out.out
    refused = cli("explain", "shop/checkout", "--at", str(head + 10))
    assert refused.code == 2 and refused.err.count("\n") == 1 and "--at" in refused.err


def test_quota_numbers(db_url: str, cli: Callable[..., Done]) -> None:
    upgrade(db_url)
    done = cli(
        "simulate",
        "--config",
        str(EXAMPLES / "profiles" / "capacityscheduling.yaml"),
        str(EXAMPLES / "capacityscheduling"),
    )
    assert done.code == 0
    explanation, _, reader = _explained(db_url, "a-big", "team-a")
    reader.close()
    for attempt in explanation.attempts:
        cpu = [f for f in attempt.numbers if f.values.get("resource") == "cpu"]
        assert len(cpu) == 1 and cpu[0].plugin == "CapacityScheduling"
        values = cpu[0].values
        # min and max are team-a's ElasticQuota's (examples/capacityscheduling).
        assert (values["min"], values["max"]) == (4000, 6000)
        assert values["overMax"] is (values["used"] + values["request"] > 6000) is True
        assert "namespace team-a uses" in cpu[0].text and "(over max)" in cpu[0].text
