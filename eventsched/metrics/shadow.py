"""The shadow's own families, `eventsched_shadow_*`: the verdicts `eventsched shadow` records
on what another scheduler did (shadow/), and how far behind them it runs."""

from __future__ import annotations

from prometheus_client import Counter, Histogram
from prometheus_client.utils import INF

from eventsched.metrics.family import Family

SHADOW_VERDICTS = Family(
    Counter,
    "eventsched_shadow_verdicts_total",
    "Verdicts on what a shadowed scheduler did: agree, tie or differ.",
    ("verdict",),
)
SHADOW_LAG = Family(
    Histogram,
    "eventsched_shadow_lag_seconds",
    "Time from the watch's delivery of a placement or failure to its verdict.",
    (),
    buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, INF),
)

TABLE = (SHADOW_VERDICTS, SHADOW_LAG)
