"""kube-scheduler's families at the versions between the recorded scrapes (1.28.0, 1.37.2),
as each version's pkg/scheduler/metrics/metrics.go declares them."""

from __future__ import annotations

from prometheus_client import generate_latest

from eventsched.metrics import SchedulerMetrics
from eventsched.metrics import kubescheduler as k
from eventsched.metrics.kubeversions import at_version, table_at


def _names(version: str) -> set[str]:
    return {family.name for family in table_at(version).values()}


def test_the_cache_size_is_renamed_in_1_33_beside_the_deprecated_old_name() -> None:
    assert "scheduler_scheduler_cache_size" in _names("1.32")
    assert "scheduler_cache_size" not in _names("1.32")
    assert {"scheduler_scheduler_cache_size", "scheduler_cache_size"} <= _names("1.33")
    old = at_version(k.CACHE_SIZE, "1.33")
    assert old is not None and old.documentation.startswith("[ALPHA] (Deprecated since 1.33.0) ")
    assert "scheduler_scheduler_cache_size" not in _names("1.34")


def test_the_deprecated_pod_scheduling_duration_is_shown_only_in_1_28() -> None:
    assert "scheduler_pod_scheduling_duration_seconds" in _names("1.28")
    assert "scheduler_pod_scheduling_duration_seconds" not in _names("1.29")


def test_promotions_to_beta_come_at_their_versions() -> None:
    for family, minor in (
        (k.PLUGIN_EVALUATION, 36),
        (k.UNSCHEDULABLE_PODS, 36),
        (k.PERMIT_WAIT_DURATION, 36),
        (k.ALGORITHM_DURATION, 37),
        (k.PLUGIN_EXECUTION_DURATION, 37),
    ):
        before, after = at_version(family, f"1.{minor - 1}"), at_version(family, f"1.{minor}")
        assert before is not None and before.stability == "ALPHA", family.name
        assert after is not None and after.stability == "BETA", family.name


def test_a_scrape_at_1_33_shows_the_cache_size_under_both_names() -> None:
    metrics = SchedulerMetrics(version="1.33")
    metrics.watch_cache(lambda: type("S", (), {"nodes": 3, "pods": 2, "assumed_pods": 1})())
    text = generate_latest(metrics.registry).decode()
    assert 'scheduler_cache_size{type="nodes"} 3.0' in text
    assert 'scheduler_scheduler_cache_size{type="nodes"} 3.0' in text
    # A bound pod at 1.33 observes the SLI duration only (the old one is gone).
    metrics.pod_scheduled(1, 0.5)
    text = generate_latest(metrics.registry).decode()
    assert "scheduler_pod_scheduling_sli_duration_seconds_count" in text
    assert "scheduler_pod_scheduling_duration_seconds" not in text
