"""A metric family as a row of a table: name, type, HELP, label names, buckets.

Each group's module (`kubescheduler`, `restclient`, `leaderelection`, `eventlog`) lists its
families as rows, the way kube-scheduler's pkg/scheduler/metrics declares its own with
component-base's options; `builder.register` turns a table into collectors.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from prometheus_client import Histogram
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.utils import INF

#: A family's prometheus_client class: Counter, Gauge or Histogram.
M = TypeVar("M", bound=MetricWrapperBase)

#: component-base's stability levels, written before a Kubernetes family's HELP.
Stability = Literal["ALPHA", "BETA", "STABLE"]


@dataclass(frozen=True)
class Family(Generic[M]):
    """One family as a scrape shows it.

    `help` is the text alone; `documentation` puts before it what component-base does
    for a Kubernetes family: its stability level and the version that deprecated it. The
    event log's own families have neither.
    """

    kind: type[M]
    name: str
    help: str
    labels: tuple[str, ...] = ()
    #: A histogram's upper bounds, +Inf last; None for a counter or a gauge.
    buckets: tuple[float, ...] | None = None
    stability: Stability | None = None
    deprecated_since: str | None = None

    def __post_init__(self) -> None:
        if (self.buckets is not None) != issubclass(self.kind, Histogram):
            raise ValueError(f"{self.name}: buckets are for histograms, and only for them")

    @property
    def documentation(self) -> str:
        """The HELP text: `[STABLE] (Deprecated since 1.28.0) E2e latency ...`."""
        prefix = f"[{self.stability}] " if self.stability else ""
        if self.deprecated_since:
            prefix += f"(Deprecated since {self.deprecated_since}) "
        return prefix + self.help


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """client_golang's prometheus.ExponentialBuckets, multiplied step by step as it does
    (so the bounds are its floats, to the last bit), and +Inf."""
    buckets = []
    for _ in range(count):
        buckets.append(start)
        start *= factor
    return (*buckets, INF)
