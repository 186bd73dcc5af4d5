"""CapacityScheduling's rejections in numbers: the namespace's quota against the request.

The plugin records what it compared (`input_recorded` "quota" in the attempt): the
namespace's usage, the request, and the totals over every quota; the quota's min and max
are the ElasticQuota's as the view held it (`spec.min`/`spec.max` as recorded).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from eventsched.audit.numbers.figure import Figure, amount

PLUGIN = "CapacityScheduling"


def quota_figures(
    recorded: Mapping[str, Any], quota: Mapping[str, Any], own: Mapping[str, int]
) -> list[Figure]:
    """`own`: the pod's own requests (the recorded request adds the pods nominated in its
    quota's namespace, as upstream's PreFilter counts them)."""
    used: Mapping[str, int] = recorded.get("used") or {}
    request: Mapping[str, int] = recorded.get("request") or {}
    minimum: Mapping[str, int] = quota.get("min") or {}
    maximum: Mapping[str, int] = quota.get("max") or {}
    namespace = recorded.get("namespace", "")
    figures = []
    for resource in sorted(request):
        asked = int(request[resource])
        mine = int(own.get(resource, 0))
        parts = [f"requests {amount(resource, asked)}"]
        if asked != mine:
            parts[0] += (
                f" ({amount(resource, mine)} for the pod, {amount(resource, asked - mine)} "
                "for pods nominated in the namespace)"
            )
        parts.append(f"namespace {namespace} uses {amount(resource, int(used.get(resource, 0)))}")
        if resource in minimum:
            parts.append(f"min {amount(resource, int(minimum[resource]))}")
        if resource in maximum:
            parts.append(f"max {amount(resource, int(maximum[resource]))}")
        over = resource in maximum and int(used.get(resource, 0)) + int(request[resource]) > int(
            maximum[resource]
        )
        figures.append(
            Figure(
                PLUGIN,
                f"{resource}: " + ", ".join(parts) + (" (over max)" if over else ""),
                "",
                {
                    "namespace": namespace,
                    "resource": resource,
                    "request": request[resource],
                    "used": used.get(resource, 0),
                    "min": minimum.get(resource),
                    "max": maximum.get(resource),
                    "overMax": over,
                },
            )
        )
    if recorded.get("totalOverMin"):
        figures.append(
            Figure(
                PLUGIN,
                "every quota together: used "
                + _resources(recorded.get("totalUsed") or {})
                + " against min "
                + _resources(recorded.get("totalMin") or {}),
            )
        )
    return figures


def _resources(values: Mapping[str, Any]) -> str:
    return ", ".join(f"{r} {amount(r, int(v))}" for r, v in sorted(values.items())) or "nothing"
