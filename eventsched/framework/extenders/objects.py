"""The pod and the node as v1 objects, built from what eventsched keeps of them, for the
bodies of the extender calls (client.py, preemptargs.py)."""

from __future__ import annotations

from typing import Any

from eventsched.model import Node, Pod


def _quantity(name: str, amount: int) -> str:
    return f"{amount}m" if name == "cpu" else str(amount)


def pod_object(pod: Pod) -> dict[str, Any]:
    """The pod as a v1.Pod, from what eventsched keeps of it.

    eventsched keeps the pod's effective requests, not its containers: they are sent as
    one container named `requests` whose requests (and limits, for the extended
    resources an extender manages) are the pod's.
    """
    meta: dict[str, Any] = {
        "name": pod.name,
        "namespace": pod.namespace,
        "uid": pod.uid,
        "labels": dict(pod.labels),
        "annotations": dict(pod.annotations),
    }
    if pod.owner is not None:
        meta["ownerReferences"] = [
            {
                "kind": pod.owner.kind,
                "name": pod.owner.name,
                "uid": pod.owner.uid,
                "controller": True,
            }
        ]
    requests = {name: _quantity(name, amount) for name, amount in pod.requests.items()}
    spec: dict[str, Any] = {
        "schedulerName": pod.scheduler_name,
        "priority": pod.priority,
        "containers": [
            {
                "name": "requests",
                "image": pod.images[0] if pod.images else "",
                "resources": {"requests": requests, "limits": dict(requests)},
            }
        ],
    }
    optional = {
        "nodeName": pod.node_name,
        "nodeSelector": dict(pod.node_selector),
        "affinity": dict(pod.affinity),
        "tolerations": [t.to_dict() for t in pod.tolerations],
    }
    spec.update({k: v for k, v in optional.items() if v})
    status = {"phase": "Pending"}
    if pod.nominated_node_name:
        status["nominatedNodeName"] = pod.nominated_node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def node_object(node: Node) -> dict[str, Any]:
    """The node as a v1.Node, from what eventsched keeps of it."""
    allocatable = {name: _quantity(name, amount) for name, amount in node.allocatable.items()}
    spec: dict[str, Any] = {}
    if node.unschedulable:
        spec["unschedulable"] = True
    if node.taints:
        spec["taints"] = [t.to_dict() for t in node.taints]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node.name, "uid": node.uid, "labels": dict(node.labels)},
        "spec": spec,
        "status": {
            "capacity": allocatable,
            "allocatable": dict(allocatable),
            "images": [i.to_dict() for i in node.images],
        },
    }
