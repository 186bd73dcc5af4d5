"""Hand-written scenarios for scheduler-plugins' plugins under the chart's profile.

Built with the preemption suite's Case (nodes, assigned pods with distinct start times,
pending pods created one after another), plus ElasticQuotas. v0.28.9 reads a namespace's
quota only once a pod of it is placed (eventsched/plugins/capacityscheduling/known.py), so
most cases place a small pod (`seed`) in each quota namespace first. No quota is in `default`:
the recorder's sync probe is a pod there. Every pod has priority 0 unless a case says
otherwise, so DefaultPreemption (which the chart leaves enabled, ahead of
CapacityScheduling's PostFilter) finds no victims and CapacityScheduling's preemption
decides.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.differential.preemption.builder import Case
from tests.differential.schedplugins.numa import numa_cases

ANSWERS = Path(__file__).parent / "answers.json"


class QuotaCase(Case):
    """A Case with ElasticQuotas. Its namespaces are renamed `<tag>-<name>` when built
    (but `default`): v0.28.9 keeps what it read of a namespace's quota until it restarts,
    and the recorder's one scheduler serves every case, so each case needs namespaces no
    other case used."""

    def __init__(self, slug: str, description: str, tag: str) -> None:
        super().__init__(slug, description)
        self.tag = tag
        self.quotas: list[dict[str, Any]] = []

    def quota(
        self,
        namespace: str,
        min: dict[str, str] | None = None,
        max: dict[str, str] | None = None,
        name: str = "quota",
    ) -> QuotaCase:
        if namespace not in [n["name"] for n in self.namespaces]:
            self.namespace(namespace)
        spec: dict[str, Any] = {}
        if min is not None:
            spec["min"] = min
        if max is not None:
            spec["max"] = max
        self.quotas.append(
            {
                "apiVersion": "scheduling.x-k8s.io/v1alpha1",
                "kind": "ElasticQuota",
                "metadata": {"name": name, "namespace": namespace},
                "spec": spec,
            }
        )
        return self

    def seed(self, namespace: str, on: str = "node-0", cpu: str = "100m") -> QuotaCase:
        """A small assigned pod, so that the namespace's quota is known (module docstring)."""
        self.run(f"{namespace}-seed", on, None, cpu, namespace=namespace)
        return self

    def build(self) -> dict[str, Any]:
        out = super().build()
        out["id"] = f"schedplugins/{self.slug}"
        out["objects"] = [*out["objects"], *self.quotas]
        for ns in out["namespaces"]:
            ns["name"] = self._renamed(ns["name"])
        for obj in [*out["objects"], *out["pods"], *out["pending"]]:
            meta = obj["metadata"]
            if "namespace" in meta:
                meta["namespace"] = self._renamed(meta["namespace"])
        return out

    def _renamed(self, namespace: str) -> str:
        return namespace if namespace == "default" else f"{self.tag}-{namespace}"


