"""kube-scheduler's `framework.Resource` of a resource list: what of a request it counts.

`framework.Resource.Add` keeps the four base fields and scalar resources and drops any
other name. CapacityScheduling sums requests this way (its quotas' min and max too), and
the NodeTable keeps each namespace's sum of them (model/namespaceusage.py).
"""

from __future__ import annotations

from collections.abc import Mapping

from eventsched.model.resources import CPU, EPHEMERAL_STORAGE, MEMORY, PODS, Resources

#: The fields of kube-scheduler's `framework.Resource` that are not scalar resources.
BASE_RESOURCES = (CPU, MEMORY, EPHEMERAL_STORAGE, PODS)


def is_scalar_resource(name: str) -> bool:
    """`schedutil.IsScalarResourceName`: extended (domain-prefixed, not `kubernetes.io/`,
    not `requests.`), hugepages, `kubernetes.io/`-prefixed native and attachable volumes.
    `framework.Resource.Add` drops any other name."""
    if "kubernetes.io/" in name:
        return True
    if name.startswith(("hugepages-", "attachable-volumes-")):
        return True
    return "/" in name and not name.startswith("requests.")


def counted(resources: Mapping[str, int]) -> Resources:
    """`framework.Resource` of a resource list: the four base fields and scalar resources."""
    return {
        name: amount
        for name, amount in resources.items()
        if name in BASE_RESOURCES or is_scalar_resource(name)
    }
