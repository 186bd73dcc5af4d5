"""The extender server's own families, `eventsched_extender_*`: the calls kube-scheduler
makes to `eventsched extender` (extenderserver/server.py)."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

from eventsched.metrics.family import Family

EXTENDER_REQUESTS = Family(
    Counter,
    "eventsched_extender_requests_total",
    "Extender calls answered, by verb and HTTP status code.",
    ("verb", "code"),
)
EXTENDER_REQUEST_DURATION = Family(
    Histogram,
    "eventsched_extender_request_duration_seconds",
    "Time from a call's request read to its answer, by verb.",
    ("verb",),
    buckets=(0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5),
)

TABLE = (EXTENDER_REQUESTS, EXTENDER_REQUEST_DURATION)
