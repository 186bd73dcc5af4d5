"""eventsched's metric families against scrapes of the real kube-scheduler v1.28.0 and v1.37.2.

kube-scheduler-v<version>.json (recorded by `python -m tests.scheduler.metricsref.record`)
holds each family's type, HELP (stability prefix included), label names and buckets. Every
family there is exported by eventsched deciding as that version with the same four, or
named in NOT_EXPORTED with the reason docs/metrics.md gives.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from prometheus_client import generate_latest

from eventsched.cluster import SimulatedCluster
from eventsched.events import EventStore, upgrade
from tests.scheduler.helpers import metered_run, node, pod
from tests.scheduler.metricsref.families import families
from tests.scheduler.metricsref.record import reference

#: The recorded scrapes: the version eventsched decides as -> kube-scheduler's version.
VERSIONS = {"1.28": "v1.28.0", "1.37": "v1.37.2"}
#: Families kube-scheduler exports that eventsched does not (docs/metrics.md).
NOT_EXPORTED = {
    "scheduler_goroutines": "no goroutines: bindings run on a thread pool of fixed size",
    "process_virtual_memory_max_bytes": "prometheus_client's process collector has no such",
}
#: ... and those v1.37.2 added, which eventsched does not have the parts for yet.
NOT_EXPORTED_137 = {
    "process_network_receive_bytes": "prometheus_client's process collector has no such",
    "process_network_transmit_bytes": "prometheus_client's process collector has no such",
    "scheduler_batch_attempts": "no opportunistic batching (inert in the default profile)",
    "scheduler_batch_cache_flushed": "no opportunistic batching",
    "scheduler_get_node_hint_duration_seconds": "no opportunistic batching",
    "scheduler_store_schedule_results_duration_seconds": "no opportunistic batching",
    "scheduler_event_handling_duration_seconds": "v1.28's queue: no queueing hints yet",
    "scheduler_inflight_events": "v1.28's queue: no queueing hints yet",
    "scheduler_pod_scheduled_after_flush": "v1.28's queue: no flush bookkeeping",
    "scheduler_queue_incoming_entities": "v1.28's queue: no pod groups",
    "scheduler_queued_entities": "v1.28's queue: no pod groups",
    "scheduler_preemption_goroutines_execution": "no asynchronous preemption yet",
}


def _not_exported(version: str) -> dict[str, str]:
    return NOT_EXPORTED | (NOT_EXPORTED_137 if version == "1.37" else {})


def _reference(version: str) -> dict[str, dict[str, Any]]:
    return dict(json.loads(reference(VERSIONS[version]).read_text())["families"])


@pytest.fixture(scope="module", params=sorted(VERSIONS))
def version(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def ours(version: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The families after a real run: two pods bound, one unschedulable. The histograms a
        run this small does not reach (a preemption, a Permit wait, an API request: the simulated
    cluster has no API server) are observed once by hand,
        only so that the scrape shows their labels and buckets."""
    url = f"sqlite:///{tmp_path_factory.mktemp('metrics')}/log.db"
    upgrade(url)
    with EventStore.connect(url) as store:
        cluster = SimulatedCluster(
            [node("a", cpu="2"), node("b", cpu="2")],
            [pod("fits-1"), pod("fits-2"), pod("too-big", cpu="16")],
        )
        metrics = metered_run(store, cluster, version=version)
    metrics.preemption_victims.observe(1)
    metrics.permit_waited("Success", 0.01)
    metrics.api_request("127.0.0.1:6443", "POST", "201", 0.01)  # no API server here
    metrics.plugin_executed("NodeResourcesFit", "Filter", "Success", 0.0001)  # if unsampled
    return families(generate_latest(metrics.registry).decode())


def test_the_families_are_kube_schedulers_but_those_named(
    version: str, ours: dict[str, Any]
) -> None:
    missing = set(_reference(version)) - set(ours)
    assert missing == set(_not_exported(version))
    # Nothing beyond them but eventsched's own (the event log's, eventsched_*).
    extra = {name for name in set(ours) - set(_reference(version)) if name.startswith("scheduler")}
    assert not extra


def test_a_family_has_kube_schedulers_type_help_labels_and_buckets(
    version: str, ours: dict[str, Any]
) -> None:
    expected = _reference(version)
    for name in sorted(set(expected) - set(_not_exported(version))):
        assert ours[name] == expected[name], name
