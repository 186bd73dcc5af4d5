"""eventsched's metric families against a scrape of the real kube-scheduler v1.28.0.

kube-scheduler-v1.28.0.json (recorded by `python -m tests.scheduler.metricsref.record`)
holds each family's type, HELP (stability prefix included), label names and buckets. Every
family there is exported by eventsched with the same four, or named in NOT_EXPORTED with
the reason docs/metrics.md gives.
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
from tests.scheduler.metricsref.record import REFERENCE

#: Families kube-scheduler v1.28.0 exports that eventsched does not (docs/metrics.md).
NOT_EXPORTED = {
    "scheduler_goroutines": "no goroutines: bindings run on a thread pool of fixed size",
    "process_virtual_memory_max_bytes": "prometheus_client's process collector has no such",
}


def _reference() -> dict[str, dict[str, Any]]:
    return dict(json.loads(REFERENCE.read_text())["families"])


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
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
        metrics = metered_run(store, cluster)
    metrics.preemption_victims.observe(1)
    metrics.permit_waited("Success", 0.01)
    metrics.api_request("127.0.0.1:6443", "POST", "201", 0.01)  # no API server here
    metrics.plugin_executed("NodeResourcesFit", "Filter", "Success", 0.0001)  # if unsampled
    return families(generate_latest(metrics.registry).decode())


def test_the_families_are_kube_schedulers_but_those_named(ours: dict[str, Any]) -> None:
    missing = set(_reference()) - set(ours)
    assert missing == set(NOT_EXPORTED)


@pytest.mark.parametrize("name", sorted(set(_reference()) - set(NOT_EXPORTED)))
def test_a_family_has_kube_schedulers_type_help_labels_and_buckets(
    name: str, ours: dict[str, Any]
) -> None:
    assert ours[name] == _reference()[name]