def quota_cases() -> list[QuotaCase]:
    return [
        QuotaCase(
            "quota-readme-two-quotas",
            "max cpu 2 and 4, min cpu 1 each; three 900m pods in q1 (the reference's README;"
            " nodes of two sizes, so that the first pod's node is no tie)",
            tag="readme",
        )
        .quota("q1", {"cpu": "1"}, {"cpu": "2"})
        .quota("q2", {"cpu": "1"}, {"cpu": "4"})
        .node("node-0", cpu="4")
        .node("node-1", cpu="8")
        .pend("p1", None, "900m", namespace="q1")
        .pend("p2", None, "900m", namespace="q1")
        .pend("p3", None, "900m", namespace="q1"),
        QuotaCase(
            "quota-over-max",
            "q1's max is cpu 2: 100m + 1400m binds, 1 more cpu is over max",
            tag="overmax",
        )
        .quota("q1", {"cpu": "4"}, {"cpu": "2"})
        .quota("q2", {"cpu": "4"}, {"cpu": "4"})
        .node("node-0", cpu="8")
        .seed("q1")
        .seed("q2")
        .pend("a", None, "1400m", namespace="q1")
        .pend("b", None, "1", namespace="q1"),
        QuotaCase(
            "quota-min-above-max",
            "q1's min (cpu 4) is above its max (cpu 2): v0.28.9 uses both as given, so q1 is"
            " held to 2 while its 4 still counts in the sum of mins (5) that q2 borrows against",
            tag="minmax",
        )
        .quota("q1", {"cpu": "4"}, {"cpu": "2"})
        .quota("q2", {"cpu": "1"}, {"cpu": "8"})
        .node("node-0", cpu="8")
        .seed("q1")
        .seed("q2")
        .pend("a", None, "1500m", namespace="q1")
        .pend("b", None, "1", namespace="q1")
        .pend("c1", None, "1", namespace="q2")
        .pend("c2", None, "1", namespace="q2")
        .pend("c3", None, "1", namespace="q2")
        .pend("c4", None, "1", namespace="q2"),
        QuotaCase(
            "quota-borrowing-within-min-sum",
            "q1 (min 1, max 4) borrows q2's unused min (3): its pods bind past its own min"
            " until its max (4, also the sum of mins) is reached",
            tag="borrow",
        )
        .quota("q1", {"cpu": "1"}, {"cpu": "4"})
        .quota("q2", {"cpu": "3"}, {"cpu": "4"})
        .node("node-0", cpu="8")
        .run("r1", "node-0", None, "2", namespace="q1")
        .seed("q2", cpu="0")
        .pend("a", None, "1", namespace="q1")
        .pend("b", None, "1", namespace="q1")
        .pend("c", None, "1", namespace="q1"),
        QuotaCase(
            "quota-memory-unlisted-in-max",
            "a max that lists only cpu allows no memory: a pod requesting memory is over max",
            tag="mem",
        )
        .quota("q1", {"cpu": "1", "memory": "1Gi"}, {"cpu": "4"})
        .quota("q2", {"cpu": "4", "memory": "4Gi"}, {"cpu": "4", "memory": "4Gi"})
        .node("node-0", cpu="8")
        .seed("q1")
        .seed("q2")
        .pend("cpu-only", None, "1", namespace="q1")
        .pend("with-memory", None, "1", namespace="q1", memory="64Mi"),
        QuotaCase(
            "quota-no-max-no-min",
            "a quota without min or max: unlimited max, min 0, so any use is over the min sum",
            tag="nominmax",
        )
        .quota("q1")
        .quota("q2", {"cpu": "1"}, {"cpu": "4"})
        .node("node-0", cpu="8")
        .seed("q2")
        .pend("a", None, "500m", namespace="q1")
        .pend("b", None, "600m", namespace="q1"),
        QuotaCase(
            "quota-first-by-name-of-two-in-a-namespace",
            "q1 has two quotas: b-small (max cpu 1) created first, a-large (max 8) second;"
            " the first by name counts",
            tag="byname",
        )
        .quota("q1", {"cpu": "4"}, {"cpu": "1"}, name="b-small")
        .quota("q1", {"cpu": "4"}, {"cpu": "8"}, name="a-large")
        .node("node-0", cpu="8")
        .seed("q1")
        .pend("a", None, "2", namespace="q1"),
        QuotaCase(
            "quota-unknown-until-a-pod-is-placed",
            "q1's first pod is not checked (no q1 pod placed yet), the second is: over max",
            tag="unknown",
        )
        .quota("q1", {"cpu": "4"}, {"cpu": "1"})
        .node("node-0", cpu="8")
        .pend("first", None, "2", namespace="q1")
        .pend("second", None, "100m", namespace="q1"),
        QuotaCase(
            "quota-namespace-without-quota",
            "a pod in a namespace without a quota passes CapacityScheduling whatever others use",
            tag="noquota",
        )
        .quota("q1", {"cpu": "1"}, {"cpu": "1"})
        .namespace("free")
        .node("node-0", cpu="4")
        .run("r1", "node-0", None, "1", namespace="q1")
        .pend("a", None, "2", namespace="free"),
        QuotaCase(
            "quota-preempts-a-borrower",
            "q1 is under its min and the node is full; q2 borrows over its min: q2's least "
            "important pod is the victim (equal priorities, so DefaultPreemption finds none)",
            tag="borrower",
        )
        .quota("q1", {"cpu": "2"}, {"cpu": "4"})
        .quota("q2", {"cpu": "2"}, {"cpu": "4"})
        .node("node-0", cpu="4")
        .run("q1-old", "node-0", None, "1", namespace="q1")
        .run("q2-a", "node-0", None, "1", namespace="q2")
        .run("q2-b", "node-0", None, "1", namespace="q2")
        .run("q2-c", "node-0", None, "1", namespace="q2")
        .pend("q1-new", None, "1", namespace="q1"),
        QuotaCase(
            "quota-preemption-stops-at-the-borrowers-min",
            "q1 needs 2 cpu on a full node; q2 is 1 over its min: one q2 pod is not enough",
            tag="stopmin",
        )
        .quota("q1", {"cpu": "3"}, {"cpu": "4"})
        .quota("q2", {"cpu": "1"}, {"cpu": "4"})
        .node("node-0", cpu="3")
        .run("q2-a", "node-0", None, "1", namespace="q2")
        .run("q2-b", "node-0", None, "1", namespace="q2")
        .run("q1-old", "node-0", None, "1", namespace="q1")
        .pend("q1-new", None, "2", namespace="q1"),
        QuotaCase(
            "quota-default-preemption-goes-first",
            "q1 is over max with the pod; lower-priority q1 pods fill the node: DefaultPreemption"
            " (quota-blind, ahead of CapacityScheduling in the chart's profile) preempts",
            tag="dpfirst",
        )
        .quota("q1", {"cpu": "1"}, {"cpu": "3"})
        .quota("q2", {"cpu": "8"}, {"cpu": "8"})
        .node("node-0", cpu="3")
        .seed("q2", cpu="0")
        .run("low-a", "node-0", 1, "1", namespace="q1")
        .run("low-b", "node-0", 1, "1", namespace="q1")
        .run("low-c", "node-0", 1, "1", namespace="q1")
        .pend("high", 10, "1", namespace="q1"),
        QuotaCase(
            "quota-blind-default-preemption-across-namespaces",
            "the quotas allow the pod and the node is full of lower-priority pods of q1 and q2:"
            " DefaultPreemption, ahead of CapacityScheduling, evicts q2's (it started later)",
            tag="blind",
        )
        .quota("q1", {"cpu": "1"}, {"cpu": "4"})
        .quota("q2", {"cpu": "8"}, {"cpu": "8"})
        .node("node-0", cpu="4")
        .run("q1-low", "node-0", 1, "2", namespace="q1")
        .run("q2-low", "node-0", 1, "2", namespace="q2")
        .pend("q1-high", 10, "2", namespace="q1"),
    ]


def all_cases() -> list[dict[str, Any]]:
    out = [c.build() for c in [*quota_cases(), *numa_cases()]]
    ids = [c["id"] for c in out]
    if len(set(ids)) != len(ids):
        raise ValueError("duplicate schedplugins case ids")
    return out
