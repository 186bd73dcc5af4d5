"""Scenario families of the volume plugins, and mixes of every family's features."""

from __future__ import annotations

import random
from typing import Any

from tests.differential.builders import HOSTNAME, IMAGE, container, pod, taint
from tests.differential.families_basic import (
    CPUS,
    IMAGES,
    MEMS,
    TAINTS,
    TOLERATIONS,
    ZONES,
    Scenario,
    basic_nodes,
    scenario,
)
from tests.differential.families_pods import (
    TEAM_NAMESPACES,
    _constraint,
    _dedup,
    _labelled_pods,
    _pod_affinity,
    _port,
)

DRIVER = "csi.example.com"

# -- volumes ----------------------------------------------------------------------------------


def storage_class(
    name: str, mode: str, provisioner: str = "kubernetes.io/no-provisioner"
) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "volumeBindingMode": mode,
    }


def pv(
    name: str,
    *,
    storage_class: str = "manual",
    claim: str | None = None,
    labels: dict[str, str] | None = None,
    modes: tuple[str, ...] = ("ReadWriteOnce",),
    on_nodes: list[str] | None = None,
    csi: bool = False,
    size: str = "10Gi",
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "capacity": {"storage": size},
        "accessModes": list(modes),
        "persistentVolumeReclaimPolicy": "Retain",
        "storageClassName": storage_class,
    }
    if csi:
        spec["csi"] = {"driver": DRIVER, "volumeHandle": f"handle-{name}"}
    elif on_nodes is not None:
        spec["local"] = {"path": f"/mnt/{name}"}
        spec["nodeAffinity"] = {
            "required": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": HOSTNAME, "operator": "In", "values": on_nodes}]}
                ]
            }
        }
    else:
        spec["hostPath"] = {"path": f"/tmp/{name}"}
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = labels
    out: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": meta,
        "spec": spec,
    }
    if claim is not None:
        spec["claimRef"] = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "namespace": "default",
            "name": claim,
        }
        out["status"] = {"phase": "Bound"}
    else:
        out["status"] = {"phase": "Available"}
    return out


def pvc(
    name: str,
    *,
    storage_class: str = "manual",
    volume: str | None = None,
    modes: tuple[str, ...] = ("ReadWriteOnce",),
    size: str = "5Gi",
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "accessModes": list(modes),
        "resources": {"requests": {"storage": size}},
        "storageClassName": storage_class,
    }
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    out: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": meta,
        "spec": spec,
    }
    if volume is not None:
        spec["volumeName"] = volume
        meta["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
        out["status"] = {
            "phase": "Bound",
            "accessModes": list(modes),
            "capacity": {"storage": "10Gi"},
        }
    return out


def claim_volume(claim: str) -> list[dict[str, Any]]:
    return [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]


def csinode(name: str, count: int) -> dict[str, Any]:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": name},
        "spec": {"drivers": [{"name": DRIVER, "nodeID": name, "allocatable": {"count": count}}]},
    }


def volumes(rng: random.Random, index: int) -> Scenario:
    kind = index % 7
    nodes = basic_nodes(rng, rng.randint(2, 5))
    names = [nd["metadata"]["name"] for nd in nodes]
    objects: list[dict[str, Any]] = [storage_class("manual", "Immediate")]
    pods: list[dict[str, Any]] = []
    cpu = rng.choice(CPUS)
    claim = "data"
    if kind == 0:
        desc = "claim bound to a volume with a zone label"
        zone = rng.choice(ZONES)
        labels = {"topology.kubernetes.io/zone": zone}
        if rng.random() < 0.4:
            labels["topology.kubernetes.io/region"] = "region-1"
        objects += [pv("pv-0", claim=claim, labels=labels), pvc(claim, volume="pv-0")]
    elif kind == 1:
        desc = "claim bound to a local volume with node affinity"
        on = rng.sample(names, rng.randint(1, 2))
        objects += [pv("pv-0", claim=claim, on_nodes=sorted(on)), pvc(claim, volume="pv-0")]
    elif kind == 2:
        desc = "ReadWriteOncePod claim"
        modes = ("ReadWriteOncePod",)
        objects += [pv("pv-0", claim=claim, modes=modes), pvc(claim, volume="pv-0", modes=modes)]
        if rng.random() < 0.7:
            pods.append(
                pod("user", node_name=rng.choice(names), cpu="100m", volumes=claim_volume(claim))
            )
    elif kind == 3:
        desc = "WaitForFirstConsumer claim and local volumes"
        objects = [storage_class("local", "WaitForFirstConsumer")]
        for i in range(rng.randint(0, 2)):
            on = rng.sample(names, 1)
            size = rng.choice(("2Gi", "10Gi"))
            objects.append(pv(f"pv-{i}", storage_class="local", on_nodes=on, size=size))
        objects.append(pvc(claim, storage_class="local"))
    elif kind == 4:
        desc = "unbound claim with immediate binding"
        objects.append(pvc(claim))
    elif kind == 5:
        desc = "CSI volume limits from CSINode"
        limit = rng.randint(1, 2)
        for i, name in enumerate(names):
            objects.append(csinode(name, limit if i % 2 == 0 else limit + 1))
        for i in range(rng.randint(1, 4)):
            objects += [
                pv(f"pv-{i}", claim=f"used-{i}", csi=True),
                pvc(f"used-{i}", volume=f"pv-{i}"),
            ]
            pods.append(
                pod(
                    f"user-{i}",
                    node_name=rng.choice(names),
                    cpu="100m",
                    volumes=claim_volume(f"used-{i}"),
                )
            )
        objects += [pv("pv-new", claim=claim, csi=True), pvc(claim, volume="pv-new")]
    else:
        desc = "claim that does not exist"
        claim = "missing"
    pending = pod("pending", cpu=cpu, volumes=claim_volume(claim))
    return scenario(desc, nodes, pods, pending, objects)


