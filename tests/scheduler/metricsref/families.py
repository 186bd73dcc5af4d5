"""Metric families as a scrape shows them: name, type, HELP, label names, buckets.

Both sides of the comparison (the recorded kube-scheduler v1.28.0 and eventsched) are
read with prometheus_client's own text parser, so counters are named without `_total`
on both."""

from __future__ import annotations

from typing import Any

from prometheus_client.parser import text_string_to_metric_families

#: The families compared: kube-scheduler's own, its API client's, its process'.
PREFIXES = ("scheduler_", "rest_client_requests", "rest_client_request_duration", "process_")


def families(exposition: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for family in text_string_to_metric_families(exposition):
        if not family.name.startswith(PREFIXES):
            continue
        labels: set[str] = set()
        buckets: list[str] = []
        for sample in family.samples:
            labels.update(k for k in sample.labels if k != "le")
            le = sample.labels.get("le")
            if sample.name.endswith("_bucket") and le is not None and le not in buckets:
                buckets.append(le)
        out[family.name] = {
            "type": family.type,
            "help": family.documentation,
            "labels": sorted(labels),
            "buckets": [float(b) for b in buckets],
        }
    return out
