"""Every API call the Kubernetes adapter makes, as RBAC rules.

The deploy/ ClusterRole and Role are checked against this list in the tests,
and the adapter's tests check that it never calls outside it, so the
granted permissions stay exactly the ones the code uses: no wildcards, no
secrets, leases only in the scheduler's own namespace.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Access:
    api_group: str
    resource: str
    verbs: tuple[str, ...]
    #: True: granted by a Role in the scheduler's own namespace, not cluster-wide.
    own_namespace: bool = False


REQUIRED_ACCESS: tuple[Access, ...] = (
    # Informers: every node, and every pod (assigned pods of all schedulers use capacity);
    # DefaultPreemption deletes its victims (PreemptPod). VolumeBinding's PreBind reads the
    # node (and its CSINode) to check its volumes' node affinity against its current labels.
    Access("", "nodes", ("get", "list", "watch")),
    Access("", "pods", ("delete", "list", "watch")),
    # What plugins read besides: namespace labels (inter-pod affinity's namespaceSelector),
    # the selectors of Services and controllers (PodTopologySpread's default constraints).
    Access("", "namespaces", ("list", "watch")),
    Access("", "services", ("list", "watch")),
    Access("", "replicationcontrollers", ("list", "watch")),
    Access("apps", "replicasets", ("list", "watch")),
    Access("apps", "statefulsets", ("list", "watch")),
    # The volume plugins: claims, volumes, storage classes and CSI nodes' attach limits;
    # VolumeBinding's PreBind updates a volume pre-bound to its claim (read first), or a
    # claim to provision with its selected node, then reads the volume and the claim until
    # the provisioner and the PV controller have bound them.
    Access("", "persistentvolumeclaims", ("get", "list", "update", "watch")),
    Access("", "persistentvolumes", ("get", "list", "update", "watch")),
    Access("storage.k8s.io", "storageclasses", ("list", "watch")),
    Access("storage.k8s.io", "csinodes", ("get", "list", "watch")),
    # VolumeBinding's capacity check of a claim to provision.
    Access("storage.k8s.io", "csidrivers", ("list", "watch")),
    Access("storage.k8s.io", "csistoragecapacities", ("list", "watch")),
    # DefaultPreemption: the disruption budgets its victims would violate.
    Access("policy", "poddisruptionbudgets", ("list", "watch")),
    # scheduler-plugins' custom resources, when a profile enables the plugin reading them:
    # CapacityScheduling's ElasticQuotas, NodeResourceTopologyMatch's NodeResourceTopologies.
    Access("scheduling.x-k8s.io", "elasticquotas", ("list", "watch")),
    Access("topology.node.k8s.io", "noderesourcetopologies", ("list", "watch")),
    # Binding; the PodScheduled=False condition / nominatedNodeName on failure, a victim's
    # DisruptionTarget condition, and clearing a lower-priority pod's nominatedNodeName.
    Access("", "pods/binding", ("create",)),
    Access("", "pods/status", ("patch",)),
    # Scheduled / FailedScheduling, written with the events.k8s.io/v1 API as kube-scheduler does.
    Access("events.k8s.io", "events", ("create",)),
    # Leader election on a Lease.
    Access("coordination.k8s.io", "leases", ("create", "get", "update"), own_namespace=True),
)

#: The verbs that only read.
READ_VERBS = frozenset({"get", "list", "watch"})


def read_access() -> tuple[Access, ...]:
    """The cluster-wide reads of REQUIRED_ACCESS, nothing else: what `eventsched shadow`,
    which binds, evicts and writes nothing, is granted (deploy/shadow/). Its informers
    list and watch; the volume reads it forwards (`read_volume`, `read_claim`) get."""
    return tuple(
        Access(a.api_group, a.resource, tuple(v for v in a.verbs if v in READ_VERBS))
        for a in REQUIRED_ACCESS
        if not a.own_namespace and READ_VERBS & set(a.verbs)
    )