# -- mixes ----------------------------------------------------------------------------------


def mixed(rng: random.Random, index: int) -> Scenario:
    """Several families' features at once: resources, taints, node affinity, images, ports,
    spread and inter-pod affinity, each with some probability."""
    nodes = basic_nodes(rng, rng.randint(2, 8))
    for nd in nodes:
        if rng.random() < 0.3:
            nd["spec"] = {"taints": [rng.choice(TAINTS)]}
        if rng.random() < 0.5:
            nd["metadata"]["labels"]["disktype"] = rng.choice(("ssd", "hdd"))
        if rng.random() < 0.4:
            held = rng.sample(IMAGES, rng.randint(1, 2))
            nd["status"]["images"] = [{"names": [n], "sizeBytes": s} for n, s in held]
        if rng.random() < 0.1:
            nd.setdefault("spec", {})["unschedulable"] = True
    pods = _labelled_pods(rng, nodes, rng.randint(0, 8), ("default", "team-a"))
    for p in pods:
        c = p["spec"]["containers"][0]
        c["resources"]["requests"]["cpu"] = rng.choice(CPUS)
        c["resources"]["requests"]["memory"] = rng.choice(MEMS)
        if rng.random() < 0.15:
            c["ports"] = _dedup([_port(rng)])
    spec: dict[str, Any] = {}
    if rng.random() < 0.4:
        spec["tolerations"] = rng.sample(TOLERATIONS, rng.randint(1, 2))
    if rng.random() < 0.3:
        spec["nodeSelector"] = {"disktype": rng.choice(("ssd", "hdd"))}
    affinity: dict[str, Any] = {}
    if rng.random() < 0.3:
        affinity["nodeAffinity"] = {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": rng.randint(1, 100),
                    "preference": {
                        "matchExpressions": [
                            {"key": "disktype", "operator": "In", "values": ["ssd"]}
                        ]
                    },
                }
            ]
        }
    if rng.random() < 0.3:
        affinity["podAffinity"] = _pod_affinity(rng, rng.randint(0, 1), rng.randint(0, 1))
    if rng.random() < 0.3:
        affinity["podAntiAffinity"] = _pod_affinity(rng, rng.randint(0, 1), rng.randint(0, 1))
    affinity = {k: v for k, v in affinity.items() if v}
    if affinity:
        spec["affinity"] = affinity
    if rng.random() < 0.35:
        spec["topologySpreadConstraints"] = [_constraint(rng, index)]
    ports = _dedup([_port(rng)]) if rng.random() < 0.2 else None
    image = rng.choice([name for name, _ in IMAGES]) if rng.random() < 0.5 else None
    main = container(
        cpu=rng.choice((*CPUS, "3")),
        memory=rng.choice(MEMS),
        ports=ports,
        image=image or IMAGE,
    )
    pending = pod("pending", labels={"app": rng.choice(("web", "db"))}, containers=[main], **spec)
    if rng.random() < 0.2:
        taints = nodes[0].setdefault("spec", {}).setdefault("taints", [])
        if not any(t["key"] == "flaky" for t in taints):
            taints.append(taint("flaky", "PreferNoSchedule"))
    return scenario("a mix of features", nodes, pods, pending, namespaces=[TEAM_NAMESPACES[0]])
