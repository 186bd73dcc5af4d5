"""Scenario families of the plugins that read other pods: host ports, topology spread and
inter-pod affinity."""

from __future__ import annotations

import random
from typing import Any

from tests.differential.builders import (
    HOSTNAME,
    ZONE,
    container,
    namespace,
    node,
    owner_ref,
    pod,
    replica_set,
    service,
    taint,
)
from tests.differential.families_basic import CPUS, ZONES, Scenario, basic_nodes, scenario

APPS = ("web", "db", "cache")

# -- host ports -----------------------------------------------------------------------------


def _port(rng: random.Random) -> dict[str, Any]:
    port: dict[str, Any] = {
        "containerPort": rng.choice((80, 8080, 53)),
        "hostPort": rng.choice((8080, 8080, 53, 9000)),
        "protocol": rng.choice(("TCP", "TCP", "UDP")),
    }
    if rng.random() < 0.3:
        port["hostIP"] = rng.choice(("127.0.0.1", "10.0.0.1", "0.0.0.0"))
    return port


def ports(rng: random.Random, index: int) -> Scenario:
    nodes = basic_nodes(rng, rng.randint(2, 6))
    pods = []
    for i in range(rng.randint(1, 6)):
        target = rng.choice(nodes)["metadata"]["name"]
        ps = [_port(rng) for _ in range(rng.randint(1, 2))]
        pods.append(
            pod(f"run-{i}", node_name=target, containers=[container(cpu="100m", ports=_dedup(ps))])
        )
    wanted = _dedup([_port(rng) for _ in range(rng.randint(1, 2))])
    extra = [container("side", cpu="100m", ports=[{"containerPort": 9090, "protocol": "TCP"}])]
    pending = pod("pending", containers=[container(cpu=rng.choice(CPUS), ports=wanted), *extra])
    return scenario("host ports", nodes, pods, pending)


