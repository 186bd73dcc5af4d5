"""The one builder: a table of families registered into a registry, as collectors."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from prometheus_client import CollectorRegistry, disable_created_metrics
from prometheus_client.metrics import MetricWrapperBase

from eventsched.metrics.family import Family, M

# kube-scheduler's counters and histograms have no `*_created` series; without them the
# scrape holds the same series as kube-scheduler's (process-wide, as prometheus_client has it).
disable_created_metrics()


class Registered:
    """The collectors a table was registered as, each found by its family's row."""

    def __init__(self, collectors: dict[Family[Any], MetricWrapperBase]) -> None:
        self._collectors = collectors

    def __getitem__(self, family: Family[M]) -> M:
        return cast(M, self._collectors[family])


def register(registry: CollectorRegistry, *tables: Iterable[Family[Any]]) -> Registered:
    """Every family of `tables` registered into `registry`, in the tables' order (the
    order a scrape lists them in)."""
    return Registered({family: _collector(family, registry) for t in tables for family in t})


def _collector(family: Family[M], registry: CollectorRegistry) -> M:
    options: dict[str, Any] = {} if family.buckets is None else {"buckets": family.buckets}
    return family.kind(
        family.name, family.documentation, family.labels, registry=registry, **options
    )
