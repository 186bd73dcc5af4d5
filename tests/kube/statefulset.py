"""The StatefulSet controller, as far as scheduling a set with claim templates needs it.

The real kube-apiserver runs no controllers here, so a test creates the
StatefulSet and plays its controller (OrderedReady): for each ordinal the claim
`<template>-<set>-<N>` from volumeClaimTemplates, then the pod `<set>-<N>` with
the template's spec, the set's labels and an ownerReference to it, and the next
ordinal once the pod is bound (the test plays kubelet too: Running and Ready).
"""

from __future__ import annotations

from typing import Any

from tests.kube.realserver import KubeServer
from tests.kube.test_kube_scheduler import node_of

HOSTNAME = "kubernetes.io/hostname"
REPLICAS = 3


def stateful_set(scheduler: str) -> dict[str, Any]:
    """web: 3 replicas, one per node (required anti-affinity), each with a 5Gi claim of the
    WaitForFirstConsumer class `fast` from its volumeClaimTemplates."""
    labels = {"app": "web"}
    anti = {"labelSelector": {"matchLabels": labels}, "topologyKey": HOSTNAME}
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "serviceName": "web",
            "replicas": REPLICAS,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "schedulerName": scheduler,
                    "affinity": {
                        "podAntiAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": [anti]
                        }
                    },
                    "containers": [
                        {
                            "name": "c",
                            "image": "pause",
                            "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                            "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                        }
                    ],
                },
            },
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "storageClassName": "fast",
                        "resources": {"requests": {"storage": "5Gi"}},
                    },
                }
            ],
        },
    }


def play_stateful_set_controller(server: KubeServer, scheduler: str) -> dict[str, str]:
    """The StatefulSet controller, OrderedReady: for each ordinal its claim
    `data-web-N` from the template, then pod `web-N` (owned by the set) once web-(N-1)
    runs and is ready, which the test also plays (no kubelet): pod -> node."""
    owner = server.create(stateful_set(scheduler))
    template = owner["spec"]["template"]
    placed: dict[str, str] = {}
    for ordinal in range(REPLICAS):
        name = f"web-{ordinal}"
        claim_name = f"data-{name}"
        server.create(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": claim_name, "namespace": "default", "labels": {"app": "web"}},
                "spec": owner["spec"]["volumeClaimTemplates"][0]["spec"],
            }
        )
        spec = {
            **template["spec"],
            "hostname": name,
            "subdomain": "web",
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim_name}}],
        }
        labels = {
            **template["metadata"]["labels"],
            "statefulset.kubernetes.io/pod-name": name,
            "apps.kubernetes.io/pod-index": str(ordinal),
        }
        reference = {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "name": "web",
            "uid": owner["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
        server.create(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": name,
                    "namespace": "default",
                    "labels": labels,
                    "ownerReferences": [reference],
                },
                "spec": spec,
                "status": {"phase": "Pending"},
            }
        )
        placed[name] = server.wait_for(lambda n=name: node_of(server, n), timeout=60)
        server.patch(
            "pods",
            name,
            {
                "status": {
                    "phase": "Running",
                    "conditions": [{"type": "Ready", "status": "True"}],
                }
            },
            "default",
        )
    return placed
