"""What each scrape of a replica's /readyz and /metrics keeps, and the figures read
from a series of them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

SCRAPE_EVERY = 0.25
#: metric families kept from each scrape (rest_client_requests_total is summed by code)
MASTER = "leader_election_master_status"
UNREACHABLE = "eventsched_log_unreachable"
APPEND_FAILURES = "eventsched_log_append_failures_total"
REST = "rest_client_requests_total"


def metric_values(text: str) -> dict[str, float]:
    """The scraped values the scenarios follow: master status, log unreachable, append
    failures, and rest_client_requests_total summed by code (keys ``rest:<code>``)."""
    values: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == MASTER:
                values[MASTER] = sample.value
            elif sample.name in (UNREACHABLE, APPEND_FAILURES):
                values[sample.name] = sample.value
            elif sample.name == REST:
                key = f"rest:{sample.labels.get('code', '')}"
                values[key] = values.get(key, 0.0) + sample.value
    return values


@dataclass(frozen=True, slots=True)
class Sample:
    at: float
    readyz: int  # HTTP status, 0 when the replica did not answer
    values: dict[str, float]


def changes(samples: Sequence[Sample], key: str) -> list[tuple[float, float]]:
    """(time, value) each time `key` ("readyz" or a metric) takes a new value, first included."""
    out: list[tuple[float, float]] = []
    for s in samples:
        value = float(s.readyz) if key == "readyz" else s.values.get(key)
        if value is not None and (not out or out[-1][1] != value):
            out.append((s.at, value))
    return out


def first_at(points: Sequence[tuple[float, float]], value: float, after: float) -> float | None:
    return next((t for t, v in points if v == value and t >= after), None)


def delta(samples: Sequence[Sample], key: str, start: float, end: float) -> float:
    """How much a counter grew over the samples taken in (start, end], each against the one
    before; a drop is a restarted process counting from zero (as Prometheus' increase()).
    A scrape without the series counts it 0: a labelled series appears at its first count."""
    total = 0.0
    previous: float | None = None
    for s in samples:
        if s.at > end:
            break
        if not s.values:  # the scrape failed
            continue
        value = s.values.get(key, 0.0)
        if previous is not None and s.at > start:
            total += value - previous if value >= previous else value
        previous = value
    return total
