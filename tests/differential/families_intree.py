"""The `intree` family: the in-tree volume limits EBSLimits, GCEPDLimits and AzureDiskLimits.

AWS EBS, GCE PD and Azure Disk volumes, in-line and through claims bound to
PersistentVolumes of those types, on nodes with and without a CSINode object
(with one, the in-tree plugin steps aside and NodeVolumeLimits counts the volume
under its migrated CSI driver), limits from node allocatable
(`attachable-volumes-aws-ebs`, ...), from the defaults (EBS 39, or 25 on Nitro
instance types; GCE PD and Azure Disk 16), or from the CSINode's driver count.
"""

from __future__ import annotations

import random
from typing import Any

from tests.differential.builders import pod
from tests.differential.families_basic import CPUS, Scenario, basic_nodes, scenario
from tests.differential.families_mixed import claim_volume, pvc, storage_class

#: type -> (volume source field, node allocatable limit key, in-tree provisioner, CSI driver)
TYPES: dict[str, tuple[str, str, str, str]] = {
    "ebs": (
        "awsElasticBlockStore",
        "attachable-volumes-aws-ebs",
        "kubernetes.io/aws-ebs",
        "ebs.csi.aws.com",
    ),
    "gce": (
        "gcePersistentDisk",
        "attachable-volumes-gce-pd",
        "kubernetes.io/gce-pd",
        "pd.csi.storage.gke.io",
    ),
    "azure": (
        "azureDisk",
        "attachable-volumes-azure-disk",
        "kubernetes.io/azure-disk",
        "disk.csi.azure.com",
    ),
}
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
#: Nitro ones (EBS limit 25) and others (39).
INSTANCE_TYPES = ("m5.large", "c5.xlarge", "t3.micro", "r5d.large", "m4.large", "c4.large")


def source(kind: str, volume_id: str) -> dict[str, Any]:
    """An in-tree volume source of `kind` naming `volume_id` (in-line or in a PV)."""
    field = TYPES[kind][0]
    if kind == "ebs":
        return {field: {"volumeID": volume_id}}
    if kind == "gce":
        return {field: {"pdName": volume_id}}
    uri = f"/subscriptions/s/resourceGroups/g/providers/Microsoft.Compute/disks/{volume_id}"
    return {field: {"diskName": volume_id, "diskURI": uri, "kind": "Managed"}}


def inline(kind: str, volume_id: str, name: str) -> dict[str, Any]:
    return {"name": name, **source(kind, volume_id)}


def intree_pv(name: str, kind: str, volume_id: str, claim: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "capacity": {"storage": "10Gi"},
        "accessModes": ["ReadWriteOnce"],
        "persistentVolumeReclaimPolicy": "Retain",
        "storageClassName": "manual",
        **source(kind, volume_id),
    }
    if claim is not None:
        spec["claimRef"] = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "namespace": "default",
            "name": claim,
        }
    status = {"phase": "Bound" if claim else "Available"}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": spec,
        "status": status,
    }


def csinode(name: str, driver: str | None, count: int | None) -> dict[str, Any]:
    """A CSINode: without drivers, or with `driver` (and its attach limit when `count`)."""
    drivers: list[dict[str, Any]] = []
    if driver is not None:
        entry: dict[str, Any] = {"name": driver, "nodeID": name}
        if count is not None:
            entry["allocatable"] = {"count": count}
        drivers.append(entry)
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSINode",
        "metadata": {"name": name},
        "spec": {"drivers": drivers},
    }


def _limits(
    rng: random.Random, nodes: list[dict[str, Any]], kinds: list[str], csi_share: float
) -> list[dict[str, Any]]:
    """Per node: maybe an allocatable limit per type, maybe a CSINode (returned)."""
    objects = []
    for nd in nodes:
        name = nd["metadata"]["name"]
        for kind in kinds:
            if rng.random() < 0.75:
                limit = str(rng.randint(1, 4))
                nd["status"]["allocatable"][TYPES[kind][1]] = limit
                nd["status"]["capacity"][TYPES[kind][1]] = limit
        if rng.random() < csi_share:
            driver = TYPES[kinds[0]][3] if rng.random() < 0.7 else None
            count = rng.randint(1, 3) if rng.random() < 0.7 else None
            objects.append(csinode(name, driver, count))
    return objects


def _ids(kind: str, n: int) -> list[str]:
    return [f"{kind}-vol-{i}" for i in range(n)]


def _inline_pods(
    rng: random.Random, names: list[str], kinds: list[str], count: int
) -> list[dict[str, Any]]:
    """Placed pods with 1-2 in-line volumes each, ids drawn from a small pool per type."""
    pods = []
    for i in range(count):
        kind = rng.choice(kinds)
        chosen = rng.sample(_ids(kind, 6), rng.randint(1, 2))
        volumes = [inline(kind, v, f"v{j}") for j, v in enumerate(chosen)]
        pods.append(pod(f"user-{i}", node_name=rng.choice(names), cpu="100m", volumes=volumes))
    return pods


