"""client-go's REST client families, for the API client (cluster/kube/rest.py)."""

from __future__ import annotations

from prometheus_client import Counter, Histogram
from prometheus_client.utils import INF

from eventsched.metrics.family import Family

REST_CLIENT_REQUESTS = Family(
    Counter,
    "rest_client_requests_total",
    "Number of HTTP requests, partitioned by status code, method, and host.",
    ("code", "method", "host"),
    stability="ALPHA",
)
REST_CLIENT_REQUEST_DURATION = Family(
    Histogram,
    "rest_client_request_duration_seconds",
    "Request latency in seconds. Broken down by verb, and host.",
    ("verb", "host"),
    buckets=(0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0, INF),
    stability="ALPHA",
)

TABLE = (REST_CLIENT_REQUESTS, REST_CLIENT_REQUEST_DURATION)
