"""The breadth suite's preemption scenarios: gen/<PREEMPTION_START> .. gen/<COUNT - 1>.

Each is a preemption scenario in the hand-made suite's format (preemption/builder.py),
drawn from the rng seeded with "gen/<SEED>/<i>" like every generated scenario: nodes of
several sizes, zones, labels and taints (some cordoned); running pods of several
priorities, start times, labels and namespaces (some holding a host port, some with
anti-affinity); budgets selecting some of them (minAvailable or maxUnavailable, some
allowing no disruption, some with a pod already disrupted, some with an empty selector);
then one to three pending pods, most of a higher priority (some with preemptionPolicy
Never, a zone selector, tolerations, node affinity, topology spread, pod affinity or
anti-affinity, a host port), some of them created with scheduling gates and, once the
others were decided, ungated in turn (some stay gated).

They are recorded with DefaultPreemption enabled in kube-scheduler's default profile
(`record_generated.py` uses the preemption recorder for them) and replayed through
preemption/run.py.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from tests.differential.builders import HOSTNAME, ZONE, taint
from tests.differential.preemption.builder import (
    Case,
    affinity,
    anti_affinity,
    host_port,
)

#: The first generated scenario that is a preemption scenario.
PREEMPTION_START = 4000

_RUNNING_PRIORITIES = (-5, 0, 1, 1, 2, 5, 10)
_PENDING_PRIORITIES = (1, 5, 10, 10, 20, 100)
_ZONES = ("zone-a", "zone-b", "zone-c")
_APPS = ("web", "db", "batch")
_TEAM = "team"
_DISK = "disk"
_GATE = "example.com/hold"
_PORT = 8080


def is_preemption(index: int) -> bool:
    return index >= PREEMPTION_START


@dataclass
class _Node:
    name: str
    cpu: int  # millicores
    memory: int  # Gi
    used_cpu: int = 0
    used_memory: int = 0
    port: bool = False


@dataclass
class _Draw:
    rng: random.Random
    case: Case
    nodes: list[_Node] = field(default_factory=list)
    #: namespace -> the running pods' (name, app label)
    running: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    spaces: list[str] = field(default_factory=lambda: ["default"])
    tainted: bool = False


def generate_preemption(index: int, seed: int) -> dict[str, Any]:
    """Scenario `gen/<index>` (index >= PREEMPTION_START), the same on every run."""
    rng = random.Random(f"gen/{seed}/{index}")
    draw = _Draw(rng, Case(str(index), ""))
    if rng.random() < 0.3:
        draw.case.namespace(_TEAM)
        draw.spaces.append(_TEAM)
    _nodes(draw)
    _running(draw)
    budgets = _budgets(draw)
    pending, gated = _pending(draw)
    ungated = [name for name in gated if rng.random() < 0.85]
    rng.shuffle(ungated)
    for name in ungated:
        draw.case.ungating(name)
    running = sum(len(v) for v in draw.running.values())
    draw.case.description = (
        f"preemption: {len(draw.nodes)} nodes, {running} running, {budgets} budgets, "
        f"{pending} pending ({len(gated)} gated, {len(ungated)} ungated)"
    )
    return {**draw.case.build(), "id": f"gen/{index}"}


def _nodes(draw: _Draw) -> None:
    rng = draw.rng
    zones = _ZONES[: rng.randint(1, 3)]
    for i in range(rng.randint(1, 4)):
        name = f"node-{i}"
        cpu = rng.choice((2, 4, 4, 8))
        memory = rng.choice((4, 8, 16))
        kw: dict[str, Any] = {"memory": f"{memory}Gi"}
        if rng.random() < 0.85:
            kw["zone"] = rng.choice(zones)
        if rng.random() < 0.3:
            kw["labels"] = {_DISK: rng.choice(("ssd", "hdd"))}
        if rng.random() < 0.15:
            kw["taints"] = [
                taint("dedicated", rng.choice(("NoSchedule", "PreferNoSchedule")), "gpu")
            ]
            draw.tainted = True
        if rng.random() < 0.06:
            kw["unschedulable"] = True
        draw.case.node(name, cpu=str(cpu), **kw)
        draw.nodes.append(_Node(name, cpu * 1000, memory))


def _running(draw: _Draw) -> None:
    rng = draw.rng
    count = 0
    starts = rng.sample(range(1, 500), 40)
    for n in draw.nodes:
        for _ in range(rng.randint(0, 4)):
            free = n.cpu - n.used_cpu
            if free <= 0:
                break
            want = rng.choice((250, 500, 1000, 1000, 1500, 2000))
            cpu = free if rng.random() < 0.25 else min(want, free)
            name = f"r{count}"
            app = rng.choice(_APPS)
            space = rng.choice(draw.spaces)
            kw: dict[str, Any] = {"labels": {"app": app}, "namespace": space}
            if rng.random() < 0.25 and n.memory - n.used_memory >= 2:
                memory = rng.choice((1, 2))
                kw["memory"] = f"{memory}Gi"
                n.used_memory += memory
            if not n.port and rng.random() < 0.12:
                kw["ports"] = host_port(_PORT)
                n.port = True
            if rng.random() < 0.08:
                kw["affinity"] = anti_affinity({"app": "web"})
            if rng.random() < 0.1:
                kw["tolerations"] = [
                    {"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}
                ]
            prio = rng.choice(_RUNNING_PRIORITIES)
            draw.case.run(name, n.name, prio, f"{cpu}m", start=starts[count], **kw)
            n.used_cpu += cpu
            draw.running.setdefault(space, []).append((name, app))
            count += 1


def _budgets(draw: _Draw) -> int:
    rng = draw.rng
    made = 0
    if rng.random() < 0.45:
        return made
    for i in range(rng.randint(1, 2)):
        space = rng.choice(draw.spaces)
        app = rng.choice(_APPS)
        matched = [name for name, label in draw.running.get(space, []) if label == app]
        selector: dict[str, Any] = {"matchLabels": {"app": app}}
        if rng.random() < 0.08:
            selector = {}  # upstream's preemption counts no pod against an empty selector
            matched = [name for name, _ in draw.running.get(space, [])]
        healthy = len(matched)
        allowed = min(rng.choice((0, 0, 1, 2)), healthy)
        if rng.random() < 0.5:
            spec: dict[str, Any] = {"minAvailable": rng.choice((1, 2, "50%"))}
        else:
            spec = {"maxUnavailable": rng.choice((0, 1, "50%"))}
        disrupted = [rng.choice(matched)] if matched and rng.random() < 0.25 else None
        draw.case.pdb(
            f"budget-{i}",
            selector,
            allowed,
            namespace=space,
            disrupted=disrupted,
            spec=spec,
            healthy=healthy,
        )
        made += 1
    return made


def _pending(draw: _Draw) -> tuple[int, list[str]]:
    rng = draw.rng
    gated: list[str] = []
    count = rng.randint(1, 3)
    for i in range(count):
        name = f"p{i}"
        app = rng.choice(_APPS)
        kw: dict[str, Any] = {"labels": {"app": app}}
        if len(draw.spaces) > 1 and rng.random() < 0.2:
            kw["namespace"] = _TEAM
        if rng.random() < 0.15:
            kw["never"] = True
        if rng.random() < 0.2:
            kw["memory"] = f"{rng.choice((1, 2, 4))}Gi"
        _placement(draw, kw, app)
        if rng.random() < 0.3:
            kw["gates"] = [_GATE] if rng.random() < 0.7 else [_GATE, "example.com/quota"]
            gated.append(name)
        cpu = rng.choice(("500m", "1", "1", "2", "2", "3", "4"))
        draw.case.pend(name, rng.choice(_PENDING_PRIORITIES), cpu, **kw)
    return count, gated


def _placement(draw: _Draw, kw: dict[str, Any], app: str) -> None:
    """What else constrains the pending pod: zones, taints, node labels, spread, pods."""
    rng = draw.rng
    if rng.random() < 0.15:
        kw["nodeSelector"] = {ZONE: rng.choice(_ZONES[:2])}
    if draw.tainted and rng.random() < 0.4:
        kw["tolerations"] = [
            {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
        ]
    if rng.random() < 0.12:
        kw["affinity"] = _node_affinity(rng)
    elif rng.random() < 0.12:
        kw["affinity"] = anti_affinity({"app": rng.choice(("db", app))})
    elif rng.random() < 0.06:
        kw["affinity"] = affinity({"app": rng.choice(_APPS)})
    if rng.random() < 0.15:
        kw["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": rng.choice((ZONE, HOSTNAME)),
                "whenUnsatisfiable": rng.choice(("DoNotSchedule", "ScheduleAnyway")),
                "labelSelector": {"matchLabels": {"app": app}},
            }
        ]
    if rng.random() < 0.1:
        kw["ports"] = host_port(_PORT)


def _node_affinity(rng: random.Random) -> dict[str, Any]:
    term = {"matchExpressions": [{"key": _DISK, "operator": "In", "values": ["ssd"]}]}
    if rng.random() < 0.5:
        return {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
            }
        }
    return {
        "nodeAffinity": {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": rng.choice((1, 50, 100)), "preference": term}
            ]
        }
    }
