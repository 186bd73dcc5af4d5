"""The metric tables: what a row allows, the HELP it writes, and the builder's registry."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from eventsched.metrics import eventlog, extenderserver, kubescheduler, leaderelection, restclient
from eventsched.metrics.builder import register
from eventsched.metrics.family import Family, exponential_buckets


def test_buckets_are_for_histograms_and_only_for_them() -> None:
    with pytest.raises(ValueError, match="only for them"):
        Family(Counter, "c_total", "A counter.", buckets=(1.0,))
    with pytest.raises(ValueError, match="only for them"):
        Family(Histogram, "h_seconds", "A histogram.")


def test_help_carries_component_bases_stability_and_deprecation() -> None:
    plain = Family(Gauge, "g", "A gauge.")
    stable = Family(Gauge, "g", "A gauge.", stability="STABLE")
    deprecated = Family(Gauge, "g", "A gauge.", stability="STABLE", deprecated_since="1.28.0")
    assert plain.documentation == "A gauge."
    assert stable.documentation == "[STABLE] A gauge."
    assert deprecated.documentation == "[STABLE] (Deprecated since 1.28.0) A gauge."


def test_register_gives_each_row_its_collector_in_the_tables_order() -> None:
    registry = CollectorRegistry()
    seconds = Family(Histogram, "t_seconds", "Time.", ("verb",), exponential_buckets(1, 2, 3))
    count = Family(Counter, "t_total", "Count.", ("verb",))
    families = register(registry, (seconds,), (count,))
    families[seconds].labels("GET").observe(3)
    families[count].labels("GET").inc()
    assert [m.name for m in registry.collect()] == ["t_seconds", "t"]
    assert registry.get_sample_value("t_seconds_bucket", {"verb": "GET", "le": "4.0"}) == 1
    assert registry.get_sample_value("t_total", {"verb": "GET"}) == 1


def test_no_two_rows_share_a_name() -> None:
    tables = (
        kubescheduler.TABLE,
        restclient.TABLE,
        leaderelection.TABLE,
        eventlog.TABLE,
        extenderserver.TABLE,
    )
    names = [family.name for table in tables for family in table]
    assert len(names) == len(set(names))
