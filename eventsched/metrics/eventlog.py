"""The event log's own families, `eventsched_log_*`: appends (scheduler/journal.py) and the
hash chain's checks (events/chainwatch.py)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.utils import INF

from eventsched.metrics.family import Family, exponential_buckets

LOG_APPEND_DURATION = Family(
    Histogram,
    "eventsched_log_append_duration_seconds",
    "Time to append one batch of events to the event log, commit included.",
    buckets=exponential_buckets(0.0005, 2, 14),
)
LOG_BATCH_EVENTS = Family(
    Histogram,
    "eventsched_log_batch_events",
    "Events per appended batch (group commit).",
    buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, INF),
)
LOG_EVENTS = Family(
    Counter,
    "eventsched_log_events_total",
    "Events appended to the event log, by kind.",
    ("kind",),
)
LOG_LAG = Family(
    Histogram,
    "eventsched_log_lag_seconds",
    "Seconds from the first event of a batch (a decision, an observation) being made to the "
    "batch being durable in the event log: the longest any event of it waited, group commit "
    "and outages included.",
    buckets=exponential_buckets(0.001, 2, 16),
)
LOG_BYTES = Family(
    Counter,
    "eventsched_log_bytes_total",
    "Bytes of event data (canonical JSON) appended to the event log.",
)
LOG_UNREACHABLE = Family(
    Gauge,
    "eventsched_log_unreachable",
    "1 while appends to the event log fail (the database is down or refuses): scheduling is "
    "paused; 0 once an append succeeds.",
)
LOG_CHAIN_CHECKS = Family(
    Counter,
    "eventsched_log_chain_checks_total",
    "Checks of the hash chain over the batches appended since the previous check, by result: "
    "ok, broken (an event edited, deleted or inserted after it was appended), error (the "
    "database did not answer).",
    ("result",),
)
LOG_CHAIN_VERIFIED_POSITION = Family(
    Gauge,
    "eventsched_log_chain_verified_position",
    "The last log position whose batch hash this process has verified.",
)
LOG_CHAIN_BROKEN = Family(
    Gauge,
    "eventsched_log_chain_broken",
    "1 once a check found the hash chain broken (see the log line and `eventsched replay`), "
    "else 0.",
)
LOG_APPEND_FAILURES = Family(
    Counter,
    "eventsched_log_append_failures_total",
    "Appends to the event log that failed (scheduling pauses until one succeeds).",
)

TABLE = (
    LOG_APPEND_DURATION,
    LOG_BATCH_EVENTS,
    LOG_EVENTS,
    LOG_LAG,
    LOG_BYTES,
    LOG_UNREACHABLE,
    LOG_CHAIN_CHECKS,
    LOG_CHAIN_VERIFIED_POSITION,
    LOG_CHAIN_BROKEN,
    LOG_APPEND_FAILURES,
)
