"""CapacityScheduling (scheduler-plugins v0.28.9): ElasticQuota min and max per namespace.

- `quotas`: the quota arithmetic (`elasticquota.go`).
- `plugin`: PreFilter, and PostFilter through `preemption`.
- `preemption`: the Evaluator with CapacityScheduling's eligibility and victim choice.
"""

from eventsched.plugins.capacityscheduling.plugin import CapacityScheduling

__all__ = ["CapacityScheduling"]