def _dedup(ports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One port per (containerPort, protocol) within a container, as validation requires,
    and one per (hostPort, protocol, hostIP)."""
    seen: set[tuple[Any, ...]] = set()
    host: set[tuple[Any, ...]] = set()
    out = []
    for p in ports:
        key = (p["containerPort"], p["protocol"])
        hkey = (p["hostPort"], p["protocol"], p.get("hostIP", ""))
        if key not in seen and hkey not in host:
            seen.add(key)
            host.add(hkey)
            out.append(p)
    return out


# -- topology spread ----------------------------------------------------------------------


def _spread_nodes(rng: random.Random, n: int) -> list[dict[str, Any]]:
    nodes = []
    for i in range(n):
        zone = None if rng.random() < 0.12 else ZONES[rng.randrange(len(ZONES))]
        labels = {"rack": f"rack-{i % 2}"} if rng.random() < 0.6 else {}
        if rng.random() < 0.5:
            labels["disktype"] = rng.choice(("ssd", "hdd"))
        taints = [taint("dedicated", "NoSchedule", "infra")] if rng.random() < 0.15 else None
        nodes.append(
            node(f"node-{i}", cpu="4", memory="8Gi", zone=zone, labels=labels, taints=taints)
        )
    return nodes


def _labelled_pods(
    rng: random.Random,
    nodes: list[dict[str, Any]],
    count: int,
    namespaces: tuple[str, ...] = ("default",),
) -> list[dict[str, Any]]:
    pods = []
    for i in range(count):
        target = rng.choice(nodes)["metadata"]["name"]
        labels = {"app": rng.choice(APPS)}
        if rng.random() < 0.4:
            labels["pod-template-hash"] = rng.choice(("h1", "h2"))
        pods.append(
            pod(
                f"run-{i}",
                namespace=rng.choice(namespaces),
                node_name=target,
                cpu="100m",
                labels=labels,
            )
        )
    return pods


def _constraint(rng: random.Random, index: int) -> dict[str, Any]:
    key = rng.choice((ZONE, HOSTNAME, ZONE, "rack"))
    when = rng.choice(("DoNotSchedule", "ScheduleAnyway"))
    c: dict[str, Any] = {
        "maxSkew": rng.choice((1, 1, 2, 3)),
        "topologyKey": key,
        "whenUnsatisfiable": when,
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
    if when == "DoNotSchedule" and rng.random() < 0.25:
        c["minDomains"] = rng.choice((2, 3, 4))
    if rng.random() < 0.25:
        c["nodeAffinityPolicy"] = rng.choice(("Honor", "Ignore"))
    if rng.random() < 0.25:
        c["nodeTaintsPolicy"] = rng.choice(("Honor", "Ignore"))
    if rng.random() < 0.2:
        c["matchLabelKeys"] = ["pod-template-hash"]
    if rng.random() < 0.15:
        c["labelSelector"] = {
            "matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "db"]}]
        }
    return c


def spread(rng: random.Random, index: int) -> Scenario:
    nodes = _spread_nodes(rng, rng.randint(2, 8))
    pods = _labelled_pods(rng, nodes, rng.randint(0, 8))
    labels = {"app": "web", "pod-template-hash": rng.choice(("h1", "h2"))}
    objects: list[dict[str, Any]] = []
    if index % 7 == 6:
        # No constraints: the system default ones apply to a pod a Service or ReplicaSet selects.
        if rng.random() < 0.5:
            objects.append(service("web", {"app": "web"}))
            pending = pod("pending", cpu="100m", labels=labels)
        else:
            objects.append(replica_set("web-rs", {"app": "web"}))
            for p in pods:
                if p["metadata"]["labels"].get("app") == "web":
                    p["metadata"]["ownerReferences"] = [owner_ref("ReplicaSet", "web-rs")]
            pending = pod(
                "pending", cpu="100m", labels=labels, owner=owner_ref("ReplicaSet", "web-rs")
            )
        return scenario("default spreading of a selected pod", nodes, pods, pending, objects)
    constraints = [_constraint(rng, index) for _ in range(rng.choice((1, 1, 2)))]
    keys = {(c["topologyKey"], c["whenUnsatisfiable"]) for c in constraints}
    if len(keys) < len(constraints):  # one constraint per (key, when), as validation requires
        constraints = constraints[:1]
    selector = {"disktype": "ssd"} if rng.random() < 0.2 else None
    tolerations = [{"key": "dedicated", "operator": "Exists"}] if rng.random() < 0.2 else None
    pending = pod(
        "pending",
        cpu="100m",
        labels=labels,
        topologySpreadConstraints=constraints,
        nodeSelector=selector,
        tolerations=tolerations,
    )
    return scenario("topology spread constraints", nodes, pods, pending, objects)


# -- inter-pod affinity ---------------------------------------------------------------------

TEAM_NAMESPACES = (
    namespace("team-a", {"team": "a", "env": "prod"}),
    namespace("team-b", {"team": "b", "env": "prod"}),
)


def _term(rng: random.Random) -> dict[str, Any]:
    term: dict[str, Any] = {
        "labelSelector": {"matchLabels": {"app": rng.choice(APPS)}},
        "topologyKey": rng.choice((HOSTNAME, ZONE, ZONE)),
    }
    r = rng.random()
    if r < 0.2:
        term["namespaces"] = rng.sample(["default", "team-a", "team-b"], rng.randint(1, 2))
    elif r < 0.35:
        term["namespaceSelector"] = rng.choice(
            ({"matchLabels": {"team": "a"}}, {"matchLabels": {"env": "prod"}}, {})
        )
    return term


def _pod_affinity(rng: random.Random, required: int, preferred: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if required:
        out["requiredDuringSchedulingIgnoredDuringExecution"] = [
            _term(rng) for _ in range(required)
        ]
    if preferred:
        out["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": rng.randint(1, 100), "podAffinityTerm": _term(rng)} for _ in range(preferred)
        ]
    return out


def affinity(rng: random.Random, index: int) -> Scenario:
    nodes = basic_nodes(rng, rng.randint(2, 7))
    spaces = ("default", "team-a", "team-b")
    pods = _labelled_pods(rng, nodes, rng.randint(0, 7), spaces)
    mode = index % 6
    pending_labels = {"app": rng.choice(APPS)}
    spec: dict[str, Any] = {}
    if mode == 0:
        desc = "required pod affinity"
        spec = {"podAffinity": _pod_affinity(rng, 1, 0)}
    elif mode == 1:
        desc = "required pod anti-affinity"
        spec = {"podAntiAffinity": _pod_affinity(rng, rng.randint(1, 2), 0)}
    elif mode == 2:
        desc = "preferred affinity and anti-affinity"
        spec = {
            "podAffinity": _pod_affinity(rng, 0, rng.randint(1, 2)),
            "podAntiAffinity": _pod_affinity(rng, 0, rng.randint(0, 2)),
        }
    elif mode == 3:
        desc = "existing pods' anti-affinity and affinity (symmetry)"
        for p in pods[:3]:
            term = {
                "labelSelector": {"matchLabels": {"app": pending_labels["app"]}},
                "topologyKey": rng.choice((HOSTNAME, ZONE)),
            }
            kind = rng.choice(("podAntiAffinity", "podAffinity"))
            block: dict[str, Any]
            if kind == "podAntiAffinity" and rng.random() < 0.6:
                block = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
            else:
                block = {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": rng.randint(1, 100), "podAffinityTerm": term}
                    ]
                }
            p["spec"]["affinity"] = {kind: block}
    elif mode == 4:
        desc = "first pod of a group: affinity to its own labels with no match"
        own = {"labelSelector": {"matchLabels": {"app": "solo"}}, "topologyKey": ZONE}
        pending_labels = {"app": rng.choice(("solo", "other"))}
        spec = {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [own]}}
    else:
        desc = "affinity and anti-affinity together"
        spec = {
            "podAffinity": _pod_affinity(rng, rng.randint(0, 1), rng.randint(0, 1)),
            "podAntiAffinity": _pod_affinity(rng, rng.randint(0, 1), rng.randint(0, 1)),
        }
        spec = {k: v for k, v in spec.items() if v}
    pending = pod(
        "pending",
        namespace=rng.choice(("default", "default", "team-a")),
        cpu=rng.choice(CPUS),
        labels=pending_labels,
        affinity=spec or None,
    )
    return scenario(desc, nodes, pods, pending, namespaces=list(TEAM_NAMESPACES))