def _pending(
    rng: random.Random, kinds: list[str], extra: list[dict[str, Any]], least: int = 1
) -> dict[str, Any]:
    """The pending pod: `extra` volumes, and `least` to 3 in-line volumes of each type."""
    volumes = list(extra)
    for kind in kinds:
        for v in rng.sample(_ids(kind, 6), rng.randint(least, 3)):
            volumes.append(inline(kind, v, f"p{len(volumes)}"))
    return pod("pending", cpu=rng.choice(CPUS), volumes=volumes)


def intree(rng: random.Random, index: int) -> Scenario:
    variant = index % 7
    kind = rng.choice(("ebs", "ebs", "gce", "azure"))
    nodes = basic_nodes(rng, rng.randint(2, 5))
    names = [nd["metadata"]["name"] for nd in nodes]
    objects: list[dict[str, Any]] = []
    pods: list[dict[str, Any]] = []
    extra: list[dict[str, Any]] = []
    kinds = [kind]
    least = 1
    if variant == 0:
        desc = f"in-line {kind} volumes against allocatable limits"
        objects += _limits(rng, nodes, kinds, 0.0)
        pods += _inline_pods(rng, names, kinds, rng.randint(0, 6))
    elif variant == 1:
        desc = f"in-line {kind} volumes, some nodes with a CSINode"
        objects += _limits(rng, nodes, kinds, 0.5)
        pods += _inline_pods(rng, names, kinds, rng.randint(0, 6))
    elif variant == 2:
        desc = f"{kind} volumes through claims bound to PersistentVolumes"
        objects.append(storage_class("manual", "Immediate"))
        objects += _limits(rng, nodes, kinds, 0.3)
        for i, vid in enumerate(_ids(kind, 5)):
            objects += [intree_pv(f"pv-{i}", kind, vid, f"c-{i}"), pvc(f"c-{i}", volume=f"pv-{i}")]
        for i in range(rng.randint(1, 5)):
            claims = rng.sample(range(5), rng.randint(1, 2))
            volumes = [claim_volume(f"c-{c}")[0] | {"name": f"d{c}"} for c in claims]
            pods.append(pod(f"user-{i}", node_name=rng.choice(names), cpu="100m", volumes=volumes))
        extra = [claim_volume(f"c-{rng.randrange(5)}")[0]]
    elif variant == 3:
        desc = f"unbound {kind} claims and claims of missing volumes on placed pods"
        provisioner = TYPES[kind][2] if rng.random() < 0.8 else "kubernetes.io/no-provisioner"
        objects.append(storage_class("intree", "Immediate", provisioner))
        objects += _limits(rng, nodes, kinds, 0.3)
        for i in range(rng.randint(1, 4)):
            claim = pvc(f"u-{i}", storage_class="intree")
            if rng.random() < 0.4:
                claim["spec"]["volumeName"] = f"gone-{i}"
            objects.append(claim)
            pods.append(
                pod(
                    f"user-{i}",
                    node_name=rng.choice(names),
                    cpu="100m",
                    volumes=claim_volume(f"u-{i}"),
                )
            )
    elif variant == 4:
        desc = f"default {kind} limits (EBS by instance type)"
        fill = (23, 24) if kind == "ebs" else (14, 15)
        least = 2
        for n, nd in enumerate(nodes):
            if kind == "ebs" and rng.random() < 0.85:
                nd["metadata"]["labels"][INSTANCE_TYPE] = rng.choice(INSTANCE_TYPES)
            vids = [f"{nd['metadata']['name']}-{j}" for j in range(rng.randint(*fill))]
            volumes = [inline(kind, v, f"v{j}") for j, v in enumerate(vids)]
            pods.append(pod(f"full-{n}", node_name=nd["metadata"]["name"], volumes=volumes))
    elif variant == 5:
        other = rng.choice([k for k in TYPES if k != kind])
        kinds = [kind, other]
        desc = f"in-line {kind} and {other} volumes together"
        objects += _limits(rng, nodes, kinds, 0.25)
        pods += _inline_pods(rng, names, kinds, rng.randint(1, 6))
    else:
        desc = f"in-line {kind} volumes, CSINode driver limits on some nodes, allocatable on others"
        driver, key = TYPES[kind][3], TYPES[kind][1]
        for nd in nodes:
            name = nd["metadata"]["name"]
            if rng.random() < 0.5:
                objects.append(csinode(name, driver, rng.randint(1, 3)))
            else:
                nd["status"]["allocatable"][key] = nd["status"]["capacity"][key] = "2"
        pods += _inline_pods(rng, names, kinds, rng.randint(1, 6))
    pending = _pending(rng, kinds, extra, least)
    return scenario(desc, nodes, pods, pending, objects)
