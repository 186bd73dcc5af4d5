"""A small builder for hand-written preemption scenarios (cases_*.py).

Every assigned pod gets a distinct `status.startTime` (one minute apart, in the order the
case adds them, unless given), since kube-scheduler reads a pod without one as started
*now* (`util.GetPodStartTime`), which would make the start-time criterion depend on the
clock. Priorities come from PriorityClasses named after their value (`prio-7`, `prio-m5`
for -5; `prio-never-7` with preemptionPolicy Never), created with the scenario; the pod
carries `priorityClassName` and the matching `spec.priority` (and `preemptionPolicy:
Never` where its class says so), which the Priority admission plugin accepts unchanged.
"""

from __future__ import annotations

from typing import Any

from tests.differential.builders import HOSTNAME, container, node, pod

Manifest = dict[str, Any]


def class_name(value: int, never: bool = False) -> str:
    number = f"m{-value}" if value < 0 else str(value)
    return f"prio-never-{number}" if never else f"prio-{number}"


def priority_class(value: int, never: bool = False) -> Manifest:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": class_name(value, never)},
        "value": value,
        "preemptionPolicy": "Never" if never else "PreemptLowerPriority",
    }


def start_time(minute: int) -> str:
    return f"2026-01-01T{minute // 60:02d}:{minute % 60:02d}:00Z"


class Case:
    """One scenario: nodes, assigned pods, budgets, and pending pods created in order."""

    def __init__(self, slug: str, description: str) -> None:
        self.slug = slug
        self.description = description
        self.namespaces: list[dict[str, Any]] = []
        self.nodes: list[Manifest] = []
        self.pods: list[Manifest] = []
        self.pending: list[Manifest] = []
        self.budgets: list[Manifest] = []
        self.classes: dict[str, Manifest] = {}
        self.hold: list[str] = []
        self.ungate: list[str] = []
        self._minute = 0

    def namespace(self, name: str) -> Case:
        self.namespaces.append({"name": name, "labels": {}})
        return self

    def node(self, name: str, cpu: str = "4", **kw: Any) -> Case:
        self.nodes.append(node(name, cpu=cpu, memory=kw.pop("memory", "8Gi"), **kw))
        return self

    def _priority(self, spec: dict[str, Any], prio: int | None, never: bool) -> None:
        if prio is None:
            return
        klass = priority_class(prio, never)
        self.classes[klass["metadata"]["name"]] = klass
        spec["priorityClassName"] = klass["metadata"]["name"]
        spec["priority"] = prio
        if never:
            spec["preemptionPolicy"] = "Never"

    def run(
        self,
        name: str,
        on: str,
        prio: int | None,
        cpu: str | None = "1",
        *,
        start: int | None = None,
        **kw: Any,
    ) -> Case:
        """An assigned pod (`spec.nodeName`), started at `start` minutes (or the next)."""
        manifest = _pod(name, on, cpu, **kw)
        self._priority(manifest["spec"], prio, False)
        self._minute = start if start is not None else self._minute + 1
        manifest["status"] = {"startTime": start_time(self._minute)}
        self.pods.append(manifest)
        return self

    def pend(self, name: str, prio: int | None, cpu: str | None = "1", **kw: Any) -> Case:
        """A pending pod; `gates` (names) become its `spec.schedulingGates`."""
        never = bool(kw.pop("never", False))
        gates = kw.pop("gates", None)
        if gates:
            kw["schedulingGates"] = [{"name": g} for g in gates]
        manifest = _pod(name, None, cpu, **kw)
        self._priority(manifest["spec"], prio, never)
        self.pending.append(manifest)
        return self

    def pdb(
        self,
        name: str,
        selector: dict[str, Any] | None,
        allowed: int,
        *,
        namespace: str = "default",
        disrupted: list[str] | None = None,
        spec: dict[str, Any] | None = None,
        healthy: int | None = None,
    ) -> Case:
        """A policy/v1 budget with the status a disruption controller would have written
        (`spec`: minAvailable or maxUnavailable, default minAvailable 1; `healthy`: the
        status' currentHealthy and expectedPods, default allowed + 1)."""
        spec = dict(spec) if spec is not None else {"minAvailable": 1}
        if selector is not None:
            spec["selector"] = selector
        status: dict[str, Any] = {
            "disruptionsAllowed": allowed,
            "currentHealthy": healthy if healthy is not None else allowed + 1,
            "desiredHealthy": (healthy if healthy is not None else allowed + 1) - allowed,
            "expectedPods": healthy if healthy is not None else allowed + 1,
            "observedGeneration": 1,
        }
        if disrupted:
            status["disruptedPods"] = {p: "2026-01-01T00:00:00Z" for p in disrupted}
        self.budgets.append(
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": name, "namespace": namespace},
                "spec": spec,
                "status": status,
            }
        )
        return self

    def holding(self, preemptor: str) -> Case:
        """The recorder's kubelet keeps `preemptor`'s victims terminating until the next
        pending pod has been decided (so that one sees `preemptor` nominated)."""
        self.hold.append(preemptor)
        return self

    def ungating(self, name: str) -> Case:
        """After the last pending pod was decided, the recorder removes gated `name`'s
        `spec.schedulingGates` (in the order of these calls) and waits for its decision."""
        self.ungate.append(name)
        return self

    def build(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": f"preemption/{self.slug}",
            "description": self.description,
            "namespaces": self.namespaces,
            "objects": [*self.classes.values(), *self.budgets],
            "nodes": self.nodes,
            "pods": self.pods,
            "pending": self.pending,
        }
        if self.hold:
            out["hold"] = self.hold
        if self.ungate:
            out["ungate"] = self.ungate
        return out


def _pod(name: str, on: str | None, cpu: str | None, **kw: Any) -> Manifest:
    namespace = kw.pop("namespace", "default")
    labels = kw.pop("labels", None)
    memory = kw.pop("memory", None)
    extra = kw.pop("extra", None)
    ports = kw.pop("ports", None)
    containers = [container(cpu=cpu, memory=memory, extra=extra, ports=ports)]
    return pod(name, namespace=namespace, node_name=on, labels=labels, containers=containers, **kw)


def host_port(port: int) -> list[dict[str, Any]]:
    return [{"containerPort": port, "hostPort": port, "protocol": "TCP"}]


def anti_affinity(labels: dict[str, str]) -> dict[str, Any]:
    """Required pod anti-affinity to pods with `labels`, per node."""
    return {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": labels}, "topologyKey": HOSTNAME}
            ]
        }
    }


def affinity(labels: dict[str, str]) -> dict[str, Any]:
    return {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": labels}, "topologyKey": HOSTNAME}
            ]
        }
    }
