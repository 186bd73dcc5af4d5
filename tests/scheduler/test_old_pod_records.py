"""Pod records of logs written before NodeResourceTopologyMatch: no `containers`,
`initContainers` or `qos`. They read back as BestEffort pods without per-container requests,
which no decision of a profile without NodeResourceTopologyMatch reads: such a log replays
with every attempt reproduced."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from eventsched.audit.replay import Selection, replay
from eventsched.cluster import SimulatedCluster
from eventsched.events import EventStore
from eventsched.model import Pod
from eventsched.model.containers import BEST_EFFORT, BURSTABLE, GUARANTEED
from eventsched.plugins import in_tree_registry
from tests.scheduler.helpers import node
from tests.scheduler.test_scheduler import bound_nodes, run_scheduler

#: What `Pod.to_record` added with NodeResourceTopologyMatch (ee28c5b).
NEW_FIELDS = ("containers", "initContainers", "qos")


def pod(name: str, cpu: str, limits: bool, init: bool = False) -> Pod:
    resources: dict[str, Any] = {"requests": {"cpu": cpu, "memory": "256Mi"}}
    if limits:
        resources["limits"] = resources["requests"]
    spec: dict[str, Any] = {
        "schedulerName": "eventsched",
        "containers": [{"name": "app", "resources": resources}],
    }
    if init:
        setup = {"cpu": "3", "memory": "64Mi"}
        spec["initContainers"] = [
            {"name": "setup", "resources": {"requests": setup, "limits": setup}}
        ]
    return Pod.from_manifest(
        {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}, "spec": spec}
    )


def without_new_fields(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in NEW_FIELDS}


def old_record(p: Pod) -> dict[str, Any]:
    return without_new_fields(p.to_record())


def cluster() -> SimulatedCluster:
    pods = [
        pod("guaranteed", "2", limits=True),
        pod("burstable", "1500m", limits=False),
        pod("with-init", "500m", limits=True, init=True),
        *(pod(f"web-{i}", "1", limits=i % 2 == 0) for i in range(6)),
        pod("too-big", "9", limits=True),
    ]
    return SimulatedCluster([node("a", cpu="8"), node("b", cpu="6")], pods)


def test_an_old_pod_record_reads_back_as_a_best_effort_pod_with_no_containers() -> None:
    fresh = pod("with-init", "500m", limits=True, init=True)
    assert fresh.qos == GUARANTEED and fresh.containers and fresh.init_containers
    old = old_record(fresh)
    decoded = Pod.from_record(old)
    assert decoded.qos == BEST_EFFORT
    assert decoded.containers == decoded.init_containers == ()
    # Everything else is the pod as observed, the effective requests (init container
    # included) among them: what every other plugin reads.
    assert decoded.requests == fresh.requests == {"cpu": 3000, "memory": 256 * 2**20}
    assert decoded.non_zero == fresh.non_zero
    restored = replace(
        decoded, containers=fresh.containers, init_containers=fresh.init_containers, qos=fresh.qos
    )
    assert restored == fresh
    # Encoding it again gives the old record back: reading an old log adds nothing.
    assert decoded.to_record() == old
    assert Pod.from_record(pod("b", "1", limits=False).to_record()).qos == BURSTABLE


def test_a_log_of_old_pod_records_replays_with_every_decision_reproduced(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A run whose pods are logged as before ee28c5b: the live scheduler decides with the
    # whole pods (Guaranteed, Burstable, an init container), the log keeps old records.
    current = Pod.to_record
    monkeypatch.setattr(Pod, "to_record", lambda self: without_new_fields(current(self)))
    live = cluster()
    run_scheduler(store, live)
    monkeypatch.undo()
    records = [dict(e.data) for e in store.read(kinds=["pod_observed"])]
    assert len(records) == 10 and not any(k in r for r in records for k in NEW_FIELDS)
    assert len(bound_nodes(live)) == 9
    # Replay decodes them as BestEffort pods without containers and, with the default
    # profile, takes every decision (filters, scores, the unschedulable message) again the
    # same way as the live scheduler took it with the whole pods.
    report = replay(store, in_tree_registry(), Selection())
    assert report.mismatches == [] and report.skipped == []
    assert report.reproduced == report.attempts >= 10
